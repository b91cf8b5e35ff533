"""Work for later (`wit/timers.wit`): one-shot timers here, periodic ones with `Router.every`; both
fire the handler `Router.on_timer` (or `every`) registered for their name."""

import json as _json
from typing import Optional

from . import _wit
from .errors import host
from .events import _payload


def schedule(name: str, delay_ms: int, payload=b"", session: Optional[str] = None) -> str:
    """Schedules `name` to fire once, `delay_ms` from now, with `payload` (bytes, str or a value sent
    as JSON), for `session` when given; answers the timer's id."""
    return host(_wit.imports("timers").schedule, name, delay_ms, session, _payload(payload))


def cancel(timer_id: str) -> bool:
    """Cancels a one-shot timer; answers whether it was pending."""
    return host(_wit.imports("timers").cancel, timer_id)


class Fired:
    """A timer that came due: `name`, `id` (None for a periodic timer), `session`, `payload`,
    `due_ms`, `late_ms`."""

    def __init__(self, name: str, payload=b"", id=None, session=None, due_ms: int = 0, late_ms: int = 0):
        self.name = name
        self.payload = _payload(payload)
        self.id = id
        self.session = session
        self.due_ms = due_ms
        self.late_ms = late_ms

    @classmethod
    def from_wit(cls, f) -> "Fired":
        return cls(f.name, bytes(f.payload), f.id, f.session, f.due_ms, f.late_ms)

    def json(self):
        return _json.loads(self.payload)

    def __repr__(self):
        return f"Fired({self.name!r}, id={self.id!r})"
