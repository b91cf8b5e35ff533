"""Errors as values: each case of the WIT `error` variant is an exception class here.

A host call that answers an error raises the matching class (`modhost.NotFound`, ...); a handler
that raises one answers the HTTP status its case names (404 for `NotFound`, 400 `Invalid`, 403
`Denied`, 409 `Conflict`, 413 `TooLarge`, 500 the others), with the message as the reason. At the
component's boundary the SDK turns it into componentize-py's `Err(<the WIT error>)`, which is how
componentize-py returns a `result`'s error. A handler may also raise `Err(...)` itself; it passes as
it is.
"""

import sys
import traceback

from componentize_py_types import Err

from . import _wit


class Error(Exception):
    """A modhost error: `kind` is the WIT case (`"not-found"`, ...), `message` the sentence."""

    kind = "failed"
    _case = "Error_Failed"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __repr__(self):
        return f"{type(self).__name__}({self.message!r})"

    def __eq__(self, other):
        return type(self) is type(other) and self.message == other.message

    def __hash__(self):
        return hash((type(self), self.message))

    def to_wit(self):
        """The WIT `error` value (`wit_world.imports.types.Error_*`)."""
        return getattr(_wit.imports("types"), self._case)(self.message)

    def to_err(self) -> Err:
        """componentize-py's `Err` carrying this error: what an export raises to answer it."""
        return Err(self.to_wit())


class NotFound(Error):
    """The db path or store key does not exist. From a handler: answers 404."""

    kind, _case = "not-found", "Error_NotFound"


class Invalid(Error):
    """An argument is malformed. From a handler: answers 400."""

    kind, _case = "invalid", "Error_Invalid"


class WrongKind(Error):
    """The value is of the wrong kind for the call. From a handler: answers 500."""

    kind, _case = "wrong-kind", "Error_WrongKind"


class Unreadable(Error):
    """A stored value exists but could not be read: it is NOT missing. From a handler: answers 500."""

    kind, _case = "unreadable", "Error_Unreadable"


class TooLarge(Error):
    """A value or a call is over a limit. From a handler: answers 413."""

    kind, _case = "too-large", "Error_TooLarge"


class Denied(Error):
    """The mod has no grant for the call (the message names it). From a handler: answers 403."""

    kind, _case = "denied", "Error_Denied"


class Conflict(Error):
    """A compare-and-set found another version; nothing was written. From a handler: answers 409."""

    kind, _case = "conflict", "Error_Conflict"


class Io(Error):
    """The host failed to do I/O for the mod; nothing was changed. From a handler: answers 500."""

    kind, _case = "io", "Error_Io"


class Failed(Error):
    """The mod itself failed. From a handler: answers 500."""

    kind, _case = "failed", "Error_Failed"


_BY_CASE = {cls._case: cls for cls in (NotFound, Invalid, WrongKind, Unreadable, TooLarge, Denied, Conflict, Io, Failed)}


def from_wit(value) -> Error:
    """The SDK error for a WIT `error` value."""
    cls = _BY_CASE.get(type(value).__name__, Failed)
    return cls(getattr(value, "value", str(value)))


def host(fn, *args):
    """Calls the host import `fn`, raising its error as the SDK's exception class."""
    try:
        return fn(*args)
    except Err as e:
        raise from_wit(e.value) from None


def to_err(e: BaseException) -> Err:
    """What an export raises for an exception out of the mod's code: an SDK error as its case, an
    `Err` as it is, anything else `failed` naming it (its traceback goes to the host's log)."""
    if isinstance(e, Err):
        return e
    if isinstance(e, Error):
        return e.to_err()
    traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    return Failed(f"{type(e).__name__}: {e}").to_err()
