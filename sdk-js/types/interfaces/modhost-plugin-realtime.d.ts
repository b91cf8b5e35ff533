// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.
/// <reference path="./modhost-plugin-sockets.d.ts" />
/// <reference path="./modhost-plugin-types.d.ts" />
declare module 'modhost:plugin/realtime@0.1.2' {
  /**
   * Called once at load; the answer is fixed for the life of the loaded mod.
   */
  export function declareRealtime(): RealtimeDeclarations;
  /**
   * A client asked to open a websocket on one of the mod's socket routes. `request` is the upgrade
   * request (its headers and session: this is where a mod authenticates); `connection` is the id the
   * connection will have if accepted. Runs under the request's session lock, as `handle` does. An
   * error refuses the connection, answered as a failed `handle` is. Past the mod's cap of open
   * connections (256 by default) the upgrade is answered 503 and `accept` is not called; an upgrade
   * a browser sent from a page of another origin (its `Origin` is not the server's own) is answered
   * 403 and `accept` is not called either. Once `accept` accepted, `on-close` follows whatever
   * happens, even when the client drops the connection before the upgrade completed (1006).
   */
  export function accept(connection: string, request: Request): AcceptVerdict;
  /**
   * A message arrived on one of the mod's connections. Messages of one connection are handled one
   * at a time, in order, each under the mod's call deadline, without a session lock. An error, a
   * trap or the deadline closes the connection (1011; 1013 when the server had no room for the
   * call), and `on-close` then hears that code.
   */
  export function onMessage(connection: string, message: Message): void;
  /**
   * The connection ended, other than by the mod's own `sockets.close`: the client closed it
   * (`code` is its close code; 1005 when its close frame had none), it ended without a close
   * or before its upgrade completed (1006), the server is stopping (1001), the mods were reloaded
   * (1012), its client stopped reading (1008), it stopped answering pings or a message failed
   * (1011). Called once per connection, after its socket ended. The connection is gone: sending
   * on it is `not-found`.
   */
  export function onClose(connection: string, code: number, reason: string): void;
  /**
   * Runs a timer. An error is logged and counted; a periodic timer keeps its schedule.
   */
  export function onTimer(timer: Fired): void;
  export type Request = import('modhost:plugin/types@0.1.2').Request;
  export type Response = import('modhost:plugin/types@0.1.2').Response;
  export type Route = import('modhost:plugin/types@0.1.2').Route;
  export type Error = import('modhost:plugin/types@0.1.2').Error;
  export type Message = import('modhost:plugin/sockets@0.1.2').Message;
  /**
   * A timer that fires every `every-s` seconds, from the mod's load on.
   */
  export interface Periodic {
    /**
     * Its name (1-64 characters of `[a-z0-9._-]`), which `on-timer` sees.
     */
    name: string,
    /**
     * Seconds between two firings: 1 to 86400. A firing that is still running when the next is
     * due makes the next wait for it: a timer never overlaps itself.
     */
    everyS: number,
  }
  /**
   * What the mod serves in real time. Asked once at load, after `guest.declare`.
   */
  export interface RealtimeDeclarations {
    /**
     * Its websocket routes (matched like routes; at most 16). An upgrade on one calls `accept`.
     */
    sockets: Array<Route>,
    /**
     * Its periodic timers; at most 16.
     */
    timers: Array<Periodic>,
  }
  /**
   * What `accept` decided.
   */
  export type AcceptVerdict = AcceptVerdictAccept | AcceptVerdictRefuse;
  /**
   * Open the connection: later messages on it reach `on-message` with this id.
   */
  export interface AcceptVerdictAccept {
    tag: 'accept',
  }
  /**
   * Refuse it with this answer (its status should be 4xx); the connection then closes.
   */
  export interface AcceptVerdictRefuse {
    tag: 'refuse',
    val: Response,
  }
  /**
   * A timer that came due.
   */
  export interface Fired {
    /**
     * The timer's name.
     */
    name: string,
    /**
     * A one-shot timer's id (as `timers.schedule` answered it); `none` for a periodic timer.
     */
    id?: string,
    /**
     * The session it names, if any: its lock is held while `on-timer` runs.
     */
    session?: string,
    /**
     * What `timers.schedule` was given (empty for a periodic timer).
     */
    payload: Uint8Array,
    /**
     * When it was due, in ms since the Unix epoch.
     */
    dueMs: bigint,
    /**
     * How late it fires, ms: large when it came due while the server was off.
     */
    lateMs: bigint,
  }
}
