// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.
/// <reference path="./modhost-plugin-types.d.ts" />
declare module 'modhost:plugin/push@0.1.2' {
  /**
   * Pushes `message` (JSON text: the SPT client parses every notification as a JSON object with a
   * `type`) to `session` (24 lower-case hex digits).
   * 
   * Errors: `invalid` for a malformed session id or a message that is not JSON; `too-large` over
   * the message cap (256 KiB), or when the message must be queued and the mod's share of the
   * queues or the server's bound is full (the message says which; nothing queued is dropped for
   * it, and a push fits again once players connect or poll); `denied` for another session than
   * the one being handled, without the grant (the message names it).
   */
  export function send(session: string, message: string): Delivery;
  /**
   * Pushes `message` to every session with a socket open (none is queued). Answers how many sockets
   * it was written to.
   * 
   * Errors: as `send`; `denied` without `push = "broadcast"`.
   */
  export function broadcast(message: string): number;
  /**
   * Whether `session` has a notifier socket open now.
   * 
   * Errors: `invalid` for a malformed session id.
   */
  export function connected(session: string): boolean;
  export type Error = import('modhost:plugin/types@0.1.2').Error;
  /**
   * What became of a pushed message.
   * # Variants
   * 
   * ## `"delivered"`
   * 
   * Written to the session's open socket (the client may still be reading it).
   * ## `"queued"`
   * 
   * The session has no socket open: kept for it until it connects or polls.
   */
  export type Delivery = 'delivered' | 'queued';
}
