"""The mod's configuration (`wit/config.wit`): its defaults with the player's `config.json` merged
over them, fixed for the life of the loaded mod."""

import json as _json

from . import _wit
from .errors import NotFound, host


def get(path: str = ""):
    """The value at `path` (dotted, as the db's), parsed; the empty path is the whole configuration
    (`{}` without one). `NotFound` when nothing is there."""
    return _json.loads(host(_wit.imports("config").get, path))


def get_or(path: str, default=None):
    """The value at `path`, or `default` when nothing is there."""
    try:
        return get(path)
    except NotFound:
        return default
