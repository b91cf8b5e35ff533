"""Lines in the host's log, prefixed with the mod's id (`wit/log.wit`). Never fails."""

from . import _wit


def _log(level: str, message: str) -> None:
    l = _wit.imports("log")
    l.log(getattr(l.Level, level), str(message))


def trace(message: str) -> None:
    _log("TRACE", message)


def debug(message: str) -> None:
    _log("DEBUG", message)


def info(message: str) -> None:
    _log("INFO", message)


def warn(message: str) -> None:
    _log("WARN", message)


def error(message: str) -> None:
    _log("ERROR", message)
