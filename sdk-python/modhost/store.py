"""Durable key/value state (`wit/store.wit`): the mod's own namespace, or another mod's with a grant
(`namespace("other-mod")`). Values are bytes; the `*_json` helpers store JSON. Keys are 1-180
characters of `[A-Za-z0-9._-]` (`Invalid` otherwise)."""

import json as _json
from typing import NamedTuple, Optional

from . import _wit
from .errors import Conflict, host


class Versioned(NamedTuple):
    """A value (bytes) and the version it carries."""

    value: bytes
    version: int

    def json(self):
        return _json.loads(self.value)


def _bytes(value) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def _dump(value) -> bytes:
    return _json.dumps(value, separators=(",", ":")).encode()


def _versioned(v) -> Optional[Versioned]:
    return None if v is None else Versioned(bytes(v.value), v.version)


class Namespace:
    """The store calls in one namespace: `None` is the mod's own, a mod id another's (needing
    `store_read`/`store_write` grants)."""

    def __init__(self, ns: Optional[str] = None):
        self.ns = ns

    def _call(self, name: str, *args):
        s = _wit.imports("store")
        if self.ns is None:
            return host(getattr(s, name), *args)
        return host(getattr(s, "ns_" + name), self.ns, *args)

    def get(self, key: str) -> Optional[bytes]:
        """The bytes under `key`, None when never written. `Unreadable` is NOT missing."""
        v = self._call("get", key)
        return None if v is None else bytes(v)

    def get_json(self, key: str, default=None):
        """The JSON value under `key`, `default` when never written."""
        v = self.get(key)
        return default if v is None else _json.loads(v)

    def get_versioned(self, key: str) -> Optional[Versioned]:
        return _versioned(self._call("get_versioned", key))

    def set(self, key: str, value) -> int:
        """Stores `value` (bytes or str); answers the new version."""
        return self._call("set", key, _bytes(value))

    def set_json(self, key: str, value) -> int:
        """Stores `value` as JSON; answers the new version."""
        return self._call("set", key, _dump(value))

    def set_if_version(self, key: str, value, expected: Optional[int]) -> int:
        """Stores `value` only if `key` is at version `expected` (None: only if absent); `Conflict`
        when another write came first."""
        return self._call("set_if_version", key, _bytes(value), expected)

    def update_json(self, key: str, change, default=None, attempts: int = 8):
        """Reads the JSON value under `key` (`default` when absent), writes `change(value)` if the
        key did not change in between, retrying on `Conflict`; answers the value written."""
        for _ in range(attempts - 1):
            current = self.get_versioned(key)
            value = change(default if current is None else current.json())
            try:
                self.set_if_version(key, _dump(value), None if current is None else current.version)
                return value
            except Conflict:
                continue
        current = self.get_versioned(key)
        value = change(default if current is None else current.json())
        self.set_if_version(key, _dump(value), None if current is None else current.version)
        return value

    def delete(self, key: str) -> bool:
        """Removes `key`; answers whether it existed."""
        return self._call("delete", key)

    def list(self, prefix: str = "") -> list:
        """The keys starting with `prefix`, sorted."""
        return self._call("list", prefix)

    def doc_get(self, key: str, path: str = "") -> Optional[Versioned]:
        """The JSON text (as bytes) at `path` in the document under `key`, with its version."""
        return _versioned(self._call("doc_get", key, path))

    def doc_get_json(self, key: str, path: str = "", default=None):
        """The value at `path` in the document under `key`, `default` when the key was never written."""
        v = self.doc_get(key, path)
        return default if v is None else v.json()

    def doc_keys(self, key: str, path: str = "") -> list:
        return self._call("doc_keys", key, path)

    def doc_patch(self, key: str, path: str, patch) -> int:
        """Applies `patch` (a value, sent as JSON) as a merge patch at `path` in the document."""
        return self._call("doc_patch", key, path, _dump(patch))

    def doc_patch_if_version(self, key: str, path: str, patch, expected: int) -> int:
        return self._call("doc_patch_if_version", key, path, _dump(patch), expected)


_OWN = Namespace()


def namespace(mod_id: str) -> Namespace:
    """The store of mod `mod_id` (needs a `store_read` or `store_write` grant)."""
    return Namespace(mod_id)


get = _OWN.get
get_json = _OWN.get_json
get_versioned = _OWN.get_versioned
set = _OWN.set
set_json = _OWN.set_json
set_if_version = _OWN.set_if_version
update_json = _OWN.update_json
delete = _OWN.delete
list = _OWN.list
doc_get = _OWN.doc_get
doc_get_json = _OWN.doc_get_json
doc_keys = _OWN.doc_keys
doc_patch = _OWN.doc_patch
doc_patch_if_version = _OWN.doc_patch_if_version
