// What StarlingMonkey (componentize-js's engine) gives every module besides ECMAScript itself, and
// the SDK uses: enough to type-check without the DOM library. `console` goes to the host's log.

declare class TextEncoder {
  encode(input?: string): Uint8Array;
}
declare class TextDecoder {
  constructor(label?: string);
  decode(input?: Uint8Array): string;
}
declare const console: {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  debug(...data: unknown[]): void;
};
