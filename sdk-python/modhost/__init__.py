"""modhost's Python SDK: write a mod's route handlers as plain Python functions on a `Router`, build
it with componentize-py (`-p <this folder's parent>`), and serve it from modhost.

    from modhost import Router, db, envelope

    router = Router()

    @router.route("/my-mod/hello")
    def hello(request):
        return envelope.ok({"item": db.get("templates.items.5449016a4bdc2d6f028b456f._props.Name")})

    WitWorld, Guest, Realtime = router.exports()

The modules wrap the host's imports (`wit/`): `db`, `store`, `config`, `log`, `events` (emit),
`calls`, `push`, `sockets`, `timers`. Errors are values: a failed host call raises the SDK's class
for its case (`NotFound`, `Invalid`, ...), and a handler raising one answers its HTTP status.
"""

from . import calls, config, db, envelope, events, log, push, sockets, store, timers
from .calls import Invocation
from .errors import Conflict, Denied, Error, Failed, Invalid, Io, NotFound, TooLarge, Unreadable, WrongKind
from .events import Event
from .http import Request, Response
from .router import ResponseEdit, Router, Verdict
from .timers import Fired

__version__ = "0.1.2"

__all__ = [
    "Conflict", "Denied", "Error", "Event", "Failed", "Fired", "Invalid", "Invocation", "Io", "NotFound",
    "Request", "Response", "ResponseEdit", "Router", "TooLarge", "Unreadable", "Verdict", "WrongKind",
    "calls", "config", "db", "envelope", "events", "log", "push", "sockets", "store", "timers",
]
