"""Functions one mod provides to others (`mods.call` in `wit/mods.wit`; `Router.provide`). The
caller needs `call = ["<target>"]` under `[grants]`."""

import json as _json

from . import _wit
from .errors import host
from .events import _payload


def call(target: str, function: str, payload=b"") -> bytes:
    """Calls `function` of mod `target` with `payload` (bytes, str, or a value sent as JSON); answers
    what it returned, or raises its error."""
    return bytes(host(_wit.imports("mods").call, target, function, _payload(payload)))


def call_json(target: str, function: str, payload=None):
    """`call` with a JSON payload and a JSON answer."""
    return _json.loads(call(target, function, _json.dumps(payload, separators=(",", ":")).encode()))


def call_for_session(session: str, target: str, function: str, payload=b"") -> bytes:
    """`call`, for `session` rather than the request's (its lock is taken first)."""
    return bytes(host(_wit.imports("mods").call_for_session, session, target, function, _payload(payload)))


class Invocation:
    """A call into one of the mod's functions: `function`, `payload` (bytes), `caller` (a mod id)
    and `session`."""

    def __init__(self, function: str, payload=b"", caller: str = "test", session=None):
        self.function = function
        self.payload = _payload(payload)
        self.caller = caller
        self.session = session

    @classmethod
    def from_wit(cls, i) -> "Invocation":
        return cls(i.function, bytes(i.payload), i.caller, i.session)

    def json(self):
        return _json.loads(self.payload)

    def __repr__(self):
        return f"Invocation({self.function!r} from {self.caller!r})"
