// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.
/// <reference path="./modhost-plugin-types.d.ts" />
declare module 'modhost:plugin/guest@0.1.2' {
  /**
   * Called once at load, after `routes` and before `init`; the answer is fixed for the life of the
   * loaded mod.
   */
  export function declare(): Declarations;
  /**
   * Runs a before-hook. `hook` is the hook's path as declared; `request.route` is the owner's.
   */
  export function before(hook: string, request: Request): Verdict;
  /**
   * Runs an after-hook on `response`, the answer so far (its body empty unless the hook declared
   * `body`, and then with every db reference read into bytes). `none`: leave it as it is.
   */
  export function after(hook: string, request: Request, response: Response): ResponseEdit | undefined;
  /**
   * Hears one event, under this mod's own deadline. An error (or a trap, or the deadline) is
   * logged and counted against this mod; the emitter is not told.
   */
  export function onEvent(event: Event): void;
  /**
   * Runs one of the mod's functions; the answer (or the error) goes back to the caller.
   */
  export function invoke(invocation: Invocation): Uint8Array;
  export type Request = import('modhost:plugin/types@0.1.2').Request;
  export type Response = import('modhost:plugin/types@0.1.2').Response;
  export type Route = import('modhost:plugin/types@0.1.2').Route;
  export type Chunk = import('modhost:plugin/types@0.1.2').Chunk;
  export type Error = import('modhost:plugin/types@0.1.2').Error;
  /**
   * When a hook runs: before the route's owner, or after it.
   * # Variants
   * 
   * ## `"before"`
   * 
   * Sees the request; may change its headers or body, or answer in the owner's place.
   * ## `"after"`
   * 
   * Sees the request and the answer; may change its status, headers or body.
   */
  export type Phase = 'before' | 'after';
  /**
   * A hook on a route another mod owns. Declaring one needs `hook = ["<path>"]` under `[grants]`
   * in `mod.toml` (the path itself, or a prefix of it ending in `/`): a hook reads requests that
   * may carry a player's session.
   */
  export interface Hook {
    /**
     * The paths it hooks, matched like a route (exact or prefix, never the query).
     */
    route: Route,
    /**
     * Before or after the owner.
     */
    phase: Phase,
    /**
     * Among hooks the load order does not order (neither mod requires or loads after the
     * other), a higher priority runs first; ties go to the smaller mod id.
     */
    priority: number,
    /**
     * After-hooks only: whether it reads the answer's body. Without it the hook sees the
     * answer with an empty body, and an answer built from db references is never materialised.
     */
    body: boolean,
  }
  /**
   * What the mod takes part in. Asked once at load, after `routes`.
   */
  export interface Declarations {
    /**
     * Its hooks; at most 64.
     */
    hooks: Array<Hook>,
    /**
     * The topics it hears (`mods.emit`); at most 64.
     */
    subscriptions: Array<string>,
    /**
     * The functions it provides (`mods.call`), 1-64 characters of `[a-z0-9._-]`; at most 64.
     */
    functions: Array<string>,
  }
  /**
   * A before-hook's changes to the request: what is `some` replaces the request's.
   */
  export interface RequestEdit {
    /**
     * The whole new header list (names in lower case). The session stays the request's.
     */
    headers?: Array<[string, string]>,
    /**
     * The new body.
     */
    body?: Uint8Array,
  }
  /**
   * What a before-hook decided.
   */
  export type Verdict = VerdictProceed | VerdictEdit | VerdictAnswer;
  /**
   * Go on with the request as it is.
   */
  export interface VerdictProceed {
    tag: 'proceed',
  }
  /**
   * Go on with the request changed.
   */
  export interface VerdictEdit {
    tag: 'edit',
    val: RequestEdit,
  }
  /**
   * Answer this instead: the owner and the later before-hooks do not run; after-hooks do.
   */
  export interface VerdictAnswer {
    tag: 'answer',
    val: Response,
  }
  /**
   * An after-hook's changes to the answer: what is `some` replaces the answer's.
   */
  export interface ResponseEdit {
    /**
     * The new status.
     */
    status?: number,
    /**
     * The whole new header list.
     */
    headers?: Array<[string, string]>,
    /**
     * The new body.
     */
    body?: Array<Chunk>,
  }
  /**
   * An event delivered to a subscriber.
   */
  export interface Event {
    /**
     * Its topic.
     */
    topic: string,
    /**
     * What the emitter sent.
     */
    payload: Uint8Array,
    /**
     * The id of the mod that emitted it, set by the host (an emitter cannot choose it). A mod
     * may emit another's topic under an `emit` grant: check the source before acting on an
     * event (the game's events come from `emulator`).
     */
    source: string,
    /**
     * The session of the request it happens in, if any.
     */
    session?: string,
  }
  /**
   * A call into one of the mod's functions.
   */
  export interface Invocation {
    /**
     * Which function (one the mod declared).
     */
    'function': string,
    /**
     * What the caller sent.
     */
    payload: Uint8Array,
    /**
     * The caller's mod id.
     */
    caller: string,
    /**
     * The session it is for: the request's, or the one `call-for-session` named.
     */
    session?: string,
  }
}
