// The hello example in JavaScript, on the SDK (sdk-js/): the same four routes, the same answers as
// examples/hello (Rust).
//
//   GET  /hello/item    one db value (the rouble's name) in an envelope
//   POST /hello/visits  a per-session counter in the store, written then read back; emits
//                       `hello-js.visited` {session, visits} (its own topic: its id, then `.`)
//                       to any mod that hears it
//   GET  /hello/items   the whole item table by db reference (never copied into the mod)
//   GET  /hello/fail    the SPT error envelope (err 1), without failing the request
//
// Built by `npm run build`: esbuild bundles it with the SDK (the `modhost:plugin/...` imports stay
// imports), then componentize-js makes the bundle a component of the `plugin` world.

import { Router, db, error, events, ok, okDb, store } from "@modhost/sdk";

const ROUBLES = "5449016a4bdc2d6f028b456f";

const router = new Router()
  .route("/hello/item", () => ok({ id: ROUBLES, name: db.get(db.path("templates", "items", ROUBLES, "_props", "Name")) }))
  .route("/hello/visits", (request) => {
    const key = `visits.${request.session ?? "anonymous"}`;
    store.set(key, (store.get(key) ?? 0) + 1);
    // Read it back: what the store holds is the answer, not what we meant to write.
    const visits = store.get(key) ?? null;
    // An event is news, not part of the answer: a failure is logged and does not fail the request.
    events.tell("hello-js.visited", { session: request.session ?? null, visits });
    return ok({ visits });
  })
  .route("/hello/items", () => okDb("templates.items"))
  .route("/hello/fail", () => error(1, "hello refuses politely"));

const exported = router.exports();
export const routes = exported.routes;
export const init = exported.init;
export const handle = exported.handle;
