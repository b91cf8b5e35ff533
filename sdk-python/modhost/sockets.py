"""The mod's side of its own websocket routes (`wit/sockets.wit`, declared with `Router.socket`).
A message is `str` (text) or `bytes` (binary)."""

from . import _wit
from .errors import host


def to_wit(message):
    s = _wit.imports("sockets")
    if isinstance(message, str):
        return s.Message_Text(message)
    return s.Message_Binary(bytes(message))


def from_wit(message):
    return message.value if isinstance(message.value, str) else bytes(message.value)


def send(connection: str, message) -> None:
    """Queues `message` (str: text, bytes: binary) on `connection`. `NotFound` once it closed."""
    host(_wit.imports("sockets").send, connection, to_wit(message))


def close(connection: str, code: int = 1000, reason: str = "") -> None:
    """Closes `connection` (code 1000 or 3000-4999, reason at most 123 bytes)."""
    host(_wit.imports("sockets").close, connection, code, reason)
