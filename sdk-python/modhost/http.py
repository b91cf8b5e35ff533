"""The request a handler gets and the response it answers."""

import json as _json
from typing import List, Optional, Tuple

from . import _wit
from .errors import Invalid, NotFound

JSON = "application/json"


class Request:
    """One HTTP request, as the host hands it to the mod: `method`, `url` (path and query, as sent),
    `route` (the route that matched, as declared), `session` (24 hex digits or None), `headers`
    (names in lower case) and `body` (bytes, already inflated)."""

    def __init__(self, method="GET", url="/", route=None, session=None, headers=None, body=b""):
        self.method = method
        self.url = url
        self.route = self.path if route is None else route
        self.session = session
        self.headers: List[Tuple[str, str]] = list(headers or [])
        self.body: bytes = bytes(body)

    @classmethod
    def from_wit(cls, r) -> "Request":
        return cls(r.method, r.url, r.route, r.session, r.headers, r.body)

    def to_wit(self):
        return _wit.imports("types").Request(self.method, self.url, self.route, self.session, self.headers, self.body)

    @classmethod
    def get(cls, url: str, session: Optional[str] = None) -> "Request":
        """A GET of `url` (for tests): its route is its path until a router matches it."""
        return cls("GET", url, None, session)

    @classmethod
    def post(cls, url: str, body=b"", session: Optional[str] = None) -> "Request":
        """A POST of `url` with `body` (bytes, str, or a value sent as JSON), for tests."""
        if not isinstance(body, (bytes, bytearray, str)):
            body = _json.dumps(body, separators=(",", ":"))
        if isinstance(body, str):
            body = body.encode()
        return cls("POST", url, None, session, [("content-type", JSON)], body)

    @property
    def path(self) -> str:
        """The URL without its query."""
        return self.url.split("?", 1)[0]

    @property
    def query(self) -> str:
        """The query string (after `?`), empty without one."""
        return self.url.split("?", 1)[1] if "?" in self.url else ""

    @property
    def rest(self) -> str:
        """For a prefix route, the path after the prefix (empty for an exact route)."""
        path = self.path
        return path[len(self.route):] if path.startswith(self.route) else ""

    def header(self, name: str) -> Optional[str]:
        """The first header called `name` (any case), or None."""
        name = name.lower()
        return next((v for k, v in self.headers if k == name), None)

    def text(self) -> str:
        """The body as UTF-8 text."""
        return self.body.decode("utf-8", "replace")

    def json(self):
        """The body parsed as JSON (None for an empty body); `Invalid` (400) when it is not JSON."""
        if not self.body.strip():
            return None
        try:
            return _json.loads(self.body)
        except ValueError as e:
            raise Invalid(f"the request body is not JSON: {e}") from None

    def with_session(self, session: Optional[str]) -> "Request":
        self.session = session
        return self

    def with_header(self, name: str, value: str) -> "Request":
        self.headers.append((name.lower(), value))
        return self

    def __repr__(self):
        return f"Request({self.method} {self.url}, route={self.route!r}, session={self.session!r})"


class Response:
    """What a handler answers: `status`, `headers` and `body`, a list of parts, each `bytes` (as they
    are) or `("db", path)`: the JSON of the db value at `path`, spliced in by the host (a big table
    never passes through the mod). `content-type` defaults to JSON."""

    def __init__(self, status: int = 200, headers=None, body=None):
        self.status = status
        self.headers: List[Tuple[str, str]] = list(headers or [])
        self.body: list = list(body or [])

    @classmethod
    def json(cls, value, status: int = 200) -> "Response":
        """`value` as compact JSON."""
        return cls(status, [("content-type", JSON)], [_json.dumps(value, separators=(",", ":")).encode()])

    @classmethod
    def text(cls, text: str, status: int = 200) -> "Response":
        """Plain UTF-8 text."""
        return cls(status, [("content-type", "text/plain; charset=utf-8")], [text.encode()])

    @classmethod
    def bytes(cls, data: bytes, status: int = 200, content_type: str = "application/octet-stream") -> "Response":
        """These bytes."""
        return cls(status, [("content-type", content_type)], [bytes(data)])

    @classmethod
    def db(cls, path: str) -> "Response":
        """The JSON of the db value at `path`, by reference."""
        return cls(200, [("content-type", JSON)], [("db", path)])

    def with_status(self, status: int) -> "Response":
        self.status = status
        return self

    def with_header(self, name: str, value: str) -> "Response":
        """Adds a header (a `content-type` replaces the one there)."""
        name = name.lower()
        if name == "content-type":
            self.headers = [(k, v) for k, v in self.headers if k != name]
        self.headers.append((name, value))
        return self

    def with_bytes(self, data: bytes) -> "Response":
        self.body.append(bytes(data))
        return self

    def with_db(self, path: str) -> "Response":
        self.body.append(("db", path))
        return self

    def header(self, name: str) -> Optional[str]:
        name = name.lower()
        return next((v for k, v in self.headers if k == name), None)

    def body_bytes(self) -> bytes:
        """The literal body; `NotFound` names a db part (only the host reads the db into it)."""
        out = b""
        for part in self.body:
            if isinstance(part, tuple):
                raise NotFound(f"the body holds the db value at `{part[1]}`, which only the host reads")
            out += part
        return out

    def body_preview(self) -> str:
        """The body as text, a db part shown as `<db:path>`: for tests."""
        return "".join(f"<db:{p[1]}>" if isinstance(p, tuple) else p.decode("utf-8", "replace") for p in self.body)

    def body_json(self):
        """The literal body parsed as JSON: for tests."""
        return _json.loads(self.body_bytes())

    def to_wit(self):
        t = _wit.imports("types")
        chunks = [t.Chunk_Db(p[1]) if isinstance(p, tuple) else t.Chunk_Bytes(bytes(p)) for p in self.body]
        return t.Response(self.status, self.headers, chunks)

    @classmethod
    def from_wit(cls, r) -> "Response":
        t = _wit.imports("types")
        return cls(r.status, r.headers, [("db", c.value) if isinstance(c, t.Chunk_Db) else bytes(c.value) for c in r.body])

    def __repr__(self):
        return f"Response({self.status}, {self.body_preview()[:200]!r})"
