"""The hello example in Python: the same four routes, the same answers as examples/hello (Rust).

  GET  /hello/item    one db value (the rouble's name) in an envelope
  POST /hello/visits  a per-session counter in the store, written then read back
  GET  /hello/items   the whole item table by db reference (never copied into the mod)
  GET  /hello/fail    the SPT error envelope (err 1), without failing the request
  GET  /hello/config  the mod's configuration (`config.get("")`): `{}` when it ships none
"""

import json

import wit_world
from wit_world.imports import config, db, store

from modhost_helpers import decode_json, encode_json, error, not_found, ok, ok_db, route

ROUBLES = "5449016a4bdc2d6f028b456f"


class WitWorld(wit_world.WitWorld):
    def routes(self):
        return [route(p) for p in ("/hello/item", "/hello/visits", "/hello/items", "/hello/fail", "/hello/config")]

    def init(self):
        return None

    def handle(self, request):
        if request.route == "/hello/item":
            name = json.loads(db.get(f"templates.items.{ROUBLES}._props.Name"))
            return ok({"id": ROUBLES, "name": name})
        if request.route == "/hello/visits":
            key = f"visits.{request.session or 'anonymous'}"
            store.set(key, encode_json((decode_json(store.get(key)) or 0) + 1))
            # Read it back: what the store holds is the answer, not what we meant to write.
            return ok({"visits": decode_json(store.get(key))})
        if request.route == "/hello/items":
            return ok_db("templates.items")
        if request.route == "/hello/fail":
            return error(1, "hello refuses politely")
        if request.route == "/hello/config":
            # The whole configuration is always there (`{}` without one): this never raises.
            return ok(json.loads(config.get("")))
        raise not_found(request.route)
