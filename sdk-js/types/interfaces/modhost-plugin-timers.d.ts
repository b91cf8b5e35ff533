// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.
/// <reference path="./modhost-plugin-types.d.ts" />
declare module 'modhost:plugin/timers@0.1.2' {
  /**
   * Schedules `name` (1-64 characters of `[a-z0-9._-]`) to fire once, `delay-ms` from now, with
   * `payload` (at most 64 KiB), for `session` (24 lower-case hex digits) when given. Answers the
   * timer's id. A mod has at most 1000 one-shot timers pending. `session` is the session of the
   * call scheduling it (a request's, an event's or call's, a timer's own); another one, or any
   * from a call without a session (`init`, a timer without one), needs `timers = "any"` under
   * `[grants]`.
   * 
   * Errors: `invalid` for a bad name or session id; `denied` for a session the call does not handle,
   * without the grant; `too-large` over the payload cap, the pending
   * cap, a delay over 30 days, or the store quota of the mod's timers; `io` when the timer could
   * not be stored (it is not scheduled).
   */
  export function schedule(name: string, delayMs: bigint, session: string | undefined, payload: Uint8Array): string;
  /**
   * Cancels the one-shot timer `id`. Answers whether it was pending (`false` for an id this mod
   * was never given). A firing already running is not stopped, but does not fire again.
   * 
   * Errors: `io` when the store could not be written.
   */
  export function cancel(id: string): boolean;
  export type Error = import('modhost:plugin/types@0.1.2').Error;
}
