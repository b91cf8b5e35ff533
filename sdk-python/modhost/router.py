"""`Router`: which function answers which route, the hooks, topics, functions, websocket routes and
timers the mod declares, and the component's exports built from them (`Router.exports`).

Handlers are plain functions; `route`, `prefix` and the others take the function, or decorate it:

    router = Router()

    @router.route("/my-mod/hello")
    def hello(request):
        return envelope.ok("hi")

    WitWorld, Guest, Realtime = router.exports()
"""

from typing import Callable, List, Optional

from . import _wit, log
from .calls import Invocation
from .errors import Failed, NotFound, to_err
from .events import Event, _payload
from .http import Request, Response
from .sockets import from_wit as _message
from .timers import Fired


def _parts(body):
    return None if body is None else [p if isinstance(p, tuple) else (p.encode() if isinstance(p, str) else bytes(p)) for p in body]


class Verdict:
    """What a before-hook decides: `Verdict.proceed()`, `Verdict.edit(headers=..., body=...)` (what
    is given replaces the request's), or `Verdict.answer(response)` (the owner does not run)."""

    def __init__(self, kind: str, headers=None, body=None, response: Optional[Response] = None):
        self.kind, self.headers, self.body, self.response = kind, headers, body, response

    @classmethod
    def proceed(cls) -> "Verdict":
        return cls("proceed")

    @classmethod
    def edit(cls, headers=None, body=None) -> "Verdict":
        if isinstance(body, str):
            body = body.encode()
        return cls("edit", None if headers is None else [(k.lower(), v) for k, v in headers], body)

    @classmethod
    def with_header(cls, request: Request, name: str, value: str) -> "Verdict":
        """Go on with the request's headers plus `name: value`."""
        return cls.edit(headers=request.headers + [(name.lower(), value)])

    @classmethod
    def answer(cls, response: Response) -> "Verdict":
        return cls("answer", response=response)

    def to_wit(self):
        g = _wit.exports("guest")
        if self.kind == "edit":
            return g.Verdict_Edit(g.RequestEdit(self.headers, None if self.body is None else bytes(self.body)))
        if self.kind == "answer":
            return g.Verdict_Answer(self.response.to_wit())
        return g.Verdict_Proceed()

    def __repr__(self):
        return f"Verdict.{self.kind}()"


class ResponseEdit:
    """An after-hook's changes to the answer: what is not None replaces the answer's (`body` is a
    list of parts, as `Response.body`). `ResponseEdit()` changes nothing."""

    def __init__(self, status: Optional[int] = None, headers=None, body=None):
        self.status, self.headers, self.body = status, headers, _parts(body)

    def is_none(self) -> bool:
        return self.status is None and self.headers is None and self.body is None

    def apply(self, response: Response) -> Response:
        """The answer with the changes applied: for tests."""
        return Response(
            response.status if self.status is None else self.status,
            response.headers if self.headers is None else self.headers,
            response.body if self.body is None else self.body,
        )

    def to_wit(self):
        if self.is_none():
            return None
        g = _wit.exports("guest")
        body = None if self.body is None else Response(200, [], self.body).to_wit().body
        return g.ResponseEdit(self.status, self.headers, body)


class _Hook:
    def __init__(self, path, prefix, phase, fn, priority, body):
        self.path, self.prefix, self.phase, self.fn, self.priority, self.body = path, prefix, phase, fn, priority, body


class _Socket:
    def __init__(self, path, prefix, on_message, accept, on_close):
        self.path, self.prefix, self.on_message, self.accept, self.on_close = path, prefix, on_message, accept, on_close


def _register(add):
    """`add(fn)` used directly (`router.route(path, fn)`) or as a decorator (`@router.route(path)`)."""

    def register(fn=None):
        if fn is None:
            return lambda f: (add(f), f)[1]
        add(fn)
        return fn

    return register


class Router:
    """Maps routes to handlers and declares the mod's hooks, subscriptions, functions, websocket
    routes and timers. The host does the matching (exact beats prefix, the longest prefix wins, the
    query is ignored) and names the route that matched; `call` matches the same way, for tests."""

    def __init__(self):
        self.routes: List[tuple] = []
        self.init_fn: Optional[Callable] = None
        self.hooks: List[_Hook] = []
        self.subscriptions: List[tuple] = []
        self.functions: List[tuple] = []
        self.sockets: List[_Socket] = []
        self.periodic: List[tuple] = []
        self.timers: List[tuple] = []

    # -- declaring --------------------------------------------------------------------------------

    def route(self, path: str, handler=None):
        """Answers requests whose path is exactly `path` with `handler(request) -> Response`."""
        return _register(lambda f: self.routes.append((path, False, f)))(handler)

    def prefix(self, prefix: str, handler=None):
        """Answers requests whose path starts with `prefix` (`request.rest` is the rest)."""
        return _register(lambda f: self.routes.append((prefix, True, f)))(handler)

    def on_init(self, fn=None):
        """Runs `fn()` once at load, before any request (it may patch the db). An error disables the mod."""

        def add(f):
            self.init_fn = f

        return _register(add)(fn)

    def before(self, path: str, hook=None, *, prefix: bool = False, priority: int = 0):
        """Runs `hook(request) -> Verdict` before the owner of `path` (another mod's route). Needs
        `hook = ["<path>"]` under `[grants]` and the `full` world."""
        return _register(lambda f: self.hooks.append(_Hook(path, prefix, "before", f, priority, False)))(hook)

    def after(self, path: str, hook=None, *, prefix: bool = False, priority: int = 0, body: bool = False):
        """Runs `hook(request, response) -> ResponseEdit` after the owner of `path`; `body=True` to
        read the answer's body."""
        return _register(lambda f: self.hooks.append(_Hook(path, prefix, "after", f, priority, body)))(hook)

    def on(self, topic: str, handler=None):
        """Hears `topic`: `handler(event)` for each event on it (every handler of a topic runs)."""
        return _register(lambda f: self.subscriptions.append((topic, f)))(handler)

    def provide(self, name: str, function=None):
        """Provides `name` to other mods: `function(invocation) -> bytes | str | JSON value`."""
        return _register(lambda f: self.functions.append((name, f)))(function)

    def socket(self, path: str, on_message=None, *, prefix: bool = False, accept=None, on_close=None):
        """A websocket route: `on_message(connection, message)` for each message (str or bytes);
        `accept(connection, request)` may answer a `Response` to refuse (anything else accepts);
        `on_close(connection, code, reason)` when the client ends it."""
        return _register(lambda f: self.sockets.append(_Socket(path, prefix, f, accept, on_close)))(on_message)

    def every(self, name: str, every_s: int, handler=None):
        """A periodic timer: `handler(fired)` every `every_s` seconds (1-86400)."""

        def add(f):
            self.periodic.append((name, every_s))
            self.timers.append((name, f))

        return _register(add)(handler)

    def on_timer(self, name: str, handler=None):
        """Runs `handler(fired)` when a one-shot timer `name` (`timers.schedule`) comes due."""
        return _register(lambda f: self.timers.append((name, f)))(handler)

    # -- running (also what tests call) ----------------------------------------------------------

    def match(self, path: str):
        """The route entry the host would pick for `path`: exact first, then the longest prefix."""
        path = path.split("?", 1)[0]
        exact = next((r for r in self.routes if not r[1] and r[0] == path), None)
        if exact is not None:
            return exact
        prefixes = [r for r in self.routes if r[1] and path.startswith(r[0])]
        return max(prefixes, key=lambda r: len(r[0]), default=None)

    def call(self, request: Request) -> Response:
        """Answers `request` as the host would route it: for tests. No route is `NotFound`."""
        entry = self.match(request.url)
        if entry is None:
            raise NotFound(f"no route of this mod matches `{request.path}`")
        request.route = entry[0]
        return entry[2](request)

    def run_init(self) -> None:
        if self.init_fn is not None:
            self.init_fn()

    def hook(self, path: str, phase: str) -> Optional[_Hook]:
        return next((h for h in self.hooks if h.path == path and h.phase == phase), None)

    def run_before(self, hook: str, request: Request) -> Verdict:
        h = self.hook(hook, "before")
        if h is None:
            raise NotFound(f"this mod has no before-hook on `{hook}`")
        verdict = h.fn(request)
        return Verdict.proceed() if verdict is None else verdict

    def run_after(self, hook: str, request: Request, response: Response) -> ResponseEdit:
        h = self.hook(hook, "after")
        if h is None:
            raise NotFound(f"this mod has no after-hook on `{hook}`")
        edit = h.fn(request, response)
        return ResponseEdit() if edit is None else edit

    def run_event(self, event: Event) -> None:
        handlers = [f for topic, f in self.subscriptions if topic == event.topic]
        if not handlers:
            raise NotFound(f"this mod does not hear `{event.topic}`")
        for f in handlers:
            f(event)

    def run_function(self, call: Invocation) -> bytes:
        f = next((f for name, f in self.functions if name == call.function), None)
        if f is None:
            raise NotFound(f"this mod provides no function `{call.function}`")
        out = f(call)
        return b"" if out is None else _payload(out)

    def run_timer(self, fired: Fired) -> None:
        f = next((f for name, f in self.timers if name == fired.name), None)
        if f is None:
            raise NotFound(f"this mod has no timer `{fired.name}`")
        f(fired)

    def _socket_of(self, connection: str) -> _Socket:
        index = connection.split("-", 1)[0]
        if not index.isdigit() or int(index) >= len(self.sockets):
            raise Failed(f"the host named connection `{connection}`, of no socket route of this mod")
        return self.sockets[int(index)]

    # -- the component ---------------------------------------------------------------------------

    def exports(self):
        """The classes componentize-py looks for in the app module: `WitWorld` (routes, init,
        handle), and for the `full` world `Guest` (hooks, events, functions) and `Realtime`
        (websockets, timers). A `plugin`-world mod uses `WitWorld` alone:

            WitWorld, Guest, Realtime = router.exports()
        """
        router = self

        def boundary(fn):
            def wrapped(*args):
                try:
                    return fn(*args)
                except Exception as e:  # noqa: BLE001 - every error leaves as a WIT error value
                    raise to_err(e) from None

            return wrapped

        class WitWorld:
            def routes(self):
                t = _wit.imports("types")
                kind = {False: t.MatchKind.EXACT, True: t.MatchKind.PREFIX}
                return [t.Route(path, kind[prefix]) for path, prefix, _ in router.routes]

            @boundary
            def init(self):
                router.run_init()

            @boundary
            def handle(self, request):
                entry = next((r for r in router.routes if r[0] == request.route), None)
                if entry is None:
                    raise Failed(f"the host routed `{request.route}` here but this mod has no such route")
                response = entry[2](Request.from_wit(request))
                if not isinstance(response, Response):
                    raise Failed(f"the handler of `{request.route}` answered {type(response).__name__}, not a Response")
                return response.to_wit()

        class Guest:
            def declare(self):
                g, t = _wit.exports("guest"), _wit.imports("types")
                hooks, seen = [], set()
                for h in router.hooks:
                    if (h.path, h.phase) in seen:
                        router_log(f"a second {h.phase} hook on `{h.path}` is left out: one per path and phase")
                        continue
                    seen.add((h.path, h.phase))
                    kind = t.MatchKind.PREFIX if h.prefix else t.MatchKind.EXACT
                    phase = g.Phase.BEFORE if h.phase == "before" else g.Phase.AFTER
                    hooks.append(g.Hook(t.Route(h.path, kind), phase, h.priority, h.body and h.phase == "after"))
                topics = list(dict.fromkeys(topic for topic, _ in router.subscriptions))
                functions = list(dict.fromkeys(name for name, _ in router.functions))
                return g.Declarations(hooks, topics, functions)

            @boundary
            def before(self, hook, request):
                if router.hook(hook, "before") is None:
                    raise Failed(f"the host ran before-hook `{hook}` here but this mod has none")
                return router.run_before(hook, Request.from_wit(request)).to_wit()

            @boundary
            def after(self, hook, request, response):
                if router.hook(hook, "after") is None:
                    raise Failed(f"the host ran after-hook `{hook}` here but this mod has none")
                return router.run_after(hook, Request.from_wit(request), Response.from_wit(response)).to_wit()

            @boundary
            def on_event(self, event):
                if not any(topic == event.topic for topic, _ in router.subscriptions):
                    raise Failed(f"the host delivered `{event.topic}` here but this mod does not hear it")
                router.run_event(Event.from_wit(event))

            @boundary
            def invoke(self, invocation):
                if not any(name == invocation.function for name, _ in router.functions):
                    raise Failed(f"the host called `{invocation.function}` here but this mod has no such function")
                return router.run_function(Invocation.from_wit(invocation))

        class Realtime:
            def declare_realtime(self):
                r, t = _wit.exports("realtime"), _wit.imports("types")
                sockets = [t.Route(s.path, t.MatchKind.PREFIX if s.prefix else t.MatchKind.EXACT) for s in router.sockets]
                return r.RealtimeDeclarations(sockets, [r.Periodic(name, every) for name, every in router.periodic])

            @boundary
            def accept(self, connection, request):
                r = _wit.exports("realtime")
                socket = router._socket_of(connection)
                verdict = None if socket.accept is None else socket.accept(connection, Request.from_wit(request))
                if isinstance(verdict, Response):
                    return r.AcceptVerdict_Refuse(verdict.to_wit())
                return r.AcceptVerdict_Accept()

            @boundary
            def on_message(self, connection, message):
                router._socket_of(connection).on_message(connection, _message(message))

            @boundary
            def on_close(self, connection, code, reason):
                socket = router._socket_of(connection)
                if socket.on_close is not None:
                    socket.on_close(connection, code, reason)

            @boundary
            def on_timer(self, timer):
                router.run_timer(Fired.from_wit(timer))

        return WitWorld, Guest, Realtime


def router_log(message: str) -> None:
    log.warn(message)
