// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.
/// <reference path="./modhost-plugin-types.d.ts" />
declare module 'modhost:plugin/mods@0.1.2' {
  /**
   * Delivers `payload` (JSON by convention) on `topic` to every mod that subscribes to it (its
   * `guest.declare` names the topic), in load order, the emitter excepted, each to its
   * `guest.on-event`, and waits for them. A subscriber that fails is logged, counted against it
   * (`events_failed`, and strikes toward its quarantine) and skipped. Answers how many subscribers
   * handled the event without failing.
   * 
   * A subscriber's time is its own: each runs under its own deadline, and the emitter's deadline
   * stops while it waits, so a slow subscriber delays the emitter's call but never makes it fail.
   * 
   * Topics are 1-128 characters of `[a-z0-9._/-]`, and have owners: a mod emits its own topics
   * (its id, then `.` or `/`: `my-mod.thing-happened`) and others only under an `emit` grant in
   * its `mod.toml` (the game's `profile.created` is the game's). Every subscriber sees the
   * emitter's id, set by the host, as the event's `source`. Payloads are at most 1 MiB.
   * 
   * Errors: `invalid` for a bad topic, or when a subscriber is already hearing `topic` in this
   * chain (a cycle; the message shows the chain; nothing is delivered); `denied` for a topic not
   * the mod's own without the grant, or one another mod's grant names (the message says which;
   * nothing is delivered); `too-large` past the payload cap or the nesting bound.
   */
  export function emit(topic: string, payload: Uint8Array): number;
  /**
   * Calls `function`, which mod `target` provides (its `guest.declare` names it), with `payload`,
   * and answers what it returned. The caller needs `call = ["<target>"]` under `[grants]` in its
   * `mod.toml`. The callee sees the caller's id and the request's session.
   * 
   * Errors: `denied` without the grant (the message names it); `not-found` when `target` is not
   * loaded or does not provide `function`; `invalid` when `target` is already running
   * `function` in this chain (a cycle); `too-large` past the payload cap or the nesting bound; the callee's own error
   * value as it returned it; `failed` when the callee trapped, ran out its deadline or is
   * quarantined.
   */
  export function call(target: string, function_: string, payload: Uint8Array): Uint8Array;
  /**
   * `call`, for session `session` (24 lower-case hex digits) rather than the request's: the host
   * takes that session's lock first (unless this chain holds it already) and the callee sees that
   * session. How one player's request changes another player's profile safely. The lock is waited
   * for at most 2 seconds.
   * 
   * Errors: as `call`; `invalid` for a malformed session id; `conflict` when the lock stayed taken.
   */
  export function callForSession(session: string, target: string, function_: string, payload: Uint8Array): Uint8Array;
  export type Error = import('modhost:plugin/types@0.1.2').Error;
}
