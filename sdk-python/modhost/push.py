"""Messages to players' game clients over the notifier websocket (`wit/push.wit`). Pushing to the
session being handled needs no grant; another needs `push = "any"`, `broadcast` `push = "broadcast"`."""

import json as _json

from . import _wit
from .errors import host


def _message(message) -> str:
    return message if isinstance(message, str) else _json.dumps(message, separators=(",", ":"))


def send(session: str, message) -> str:
    """Pushes `message` (a JSON object, or its text) to `session`; answers `"delivered"` or `"queued"`."""
    delivery = host(_wit.imports("push").send, session, _message(message))
    return delivery.name.lower()


def broadcast(message) -> int:
    """Pushes `message` to every session with a socket open; answers how many."""
    return host(_wit.imports("push").broadcast, _message(message))


def connected(session: str) -> bool:
    """Whether `session` has a notifier socket open now."""
    return host(_wit.imports("push").connected, session)
