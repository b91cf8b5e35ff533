"""The hello example in Python, on the Python SDK (`sdk-python/`): the same routes, the same answers
as examples/hello (Rust).

  GET  /hello/item    one db value (the rouble's name) in an envelope
  POST /hello/visits  a per-session counter in the store, written then read back
  GET  /hello/items   the whole item table by db reference (never copied into the mod)
  GET  /hello/fail    the SPT error envelope (err 1), without failing the request
  GET  /hello/config  the mod's configuration (`config.get("")`): `{}` when it ships none
"""

from modhost import Router, config, db, envelope, store

ROUBLES = "5449016a4bdc2d6f028b456f"

router = Router()


@router.route("/hello/item")
def item(request):
    return envelope.ok({"id": ROUBLES, "name": db.get(f"templates.items.{ROUBLES}._props.Name")})


@router.route("/hello/visits")
def visits(request):
    key = f"visits.{request.session or 'anonymous'}"
    store.set_json(key, store.get_json(key, 0) + 1)
    # Read it back: what the store holds is the answer, not what we meant to write.
    return envelope.ok({"visits": store.get_json(key)})


@router.route("/hello/items")
def items(request):
    return envelope.ok_db("templates.items")


@router.route("/hello/fail")
def fail(request):
    return envelope.error(1, "hello refuses politely")


@router.route("/hello/config")
def configuration(request):
    # The whole configuration is always there (`{}` without one): this never raises.
    return envelope.ok(config.get(""))


# The `plugin` world (build.sh): componentize-py takes `WitWorld`; `Guest` and `Realtime` are for `full`.
WitWorld, Guest, Realtime = router.exports()
