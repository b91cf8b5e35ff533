// The hello example in JavaScript: the same four routes, the same answers as examples/hello (Rust).
//
//   GET  /hello/item    one db value (the rouble's name) in an envelope
//   POST /hello/visits  a per-session counter in the store, written then read back; emits
//                       `hello-js.visited` {session, visits} (its own topic: its id, then `.`)
//                       to any mod that hears it
//   GET  /hello/items   the whole item table by db reference (never copied into the mod)
//   GET  /hello/fail    the SPT error envelope (err 1), without failing the request

import * as db from "modhost:plugin/db@0.1.2";
import * as mods from "modhost:plugin/mods@0.1.2";
import * as store from "modhost:plugin/store@0.1.2";
import { decodeJson, encodeJson, error, fail, ok, okDb, route } from "./modhost.js";

const ROUBLES = "5449016a4bdc2d6f028b456f";

export function routes() {
  return ["/hello/item", "/hello/visits", "/hello/items", "/hello/fail"].map((path) => route(path));
}

export function init() {}

export function handle(request) {
  switch (request.route) {
    case "/hello/item":
      return ok({ id: ROUBLES, name: JSON.parse(db.get(`templates.items.${ROUBLES}._props.Name`)) });
    case "/hello/visits": {
      const key = `visits.${request.session ?? "anonymous"}`;
      store.set(key, encodeJson((decodeJson(store.get(key)) ?? 0) + 1));
      // Read it back: what the store holds is the answer, not what we meant to write.
      const visits = decodeJson(store.get(key)) ?? null;
      tell("hello-js.visited", { session: request.session ?? null, visits });
      return ok({ visits });
    }
    case "/hello/items":
      return okDb("templates.items");
    case "/hello/fail":
      return error(1, "hello refuses politely");
    default:
      throw fail("not-found", request.route);
  }
}

// Emits `payload` on `topic`. An event is news, not part of the answer: a failure (a bad topic, a
// topic not its own, a cycle, a host without events) throws its error variant, which is logged and does not fail the
// request.
function tell(topic, payload) {
  try {
    mods.emit(topic, encodeJson(payload));
  } catch (e) {
    console.error(`emit ${topic}: ${e?.tag ?? "error"}: ${e?.val ?? e}`);
  }
}
