// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.
/// <reference path="./modhost-plugin-types.d.ts" />
declare module 'modhost:plugin/db@0.1.2' {
  /**
   * The JSON text of the value at `path`.
   * 
   * Errors: `not-found` when a member on the path is absent, when the path goes through an array or a
   * scalar (the message says which), or when the path is empty; `invalid` when the path is malformed.
   */
  export function get(path: string): string;
  /**
   * Whether a value is at `path`, without copying it: how a mod checks an optional table (a locale,
   * a handbook) before answering it by reference.
   * 
   * Errors: `invalid` when the path is malformed. An absent member, a path through an array or a
   * scalar, and the empty path are all `false`.
   */
  export function exists(path: string): boolean;
  /**
   * The member names of the object at `path`, in document order.
   * 
   * Errors: `not-found` when absent (or empty path); `wrong-kind` when the value is an array or a
   * scalar; `invalid` for a bad path.
   */
  export function keys(path: string): Array<string>;
  /**
   * Apply `json` as an RFC 7396 merge patch to the value at `path`: objects merge recursively, `null`
   * deletes a member, anything else replaces. Missing parents are created as objects. The mod needs
   * a grant covering `path` (`db_write` under `[grants]` in its `mod.toml`).
   * 
   * Errors (each changes nothing): `invalid` when `json` does not parse, when the path is malformed,
   * or when the path's length plus the patch's nesting exceeds 128 levels; `wrong-kind` when a parent
   * on the path is an array or a scalar, or a patch at the root is not an object; `denied` without a
   * grant for `path` (the message says what to add); `too-large` when `json` is over the patch cap
   * (16 MiB unless the player set `db_patch_mib` in `modhost.toml`). A malformed path is `invalid`
   * before any grant is looked at.
   */
  export function patch(path: string, json: string): void;
  export type Error = import('modhost:plugin/types@0.1.2').Error;
}
