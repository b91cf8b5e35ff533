// modhost's imports, wrapped: JSON in and out, errors as `ModError`s (see errors.ts). Each namespace
// (`db`, `store`, `config`, `log`, `events`, `calls`, `push`, `sockets`, `timers`) is one WIT
// interface of the `plugin` world; the raw bindings stay importable as `modhost:plugin/<name>@0.1.2`.

import * as witConfig from "modhost:plugin/config@0.1.2";
import * as witDb from "modhost:plugin/db@0.1.2";
import * as witLog from "modhost:plugin/log@0.1.2";
import * as witMods from "modhost:plugin/mods@0.1.2";
import * as witPush from "modhost:plugin/push@0.1.2";
import * as witSockets from "modhost:plugin/sockets@0.1.2";
import * as witStore from "modhost:plugin/store@0.1.2";
import * as witTimers from "modhost:plugin/timers@0.1.2";
import { hostCall, invalid } from "./errors.js";
import { toBytes } from "./http.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `value` as JSON bytes. */
export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** JSON bytes as a value; bytes that do not parse throw `invalid` naming `what`. */
export function decodeJson<T = unknown>(bytes: Uint8Array, what = "the value"): T {
  try {
    return JSON.parse(decoder.decode(bytes)) as T;
  } catch (e) {
    throw invalid(`${what} is not JSON: ${(e as Error).message}`);
  }
}

function parse<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw invalid(`${what} is not JSON: ${(e as Error).message}`);
  }
}

/** The game database: one JSON document read by dotted path (`db.path(...)` builds one). */
export const db = {
  /** The value at `path`, parsed. Throws `not-found` when absent. */
  get<T = unknown>(path: string): T {
    return parse<T>(hostCall(() => witDb.get(path)), `the db value at \`${path}\``);
  },
  /** The JSON text at `path`, as the db spells it. */
  getText(path: string): string {
    return hostCall(() => witDb.get(path));
  },
  /** Whether a value is at `path`, without copying it. */
  exists(path: string): boolean {
    return hostCall(() => witDb.exists(path));
  },
  /** The member names of the object at `path`, in document order. */
  keys(path: string): string[] {
    return hostCall(() => witDb.keys(path));
  },
  /** Merges `value` (RFC 7396) into the value at `path`; needs a `db_write` grant. */
  patch(path: string, value: unknown): void {
    hostCall(() => witDb.patch(path, JSON.stringify(value)));
  },
  /** A dotted path of `segments`, with `.` and `\` inside a segment escaped. */
  path(...segments: string[]): string {
    return segments.map((s) => s.replace(/\\/g, "\\\\").replace(/\./g, "\\.")).join(".");
  },
};

/** A stored value with its version (for compare-and-set). */
export interface Versioned<T> {
  value: T;
  version: bigint;
}

/** The calls of the store in one namespace: the mod's own, or another mod's under a grant. */
export interface StoreApi {
  /** The JSON value under `key`, `undefined` when never written. */
  get<T = unknown>(key: string): T | undefined;
  /** Stores `value` as JSON under `key`; answers the new version. */
  set(key: string, value: unknown): bigint;
  /** The raw bytes under `key`. */
  getBytes(key: string): Uint8Array | undefined;
  /** Stores raw bytes (a string as UTF-8). */
  setBytes(key: string, value: string | Uint8Array): bigint;
  /** The JSON value with its version. */
  getVersioned<T = unknown>(key: string): Versioned<T> | undefined;
  /** Stores `value` only if the key is still at `expected` (`undefined`: only if absent); a later
   * write throws `conflict`. */
  setIfVersion(key: string, value: unknown, expected: bigint | undefined): bigint;
  /** Removes `key`; answers whether it existed. */
  delete(key: string): boolean;
  /** The keys starting with `prefix`, sorted. */
  list(prefix?: string): string[];
  /** The value at `path` in the JSON document under `key` (`null` when the path names nothing),
   * `undefined` when the key was never written. */
  docGet<T = unknown>(key: string, path?: string): Versioned<T> | undefined;
  /** The member names at `path` in the document under `key`. */
  docKeys(key: string, path?: string): string[];
  /** Merges `patch` at `path` in the document under `key`. */
  docPatch(key: string, path: string, patch: unknown): bigint;
  /** `docPatch` only if the key is still at `expected`. */
  docPatchIfVersion(key: string, path: string, patch: unknown, expected: bigint): bigint;
}

function versioned<T>(v: witStore.Versioned | undefined, what: string): Versioned<T> | undefined {
  return v === undefined ? undefined : { value: decodeJson<T>(v.value, what), version: v.version };
}

function storeApi(ns: string | undefined): StoreApi {
  const what = (key: string) => `the stored value \`${key}\``;
  return {
    get: <T>(key: string) => {
      const bytes = hostCall(() => (ns === undefined ? witStore.get(key) : witStore.nsGet(ns, key)));
      return bytes === undefined ? undefined : decodeJson<T>(bytes, what(key));
    },
    set: (key, value) => hostCall(() => (ns === undefined ? witStore.set(key, encodeJson(value)) : witStore.nsSet(ns, key, encodeJson(value)))),
    getBytes: (key) => hostCall(() => (ns === undefined ? witStore.get(key) : witStore.nsGet(ns, key))),
    setBytes: (key, value) => hostCall(() => (ns === undefined ? witStore.set(key, toBytes(value)) : witStore.nsSet(ns, key, toBytes(value)))),
    getVersioned: <T>(key: string) =>
      versioned<T>(hostCall(() => (ns === undefined ? witStore.getVersioned(key) : witStore.nsGetVersioned(ns, key))), what(key)),
    setIfVersion: (key, value, expected) =>
      hostCall(() =>
        ns === undefined
          ? witStore.setIfVersion(key, encodeJson(value), expected)
          : witStore.nsSetIfVersion(ns, key, encodeJson(value), expected),
      ),
    delete: (key) => hostCall(() => (ns === undefined ? witStore.delete(key) : witStore.nsDelete(ns, key))),
    list: (prefix = "") => hostCall(() => (ns === undefined ? witStore.list(prefix) : witStore.nsList(ns, prefix))),
    docGet: <T>(key: string, path = "") =>
      versioned<T>(hostCall(() => (ns === undefined ? witStore.docGet(key, path) : witStore.nsDocGet(ns, key, path))), what(key)),
    docKeys: (key, path = "") => hostCall(() => (ns === undefined ? witStore.docKeys(key, path) : witStore.nsDocKeys(ns, key, path))),
    docPatch: (key, path, patch) =>
      hostCall(() => (ns === undefined ? witStore.docPatch(key, path, encodeJson(patch)) : witStore.nsDocPatch(ns, key, path, encodeJson(patch)))),
    docPatchIfVersion: (key, path, patch, expected) =>
      hostCall(() =>
        ns === undefined
          ? witStore.docPatchIfVersion(key, path, encodeJson(patch), expected)
          : witStore.nsDocPatchIfVersion(ns, key, path, encodeJson(patch), expected),
      ),
  };
}

/** The mod's durable store (keys of `[A-Za-z0-9._-]`, values JSON); `store.ns(id)` reaches another
 * mod's namespace under a `store_read` / `store_write` grant. */
export const store: StoreApi & { ns(namespace: string): StoreApi } = { ...storeApi(undefined), ns: (namespace) => storeApi(namespace) };

/** The mod's configuration (`config.default.json` with the player's `config.json` merged over it). */
export const config = {
  /** The value at `path` (`""`: the whole configuration), parsed. Throws `not-found` when absent. */
  get<T = unknown>(path = ""): T {
    return parse<T>(hostCall(() => witConfig.get(path)), `the configuration at \`${path}\``);
  },
  /** The value at `path`, or `fallback` when nothing is there. */
  getOr<T>(path: string, fallback: T): T {
    try {
      return config.get<T>(path);
    } catch (e) {
      if ((e as { tag?: string }).tag === "not-found") return fallback;
      throw e;
    }
  },
};

/** Lines in the host's log, prefixed with the mod's id. */
export const log = {
  trace: (message: string) => witLog.log("trace", message),
  debug: (message: string) => witLog.log("debug", message),
  info: (message: string) => witLog.log("info", message),
  warn: (message: string) => witLog.log("warn", message),
  error: (message: string) => witLog.log("error", message),
};

/** Events: news to the mods that hear a topic (`router.on(topic, ...)` hears them). */
export const events = {
  /** Emits `payload` as JSON on `topic` (the mod's own topics are `<id>.<name>`); answers how many
   * subscribers it reached. */
  emit(topic: string, payload: unknown): number {
    return hostCall(() => witMods.emit(topic, encodeJson(payload)));
  },
  /** Emits raw bytes. */
  emitBytes(topic: string, payload: string | Uint8Array): number {
    return hostCall(() => witMods.emit(topic, toBytes(payload)));
  },
  /** `emit`, with a failure logged instead of thrown: an event is news, not part of the answer. */
  tell(topic: string, payload: unknown): number {
    try {
      return events.emit(topic, payload);
    } catch (e) {
      log.warn(`emit ${topic}: ${(e as Error).message}`);
      return 0;
    }
  },
};

/** Calls into other mods' functions (`router.provide(name, ...)` provides them); needs a `call`
 * grant naming the target. */
export const calls = {
  /** Calls `target`'s `fn` with `payload` as JSON; answers its JSON answer. */
  call<T = unknown>(target: string, fn: string, payload: unknown): T {
    return decodeJson<T>(hostCall(() => witMods.call(target, fn, encodeJson(payload))), `${target}'s ${fn} answer`);
  },
  /** The same, for `session`. */
  callForSession<T = unknown>(session: string, target: string, fn: string, payload: unknown): T {
    const answer = hostCall(() => witMods.callForSession(session, target, fn, encodeJson(payload)));
    return decodeJson<T>(answer, `${target}'s ${fn} answer`);
  },
  /** Raw bytes both ways. */
  callBytes(target: string, fn: string, payload: string | Uint8Array): Uint8Array {
    return hostCall(() => witMods.call(target, fn, toBytes(payload)));
  },
};

/** Messages to a player's client through the notifier. */
export const push = {
  /** Sends `message` (an object is sent as JSON) to `session`: `delivered` or `queued`. */
  send(session: string, message: unknown): witPush.Delivery {
    const text = typeof message === "string" ? message : JSON.stringify(message);
    return hostCall(() => witPush.send(session, text));
  },
  /** Sends `message` to every connected player; answers how many. */
  broadcast(message: unknown): number {
    const text = typeof message === "string" ? message : JSON.stringify(message);
    return hostCall(() => witPush.broadcast(text));
  },
  /** Whether `session` has a notifier connection open. */
  connected(session: string): boolean {
    return hostCall(() => witPush.connected(session));
  },
};

/** The mod's websocket connections (routes declared with `router.socket`). */
export const sockets = {
  /** Sends a text (a string) or binary (bytes) message on `connection`. */
  send(connection: string, message: string | Uint8Array): void {
    const m: witSockets.Message = typeof message === "string" ? { tag: "text", val: message } : { tag: "binary", val: message };
    hostCall(() => witSockets.send(connection, m));
  },
  /** Closes `connection` with `code` and `reason`. */
  close(connection: string, code = 1000, reason = ""): void {
    hostCall(() => witSockets.close(connection, code, reason));
  },
};

/** One-shot timers (`router.onTimer(name, ...)` runs them; `router.every` declares periodic ones). */
export const timers = {
  /** Schedules `name` to fire `delayMs` from now, for `session` when given, with `payload` (JSON);
   * answers the timer's id. */
  schedule(name: string, delayMs: number, options: { session?: string; payload?: unknown } = {}): string {
    const payload = options.payload === undefined ? new Uint8Array() : encodeJson(options.payload);
    return hostCall(() => witTimers.schedule(name, BigInt(Math.max(0, Math.floor(delayMs))), options.session, payload));
  },
  /** Cancels timer `id`; answers whether it was pending. */
  cancel(id: string): boolean {
    return hostCall(() => witTimers.cancel(id));
  },
};
