// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.
/// <reference path="./modhost-plugin-types.d.ts" />
declare module 'modhost:plugin/sockets@0.1.2' {
  /**
   * Queues `message` on `connection`; the host writes it in order. A connection whose client does
   * not read fills its queue and is closed (1008), so a slow client never makes the server hold
   * more than the queue.
   * 
   * Errors: `not-found` when the connection is closed or is not this mod's (the same words for an
   * id that never existed); `too-large` over the message cap (1 MiB) or when the connection's
   * queue (1 MiB) is full (the connection is then closed, 1008, and `on-close` hears it).
   */
  export function send(connection: string, message: Message): void;
  /**
   * Closes `connection` with a close frame carrying `code` (1000, or 3000-4999 for a mod's own
   * meaning) and `reason` (at most 123 bytes). `on-close` is not called for a close the mod asked for.
   * 
   * Errors: `not-found` as for `send`; `invalid` for a code outside those ranges or a longer reason.
   */
  export function close(connection: string, code: number, reason: string): void;
  export type Error = import('modhost:plugin/types@0.1.2').Error;
  /**
   * One websocket message.
   */
  export type Message = MessageText | MessageBinary;
  /**
   * A text message (UTF-8).
   */
  export interface MessageText {
    tag: 'text',
    val: string,
  }
  /**
   * A binary message.
   */
  export interface MessageBinary {
    tag: 'binary',
    val: Uint8Array,
  }
}
