// Errors as values: every host call that fails throws a `ModError` carrying the WIT `error` variant
// (`tag` and message), and a handler that throws one answers with it: the host turns the case into
// the HTTP status it names (`not-found` 404, `invalid` 400, `denied` 403, `conflict` 409, `too-large`
// 413, the rest 500).

import type { Error as WitError } from "modhost:plugin/types@0.1.2";

/** The WIT error cases. */
export type ErrorTag = WitError["tag"];

const TAGS: readonly ErrorTag[] = [
  "not-found",
  "invalid",
  "wrong-kind",
  "unreadable",
  "too-large",
  "denied",
  "conflict",
  "io",
  "failed",
];

/** A WIT `error`: its case (`tag`) and its sentence. Thrown by the SDK's host calls; throw one from a
 * handler to answer with its status. */
export class ModError extends Error {
  readonly tag: ErrorTag;
  /** The WIT variant, as componentize-js lowers a thrown value with a `payload`. */
  readonly payload: WitError;

  constructor(tag: ErrorTag, message: string) {
    super(`${tag}: ${message}`);
    this.name = "ModError";
    this.tag = tag;
    this.payload = { tag, val: message } as WitError;
    // An own property, as componentize-js looks for: `error.payload` is what the host receives.
    Object.defineProperty(this, "payload", { value: this.payload, enumerable: true });
  }

  /** The sentence without the case. */
  get reason(): string {
    return this.payload.val;
  }

  /** Whether `value` is a WIT error variant (`{tag, val}` with a known case). */
  static isVariant(value: unknown): value is WitError {
    const v = value as { tag?: unknown; val?: unknown } | null;
    return !!v && typeof v === "object" && TAGS.includes(v.tag as ErrorTag) && typeof v.val === "string";
  }

  /** Any thrown value as a `ModError`: a host call's error (componentize-js throws an `Error` whose
   * `payload` is the variant), a bare variant, a `ModError` as it is, and anything else (a
   * `TypeError`, a string) as `failed` with its message. */
  static from(thrown: unknown): ModError {
    if (thrown instanceof ModError) return thrown;
    const payload = (thrown as { payload?: unknown } | null)?.payload;
    if (ModError.isVariant(payload)) return new ModError(payload.tag, payload.val);
    if (ModError.isVariant(thrown)) return new ModError(thrown.tag, thrown.val);
    const message = thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : String(thrown);
    return new ModError("failed", message);
  }
}

/** Answers 404: what was asked for is not there. */
export const notFound = (message: string) => new ModError("not-found", message);
/** Answers 400: the request is malformed. */
export const invalid = (message: string) => new ModError("invalid", message);
/** Answers 500: a value of the wrong kind. */
export const wrongKind = (message: string) => new ModError("wrong-kind", message);
/** Answers 500: a stored value exists but could not be read. */
export const unreadable = (message: string) => new ModError("unreadable", message);
/** Answers 413: over a limit. */
export const tooLarge = (message: string) => new ModError("too-large", message);
/** Answers 403: not allowed. */
export const denied = (message: string) => new ModError("denied", message);
/** Answers 409: another write came first. */
export const conflict = (message: string) => new ModError("conflict", message);
/** Answers 500: the host's I/O failed. */
export const io = (message: string) => new ModError("io", message);
/** Answers 500: the mod itself failed. */
export const failed = (message: string) => new ModError("failed", message);

/** Runs a host call, turning what it throws into a `ModError`. */
export function hostCall<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw ModError.from(e);
  }
}
