"""The Python SDK's own tests, run as a WASI command under `modhost test-runner` (`sdk-python/test.sh`):
every host call against the runner's real db (100 generated items) and scratch store, the router's
dispatch, the envelope, and errors as values at the component's boundary."""

from componentize_py_types import Err
from wit_world.imports import types

import modhost
from modhost import (Conflict, Event, Fired, Invalid, Invocation, NotFound, Request, Response, ResponseEdit, Router,
                     Verdict, calls, config, db, envelope, events, log, push, sockets, store, timers)
from modhost.testing import command, expect_ok

ROUBLES = "5449016a4bdc2d6f028b456f"
SESSION = "0123456789abcdef01234567"


def test_envelopes():
    assert envelope.ok({"a": 1}).body_preview() == '{"err":0,"errmsg":null,"data":{"a":1}}'
    assert envelope.ok_json("[1,2]").body_preview() == '{"err":0,"errmsg":null,"data":[1,2]}'
    assert envelope.ok_db("templates.items").body_preview() == '{"err":0,"errmsg":null,"data":<db:templates.items>}'
    assert envelope.null().body_preview() == '{"err":0,"errmsg":null,"data":null}'
    assert envelope.error(0, "no").body_json() == {"err": 1, "errmsg": "no", "data": None}
    wit = envelope.ok_db("x").to_wit()
    assert [type(c).__name__ for c in wit.body] == ["Chunk_Bytes", "Chunk_Db", "Chunk_Bytes"], wit
    assert wit.headers == [("content-type", "application/json")]


def _router():
    r = Router()
    r.route("/b/exact", lambda req: Response.text("exact"))
    r.prefix("/b/", lambda req: Response.text("short:" + req.rest))
    r.prefix("/b/longer/", lambda req: Response.text("long:" + req.rest))

    @r.route("/missing")
    def missing(req):
        raise NotFound("nothing here")

    @r.route("/boom")
    def boom(req):
        raise ValueError("a bug")

    return r


def test_router_matches_as_the_host_does():
    r = _router()
    assert r.call(Request.get("/b/exact?q=1")).body_preview() == "exact", "exact beats prefix, query ignored"
    assert r.call(Request.get("/b/longer/x")).body_preview() == "long:x", "the longest prefix wins"
    assert r.call(Request.get("/b/other")).body_preview() == "short:other"
    try:
        r.call(Request.get("/c"))
        raise AssertionError("/c answered")
    except NotFound:
        pass


def test_errors_leave_the_component_as_wit_error_values():
    world = _router().exports()[0]()
    routes = [(x.path, x.kind) for x in world.routes()]
    assert ("/b/", types.MatchKind.PREFIX) in routes and ("/b/exact", types.MatchKind.EXACT) in routes, routes
    for route, case in [("/missing", types.Error_NotFound), ("/boom", types.Error_Failed), ("/zzz", types.Error_Failed)]:
        try:
            world.handle(types.Request("GET", route, route, None, [], b""))
            raise AssertionError(f"{route} answered")
        except Err as e:
            assert isinstance(e.value, case), (route, e.value)
    assert "ValueError: a bug" in _err_text(world, "/boom")
    out = world.handle(types.Request("GET", "/b/x", "/b/", None, [], b""))
    assert out.status == 200 and out.body[0].value == b"short:x", out


def _err_text(world, route):
    try:
        world.handle(types.Request("GET", route, route, None, [], b""))
    except Err as e:
        return e.value.value
    return ""


def test_db_reads_and_errors():
    assert db.get(db.path("templates", "items", ROUBLES, "_props", "Name")) == "Roubles"
    assert db.get_json(f"templates.items.{ROUBLES}._props.StackMaxSize") == "500000"
    assert db.exists(f"templates.items.{ROUBLES}") and not db.exists("templates.nothing")
    assert ROUBLES in db.keys("templates.items")
    assert db.get_or("templates.nothing", 7) == 7
    assert db.path("a.b", "c\\d") == "a\\.b.c\\\\d"
    try:
        db.get("templates.nothing")
        raise AssertionError("an absent path answered")
    except NotFound as e:
        assert e.kind == "not-found" and e.message, e
    try:
        db.patch("templates.items", {"x": 1})
        raise AssertionError("a patch without a grant was taken")
    except modhost.Error as e:
        assert e.kind in ("denied", "invalid"), e


def test_store_values_versions_and_documents():
    assert store.get("k") is None and store.get_json("k", 5) == 5
    v1 = store.set_json("k", {"n": 1})
    assert store.get_json("k") == {"n": 1} and store.get("k") == b'{"n":1}'
    got = store.get_versioned("k")
    assert got.version == v1 and got.json() == {"n": 1}
    store.set_if_version("k", b'{"n":2}', v1)
    try:
        store.set_if_version("k", b'{"n":3}', v1)
        raise AssertionError("a stale version was written")
    except Conflict:
        pass
    assert store.update_json("counter", lambda n: n + 1, 0) == 1
    assert store.update_json("counter", lambda n: n + 1, 0) == 2
    assert store.list("") == ["counter", "k"], store.list("")
    assert store.delete("k") and not store.delete("k")
    store.doc_patch("doc", "", {"a": {"b": 1}})
    store.doc_patch("doc", "a", {"c": 2})
    assert store.doc_get_json("doc", "a") == {"b": 1, "c": 2}
    assert store.doc_keys("doc", "a") == ["b", "c"]
    assert store.doc_get_json("nothing", "", "none") == "none"
    try:
        store.set("bad key!", b"x")
        raise AssertionError("a bad key was taken")
    except Invalid:
        pass


def test_config_log_push_sockets_calls_events_timers():
    assert config.get("") == {} and config.get_or("missing", 3) == 3
    log.info("a line from the SDK's tests")
    assert push.connected(SESSION) is False
    try:
        sockets.send("0-00000000000000000000000000000000", "hi")
        raise AssertionError("a send on no connection was taken")
    except NotFound:
        pass
    try:
        calls.call("nobody", "f", {"x": 1})
        raise AssertionError("a call without a grant was taken")
    except modhost.Error as e:
        assert e.kind in ("denied", "not-found"), e
    # What the runner answers without a server; either way a value, never a trap.
    for attempt in (lambda: events.emit("test.thing", {"a": 1}), lambda: timers.schedule("tick", 60_000)):
        try:
            attempt()
        except modhost.Error:
            pass


def test_hooks_events_functions_and_timers_dispatch():
    r = Router()
    r.before("/x", lambda req: Verdict.with_header(req, "X-Tag", "t"))
    r.after("/x", lambda req, resp: ResponseEdit(status=299))
    heard = []
    r.on("a.b", lambda e: heard.append(e.json()))
    r.provide("echo", lambda call: call.payload)
    r.on_timer("t", lambda f: heard.append(f.name))
    verdict = r.run_before("/x", Request.get("/x"))
    assert verdict.kind == "edit" and ("x-tag", "t") in verdict.headers, verdict.headers
    assert r.run_after("/x", Request.get("/x"), Response.text("hi")).apply(Response.text("hi")).status == 299
    r.run_event(Event("a.b", {"k": 1}))
    r.run_timer(Fired("t"))
    assert heard == [{"k": 1}, "t"], heard
    assert r.run_function(Invocation("echo", b"hi")) == b"hi"
    for run in (lambda: r.run_event(Event("c")), lambda: r.run_function(Invocation("f")), lambda: r.run_before("/y", Request.get("/y"))):
        try:
            run()
            raise AssertionError("an undeclared entry ran")
        except NotFound:
            pass


def test_expect_ok_and_requests():
    req = Request.post("/p/q?x=1", {"a": 1}, session=SESSION)
    assert (req.path, req.query, req.json(), req.header("Content-Type")) == ("/p/q", "x=1", {"a": 1}, "application/json")
    assert expect_ok(envelope.ok([1])) == [1]


Run = command(__name__)
