"""The generated bindings (`wit_world`, written by componentize-py for the world the mod targets).

componentize-py packs only the modules imported while it builds, so every interface is imported
here, at the top: the `plugin` world's imports always, and the `full` world's exports (`guest`,
`realtime`) when the mod is built for `full`.
"""

from wit_world.imports import config, db, log, mods, push, sockets, store, timers, types

try:
    from wit_world.exports import guest, realtime
except ImportError:  # the `plugin` world (or a test command): no hooks, events, functions, sockets, timers
    guest = realtime = None

_IMPORTS = {
    "config": config, "db": db, "log": log, "mods": mods, "push": push,
    "sockets": sockets, "store": store, "timers": timers, "types": types,
}
_EXPORTS = {"guest": guest, "realtime": realtime}


def imports(name: str):
    """`wit_world.imports.<name>` (`types`, `db`, `store`, ...)."""
    return _IMPORTS[name]


def exports(name: str):
    """`wit_world.exports.<name>` (`guest`, `realtime`): only in a mod built for the `full` world."""
    module = _EXPORTS[name]
    if module is None:
        raise RuntimeError(
            f"`wit_world.exports.{name}` is missing: hooks, events, functions, sockets and timers need the "
            f"mod built for the `full` world (`componentize-py -w full ...`)"
        )
    return module
