// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.
declare module 'modhost:plugin/log@0.1.2' {
  /**
   * Write one line. Never fails; a very long message is cut at 8 KiB.
   */
  export function log(level: Level, message: string): void;
  /**
   * How important a line is. `trace` and `debug` are dropped unless the host runs with a verbose filter.
   * # Variants
   * 
   * ## `"trace"`
   * 
   * ## `"debug"`
   * 
   * ## `"info"`
   * 
   * ## `"warn"`
   * 
   * ## `"error"`
   */
  export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';
}
