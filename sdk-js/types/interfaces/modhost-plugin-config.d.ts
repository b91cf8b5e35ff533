// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.
/// <reference path="./modhost-plugin-types.d.ts" />
declare module 'modhost:plugin/config@0.1.2' {
  /**
   * The JSON text of the value at `path` (the db's dotted paths; the empty path is the whole
   * configuration, `{}` when the mod has none).
   * 
   * Errors: `not-found` when nothing is at `path`; `invalid` when the path is malformed.
   */
  export function get(path: string): string;
  export type Error = import('modhost:plugin/types@0.1.2').Error;
}
