// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.
declare module 'modhost:plugin/types@0.1.2' {
  /**
   * One HTTP request, as the host hands it to `handle`.
   */
  export interface Request {
    /**
     * The HTTP method in upper case: `GET`, `POST`, ...
     */
    method: string,
    /**
     * The request target exactly as the client sent it: path and query, e.g. `/client/locale/en?x=1`.
     */
    url: string,
    /**
     * The route that matched, exactly as the mod declared it in `routes`, e.g. `/client/locale/`.
     * For a prefix route the rest of the path is `url` minus this prefix (and minus the query).
     */
    route: string,
    /**
     * The session id from `Cookie: PHPSESSID=<id>` or a `sessionid` header: always 24 lower-case hex
     * digits (the host refuses any other id with 400 before a mod runs). While `handle` runs, the host
     * holds this session's lock, so two requests of one session never run at once.
     */
    session?: string,
    /**
     * The request headers, in the order received, names in lower case. Values that are not UTF-8 are
     * passed with the bad bytes replaced by U+FFFD.
     */
    headers: Array<[string, string]>,
    /**
     * The body, already inflated when the client sent it zlib-compressed.
     */
    body: Uint8Array,
  }
  /**
   * One part of a response body. The host concatenates the parts in order.
   */
  export type Chunk = ChunkBytes | ChunkDb;
  /**
   * These bytes, as they are.
   */
  export interface ChunkBytes {
    tag: 'bytes',
    val: Uint8Array,
  }
  /**
   * The JSON text of the db value at this dotted path, read by the host from the db snapshot the
   * response is built from. A 4 MiB table answered this way never crosses into the guest. If the
   * path does not exist when the host builds the response, the request fails with 500 naming it.
   */
  export interface ChunkDb {
    tag: 'db',
    val: string,
  }
  /**
   * What `handle` answers.
   */
  export interface Response {
    /**
     * The HTTP status code: 200-999. A 1xx is interim in HTTP/1.1 (101 even switches protocols), so it
     * is no answer: the host refuses it (and any number outside that range) with 500 naming the mod.
     */
    status: number,
    /**
     * Extra response headers. `content-type` defaults to `application/json` when absent. The host owns
     * the framing: `content-length`, `transfer-encoding` and `connection` are refused (500 naming them).
     */
    headers: Array<[string, string]>,
    /**
     * The body, as parts.
     */
    body: Array<Chunk>,
  }
  /**
   * How a route claims URLs. The query string is never part of the match.
   * # Variants
   * 
   * ## `"exact"`
   * 
   * The path must equal the route.
   * ## `"prefix"`
   * 
   * The path must start with the route (a byte prefix, not segment-aware).
   */
  export type MatchKind = 'exact' | 'prefix';
  /**
   * A route a mod claims. Exact beats prefix; among prefixes the longest wins. Two mods claiming the
   * same path with the same kind is a load error naming both.
   */
  export interface Route {
    /**
     * The path, starting with `/`, without a query string.
     */
    path: string,
    /**
     * Exact or prefix.
     */
    kind: MatchKind,
  }
  /**
   * Every error a host call or a mod export can answer. Each case carries a sentence saying what and why.
   * Returned by a mod from `handle` (or from `accept`, refusing a websocket), each case answers the
   * HTTP status its text names ("answers 404"), with a JSON body naming the mod and the reason.
   */
  export type Error = ErrorNotFound | ErrorInvalid | ErrorWrongKind | ErrorUnreadable | ErrorTooLarge | ErrorDenied | ErrorConflict | ErrorIo | ErrorFailed;
  /**
   * The db path or store key does not exist. From `handle`: answers 404.
   */
  export interface ErrorNotFound {
    tag: 'not-found',
    val: string,
  }
  /**
   * An argument is malformed: a path with a bad escape or an empty member name, a store key outside
   * `[A-Za-z0-9._-]`, JSON text that does not parse or nests too deep. From `handle`: answers 400.
   */
  export interface ErrorInvalid {
    tag: 'invalid',
    val: string,
  }
  /**
   * The value exists but is of the wrong kind for the call: `keys` on an array or a scalar, a patch
   * under a path whose parent is a scalar or an array. From `handle`: answers 500.
   */
  export interface ErrorWrongKind {
    tag: 'wrong-kind',
    val: string,
  }
  /**
   * A stored value exists but could not be read (permissions, I/O error). It is NOT missing: a mod
   * must never create a fresh value over one it could not read. From `handle`: answers 500.
   */
  export interface ErrorUnreadable {
    tag: 'unreadable',
    val: string,
  }
  /**
   * A value or a call is over a limit (the store's value cap, for example). From `handle`: answers 413.
   */
  export interface ErrorTooLarge {
    tag: 'too-large',
    val: string,
  }
  /**
   * The mod has no grant for this call (`[grants]` in its `mod.toml`); the message names the grant.
   * From `handle`: answers 403.
   */
  export interface ErrorDenied {
    tag: 'denied',
    val: string,
  }
  /**
   * A compare-and-set found another version: another write came first. Nothing was written.
   * From `handle`: answers 409.
   */
  export interface ErrorConflict {
    tag: 'conflict',
    val: string,
  }
  /**
   * The host failed to do I/O on the mod's behalf (disk full, for example); nothing was changed.
   * From `handle`: answers 500.
   */
  export interface ErrorIo {
    tag: 'io',
    val: string,
  }
  /**
   * Returned by a mod from `init` or `handle`: the mod itself failed. The host logs it. From
   * `handle`: answers 500.
   */
  export interface ErrorFailed {
    tag: 'failed',
    val: string,
  }
}
