"""The SPT client's JSON envelope: `{"err":0,"errmsg":null,"data":...}` on success and
`{"err":<code>,"errmsg":"...","data":null}` on a refusal. Every game route answers in it."""

import json as _json

from .http import JSON, Response

_OK_HEAD = b'{"err":0,"errmsg":null,"data":'


def _dump(value) -> bytes:
    return _json.dumps(value, separators=(",", ":")).encode()


def ok(data) -> Response:
    """`{"err":0,"errmsg":null,"data":<data>}`."""
    return Response(200, [("content-type", JSON)], [_OK_HEAD + _dump(data) + b"}"])


def ok_json(text: str) -> Response:
    """`{"err":0,"errmsg":null,"data":<text>}` from text that is already JSON."""
    return Response(200, [("content-type", JSON)], [_OK_HEAD + text.encode() + b"}"])


def ok_db(path: str) -> Response:
    """`{"err":0,"errmsg":null,"data":<the db value at path>}`, the value spliced in by the host: it
    never passes through the mod."""
    return Response(200, [("content-type", JSON)], [_OK_HEAD, ("db", path), b"}"])


def null() -> Response:
    """`{"err":0,"errmsg":null,"data":null}`."""
    return ok_json("null")


def error(code: int, message: str) -> Response:
    """`{"err":<code>,"errmsg":<message>,"data":null}`: a refusal the game client shows, not a failure
    (status 200). A code of 0 would read as success, so it becomes 1."""
    return Response(200, [("content-type", JSON)], [_dump({"err": code or 1, "errmsg": message, "data": None})])
