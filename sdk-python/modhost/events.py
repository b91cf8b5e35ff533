"""Events (`mods.emit` in `wit/mods.wit`): a mod emits on its own topics (`<its id>.<name>`, or
another's under an `emit` grant); every subscriber hears it (`Router.on`)."""

import json as _json

from . import _wit
from .errors import host


def _payload(value) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    return _json.dumps(value, separators=(",", ":")).encode()


def emit(topic: str, payload=b"") -> int:
    """Delivers `payload` (bytes, str, or a value sent as JSON) on `topic` to every subscriber and
    waits for them; answers how many handled it without failing."""
    return host(_wit.imports("mods").emit, topic, _payload(payload))


class Event:
    """An event delivered to a subscriber: `topic`, `payload` (bytes), `source` (the emitter's mod
    id, set by the host: check it before acting) and `session`."""

    def __init__(self, topic: str, payload=b"", source: str = "test", session=None):
        self.topic = topic
        self.payload = _payload(payload)
        self.source = source
        self.session = session

    @classmethod
    def from_wit(cls, e) -> "Event":
        return cls(e.topic, bytes(e.payload), e.source, e.session)

    def json(self):
        """The payload parsed as JSON."""
        return _json.loads(self.payload)

    def __repr__(self):
        return f"Event({self.topic!r} from {self.source!r})"
