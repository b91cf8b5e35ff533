"""The game database: one JSON document, read by dotted path and changed by merge patches
(`wit/db.wit`). A `.` or `\\` inside a member name is written `\\.` or `\\\\` (`escape`)."""

import json as _json

from . import _wit
from .errors import NotFound, host


def escape(name: str) -> str:
    """One member name as a path piece."""
    return name.replace("\\", "\\\\").replace(".", "\\.")


def path(*names: str) -> str:
    """Member names joined into a dotted path, each escaped."""
    return ".".join(escape(n) for n in names)


def get(path: str):
    """The value at `path`, parsed. `NotFound` when absent; `Invalid` for a malformed path."""
    return _json.loads(get_json(path))


def get_json(path: str) -> str:
    """The JSON text of the value at `path`, as the db spells it."""
    return host(_wit.imports("db").get, path)


def get_or(path: str, default=None):
    """The value at `path`, or `default` when nothing is there."""
    try:
        return get(path)
    except NotFound:
        return default


def exists(path: str) -> bool:
    """Whether a value is at `path`, without copying it."""
    return host(_wit.imports("db").exists, path)


def keys(path: str) -> list:
    """The member names of the object at `path`, in document order."""
    return host(_wit.imports("db").keys, path)


def patch(path: str, value) -> None:
    """Applies `value` (serialised to JSON) as an RFC 7396 merge patch at `path`; needs a `db_write`
    grant covering `path`."""
    patch_json(path, _json.dumps(value, separators=(",", ":")))


def patch_json(path: str, json_text: str) -> None:
    """`patch` with JSON text."""
    host(_wit.imports("db").patch, path, json_text)
