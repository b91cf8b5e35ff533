// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.
/// <reference path="./modhost-plugin-types.d.ts" />
declare module 'modhost:plugin/store@0.1.2' {
  /**
   * The value under `key`: `some(bytes)` when present, `none` when the key was never written (or was
   * deleted).
   * 
   * Errors: `unreadable` when the key exists but could not be read. That is NOT "missing": a mod must
   * never create a fresh value (a new profile) over one it could not read. `invalid` for a bad key.
   */
  export function get(key: string): Uint8Array | undefined;
  /**
   * The value under `key` with its version, `none` when the key was never written. For keys several
   * sessions share: read with this, then write with `set-if-version`.
   * 
   * Errors: as `get`.
   */
  export function getVersioned(key: string): Versioned | undefined;
  /**
   * Store `value` under `key`, replacing any old value atomically. Answers the new version.
   * 
   * Errors: `invalid` for a bad key; `too-large` over the value cap or the namespace's quota; `io` when the commit failed: the
   * old value is intact, unless (in durable mode) only the final directory sync failed, when the
   * message says the new value is in place but may not survive a power loss.
   */
  export function set(key: string, value: Uint8Array): bigint;
  /**
   * Store `value` under `key` only if the key is still at version `expected` (`none`: only if the
   * key does not exist). Answers the new version.
   * 
   * Errors: `conflict` when another write came first (nothing is written; read again and retry);
   * otherwise as `set`.
   */
  export function setIfVersion(key: string, value: Uint8Array, expected: bigint | undefined): bigint;
  /**
   * Remove `key`. Answers whether it existed.
   * 
   * Errors: `invalid` for a bad key; `io` when the removal failed.
   */
  export { _delete as delete };
  function _delete(key: string): boolean;
  /**
   * The keys that start with `prefix` (plain byte prefix; empty lists all), sorted.
   * 
   * Errors: `io` when the namespace could not be listed.
   */
  export function list(prefix: string): Array<string>;
  /**
   * Documents: a value that is a JSON object can be read and changed by path without moving the
   * whole value across, so a call costs what it touches, not the document's size. Paths are the db's:
   * dotted member names, `\.` and `\\` escaping a dot and a backslash; the empty path is the whole
   * document. A path that names nothing (an absent member, or a member of an array or a scalar) reads
   * as `null`, which is also what a merge patch leaves when it removes a member.
   * The JSON text of the value at `path` in the document under `key`, with the key's version (the
   * same version `get-versioned` answers; give it to `doc-patch-if-version`). `none` when the key was
   * never written.
   * 
   * Errors: `invalid` for a bad key or path, or when the value is not a JSON object; as `get`
   * otherwise.
   */
  export function docGet(key: string, path: string): Versioned | undefined;
  /**
   * The member names of the object at `path` in the document under `key`, in document order. Empty
   * when the key or the path names nothing.
   * 
   * Errors: `invalid` when `path` names a value that is not an object; as `doc-get` otherwise.
   */
  export function docKeys(key: string, path: string): Array<string>;
  /**
   * Applies `patch` (JSON) as an RFC 7396 merge patch at `path` in the document under `key`,
   * creating missing parents (and the document itself, as `{}`, when the key is absent). An atomic
   * commit like `set`: after a crash the document holds every patch that was answered. Answers the
   * key's new version.
   * 
   * Errors: `invalid` for a bad key or path, a patch that is not JSON, a parent that is not an
   * object, or a value that is not a JSON object; `too-large` when the document would pass the value
   * cap or the namespace its quota; `io` when the commit failed (nothing changed).
   */
  export function docPatch(key: string, path: string, patch: Uint8Array): bigint;
  /**
   * `doc-patch` only if the key is still at version `expected`.
   * 
   * Errors: `conflict` when another write came first (nothing is written); otherwise as `doc-patch`.
   */
  export function docPatchIfVersion(key: string, path: string, patch: Uint8Array, expected: bigint): bigint;
  /**
   * The same calls in another mod's namespace (`namespace` is that mod's id), allowed by the
   * caller's `[grants]` in `mod.toml`: `store_read` for the reads, `store_write` for all of them. Its
   * own namespace needs no grant.
   * 
   * Errors: `denied` without the grant (the message names it); otherwise as the calls above.
   */
  export function nsGet(namespace: string, key: string): Uint8Array | undefined;
  /**
   * `get-versioned` in `namespace`.
   */
  export function nsGetVersioned(namespace: string, key: string): Versioned | undefined;
  /**
   * `set` in `namespace`.
   */
  export function nsSet(namespace: string, key: string, value: Uint8Array): bigint;
  /**
   * `set-if-version` in `namespace`.
   */
  export function nsSetIfVersion(namespace: string, key: string, value: Uint8Array, expected: bigint | undefined): bigint;
  /**
   * `delete` in `namespace`.
   */
  export function nsDelete(namespace: string, key: string): boolean;
  /**
   * `list` in `namespace`.
   */
  export function nsList(namespace: string, prefix: string): Array<string>;
  /**
   * `doc-get` in `namespace`.
   */
  export function nsDocGet(namespace: string, key: string, path: string): Versioned | undefined;
  /**
   * `doc-keys` in `namespace`.
   */
  export function nsDocKeys(namespace: string, key: string, path: string): Array<string>;
  /**
   * `doc-patch` in `namespace`.
   */
  export function nsDocPatch(namespace: string, key: string, path: string, patch: Uint8Array): bigint;
  /**
   * `doc-patch-if-version` in `namespace`.
   */
  export function nsDocPatchIfVersion(namespace: string, key: string, path: string, patch: Uint8Array, expected: bigint): bigint;
  export type Error = import('modhost:plugin/types@0.1.2').Error;
  /**
   * A value and the version it carries. The version changes with every commit of the key (and is
   * never reused, even across restarts), so it tells whether someone else wrote in between.
   */
  export interface Versioned {
    /**
     * The value's bytes.
     */
    value: Uint8Array,
    /**
     * Its version.
     */
    version: bigint,
  }
}
