// A small helper for modhost mods in JavaScript: the SPT envelope, db references and errors.
// It wraps what the WIT bindings (imported as `modhost:plugin/...`) already give; nothing more.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A route the mod claims: `exact` (the default) or `prefix`. */
export function route(path, kind = "exact") {
  return { path, kind };
}

/** A response whose body is `bytes` (a string or a Uint8Array). */
export function respond(bytes, status = 200, headers = [["content-type", "application/json"]]) {
  const val = typeof bytes === "string" ? encoder.encode(bytes) : bytes;
  return { status, headers, body: [{ tag: "bytes", val }] };
}

/** `{"err":0,"errmsg":null,"data":<data>}`. */
export function ok(data) {
  return respond(JSON.stringify({ err: 0, errmsg: null, data }));
}

/** `{"err":0,"errmsg":null,"data":<the db value at path>}`, spliced in by the host: the value never
 * passes through the mod. */
export function okDb(path) {
  return {
    status: 200,
    headers: [["content-type", "application/json"]],
    body: [
      { tag: "bytes", val: encoder.encode('{"err":0,"errmsg":null,"data":') },
      { tag: "db", val: path },
      { tag: "bytes", val: encoder.encode("}") },
    ],
  };
}

/** `{"err":<code>,"errmsg":<message>,"data":null}`: a refusal the game client shows, not a failure. */
export function error(code, message) {
  return respond(JSON.stringify({ err: code || 1, errmsg: message, data: null }));
}

/** Throw this from `handle` to fail the request with a WIT error: `kind` is `not-found`, `invalid`,
 * `denied`, `conflict`, `too-large` (answered 4xx) or `failed` (500). */
export function fail(kind, message) {
  return { tag: kind, val: message };
}

/** JSON of a store value (a Uint8Array), or `undefined` when absent. */
export function decodeJson(bytes) {
  return bytes === undefined ? undefined : JSON.parse(decoder.decode(bytes));
}

/** A value as stored JSON bytes. */
export function encodeJson(value) {
  return encoder.encode(JSON.stringify(value));
}
