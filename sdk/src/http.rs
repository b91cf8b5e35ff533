//! [`Request`] and [`Response`]: what a handler gets and gives back.

use crate::wit::modhost::plugin::types::{self as wit, Chunk};
use crate::{Error, Result};
use serde::{Serialize, de::DeserializeOwned};

/// One request, as the host hands it to a handler.
///
/// ```rust,no_run
/// use modhost_sdk::{envelope, Request, Response, Result};
///
/// #[derive(serde::Deserialize)]
/// struct Select { uid: String }
///
/// fn select(req: &Request) -> Result<Response> {
///     let Some(session) = req.session() else {
///         return Ok(envelope::error(1, "no session"));
///     };
///     let body: Select = req.json()?;
///     Ok(envelope::ok(&format!("{session} selects {}", body.uid)))
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Request {
    inner: wit::Request,
}

impl Request {
    pub(crate) fn new(inner: wit::Request) -> Self {
        Request { inner }
    }

    /// A `GET` of `url` (path and query), with no session, headers or body: for tests, which hand it
    /// to [`Router::call`](crate::Router::call). The route is filled in by the router, as the host would.
    ///
    /// ```rust
    /// let req = modhost_sdk::Request::get("/mymod/hello?x=1");
    /// assert_eq!((req.method(), req.path(), req.query()), ("GET", "/mymod/hello", Some("x=1")));
    /// ```
    pub fn get(url: &str) -> Self {
        Request::build("GET", url)
    }

    /// A `POST` of `url` with an empty body: for tests (see [`Request::get`]). The SPT client posts
    /// nearly every request, usually with a JSON body ([`Request::with_json_body`]).
    ///
    /// ```rust
    /// let req = modhost_sdk::Request::post("/client/game/start");
    /// assert_eq!(req.method(), "POST");
    /// ```
    pub fn post(url: &str) -> Self {
        Request::build("POST", url)
    }

    fn build(method: &str, url: &str) -> Self {
        Request::new(wit::Request {
            method: method.to_owned(),
            url: url.to_owned(),
            route: String::new(),
            session: None,
            headers: Vec::new(),
            body: Vec::new(),
        })
    }

    /// The same request from session `id` (the host only passes ids of 24 lower-case hex digits).
    ///
    /// ```rust
    /// let req = modhost_sdk::Request::get("/x").with_session("0123456789abcdef01234567");
    /// assert_eq!(req.session(), Some("0123456789abcdef01234567"));
    /// ```
    pub fn with_session(mut self, id: &str) -> Self {
        self.inner.session = Some(id.to_owned());
        self
    }

    /// The same request with one more header (the host passes names in lower case, so this does too).
    ///
    /// ```rust
    /// let req = modhost_sdk::Request::get("/x").with_header("User-Agent", "test");
    /// assert_eq!(req.header("user-agent"), Some("test"));
    /// ```
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.inner.headers.push((name.to_ascii_lowercase(), value.to_owned()));
        self
    }

    /// The same request with this body (as the host passes it: already inflated).
    ///
    /// ```rust
    /// let req = modhost_sdk::Request::post("/x").with_body(b"raw".to_vec());
    /// assert_eq!(req.body(), b"raw");
    /// ```
    pub fn with_body(mut self, body: Vec<u8>) -> Self {
        self.inner.body = body;
        self
    }

    /// The same request with `value` serialized as its JSON body.
    ///
    /// ```rust
    /// let req = modhost_sdk::Request::post("/x").with_json_body(&serde_json::json!({"uid": "a"}));
    /// assert_eq!(req.body(), br#"{"uid":"a"}"#);
    /// ```
    pub fn with_json_body<T: Serialize + ?Sized>(self, value: &T) -> Self {
        // As in `Response::json`: plain data cannot fail to serialize; an impl that fails on purpose
        // gives a body saying so instead of a panic.
        let body = serde_json::to_vec(value).unwrap_or_else(|e| format!("unserializable: {e}").into_bytes());
        self.with_body(body)
    }

    pub(crate) fn set_route(&mut self, route: &str) {
        self.inner.route = route.to_owned();
    }

    /// The HTTP method, upper case.
    ///
    /// ```rust,no_run
    /// # fn f(req: &modhost_sdk::Request) { assert_eq!(req.method(), "POST"); }
    /// ```
    pub fn method(&self) -> &str {
        &self.inner.method
    }

    /// The request target as sent: path and query.
    ///
    /// ```rust,no_run
    /// # fn f(req: &modhost_sdk::Request) { assert_eq!(req.url(), "/client/locale/en?x=1"); }
    /// ```
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// The path: [`url`](Self::url) without its query.
    ///
    /// ```rust,no_run
    /// # fn f(req: &modhost_sdk::Request) { assert_eq!(req.path(), "/client/locale/en"); }
    /// ```
    pub fn path(&self) -> &str {
        split_query(&self.inner.url).0
    }

    /// The query string without its `?`, if there is one.
    ///
    /// ```rust,no_run
    /// # fn f(req: &modhost_sdk::Request) { assert_eq!(req.query(), Some("x=1")); }
    /// ```
    pub fn query(&self) -> Option<&str> {
        split_query(&self.inner.url).1
    }

    /// The route that matched, as the router declared it.
    ///
    /// ```rust,no_run
    /// # fn f(req: &modhost_sdk::Request) { assert_eq!(req.route(), "/client/locale/"); }
    /// ```
    pub fn route(&self) -> &str {
        &self.inner.route
    }

    /// For a prefix route, the rest of the path after the prefix (`en` for `/client/locale/en` under
    /// `/client/locale/`); empty for an exact route.
    ///
    /// ```rust,no_run
    /// # fn f(req: &modhost_sdk::Request) { assert_eq!(req.rest(), "en"); }
    /// ```
    pub fn rest(&self) -> &str {
        self.path().strip_prefix(self.route()).unwrap_or("")
    }

    /// The session id (24 lower-case hex digits), if the client sent one. The host holds this session's
    /// lock while the handler runs.
    ///
    /// ```rust,no_run
    /// # fn f(req: &modhost_sdk::Request) { let key = req.session().map(|s| format!("session.{s}")); }
    /// ```
    pub fn session(&self) -> Option<&str> {
        self.inner.session.as_deref()
    }

    /// The first header with this name (compared case-insensitively).
    ///
    /// ```rust,no_run
    /// # fn f(req: &modhost_sdk::Request) { let agent = req.header("User-Agent").unwrap_or("?"); }
    /// ```
    pub fn header(&self, name: &str) -> Option<&str> {
        self.inner.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// Every header, in the order received, names in lower case (as the host passes them).
    ///
    /// ```rust
    /// let req = modhost_sdk::Request::get("/x").with_header("A", "1");
    /// assert_eq!(req.headers(), [("a".to_owned(), "1".to_owned())]);
    /// ```
    pub fn headers(&self) -> &[(String, String)] {
        &self.inner.headers
    }

    /// The body, inflated.
    ///
    /// ```rust,no_run
    /// # fn f(req: &modhost_sdk::Request) { let n = req.body().len(); }
    /// ```
    pub fn body(&self) -> &[u8] {
        &self.inner.body
    }

    /// The body parsed as JSON into `T`. An empty body parses as JSON `null`.
    ///
    /// ```rust,no_run
    /// # fn f(req: &modhost_sdk::Request) -> modhost_sdk::Result<()> {
    /// let body: serde_json::Value = req.json()?;
    /// # Ok(()) }
    /// ```
    pub fn json<T: DeserializeOwned>(&self) -> Result<T> {
        let body = self.body();
        let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) { b"null" } else { body };
        serde_json::from_slice(body).map_err(|e| Error::Json(format!("request body: {e}")))
    }
}

fn split_query(url: &str) -> (&str, Option<&str>) {
    match url.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (url, None),
    }
}

/// What a handler answers: a status, headers, and a body made of parts that are either bytes or a
/// reference to a db value the host splices in (so a big table never passes through the mod).
///
/// ```rust
/// use modhost_sdk::Response;
///
/// let r = Response::json(&serde_json::json!({"ok": true}));
/// let r = Response::db("templates.items").with_header("cache-control", "no-store");
/// let r = Response::text("teapot").with_status(418);
/// ```
#[derive(Debug, Clone)]
pub struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<Chunk>,
}

impl Response {
    /// An empty 200 response.
    ///
    /// ```rust
    /// let r = modhost_sdk::Response::empty().with_status(204);
    /// ```
    pub fn empty() -> Self {
        Response { status: 200, headers: Vec::new(), body: Vec::new() }
    }

    /// 200 with `value` serialized as JSON.
    ///
    /// ```rust
    /// let r = modhost_sdk::Response::json(&[1, 2, 3]);
    /// ```
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Self {
        // Serializing plain data into a Vec cannot fail; a `Serialize` impl that errors on purpose
        // (a map with non-string keys) becomes a JSON string saying so rather than a panic.
        let bytes = serde_json::to_vec(value)
            .unwrap_or_else(|e| serde_json::to_vec(&format!("unserializable: {e}")).unwrap_or_default());
        Response::empty().with_bytes(bytes)
    }

    /// 200 with this text as the body, `content-type: text/plain; charset=utf-8`.
    ///
    /// ```rust
    /// let r = modhost_sdk::Response::text("hello");
    /// ```
    pub fn text(text: &str) -> Self {
        Response::empty().with_header("content-type", "text/plain; charset=utf-8").with_bytes(text.as_bytes().to_vec())
    }

    /// 200 whose body is the JSON text of the db value at `path`, spliced in by the host.
    ///
    /// ```rust
    /// let r = modhost_sdk::Response::db("globals");
    /// ```
    pub fn db(path: &str) -> Self {
        Response::empty().with_db(path)
    }

    /// Sets the status code.
    ///
    /// ```rust
    /// let r = modhost_sdk::Response::text("nope").with_status(403);
    /// assert_eq!(r.status(), 403);
    /// ```
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// Adds a header.
    ///
    /// ```rust
    /// let r = modhost_sdk::Response::text("<p>hi</p>").with_header("content-type", "text/html");
    /// ```
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Appends bytes to the body.
    ///
    /// ```rust
    /// let r = modhost_sdk::Response::empty().with_bytes(b"[1,".to_vec()).with_bytes(b"2]".to_vec());
    /// ```
    pub fn with_bytes(mut self, bytes: Vec<u8>) -> Self {
        match self.body.last_mut() {
            // Keep adjacent literal parts in one chunk: fewer, larger copies at the boundary.
            Some(Chunk::Bytes(last)) => last.extend_from_slice(&bytes),
            _ => self.body.push(Chunk::Bytes(bytes)),
        }
        self
    }

    /// Appends the JSON text of the db value at `path` to the body.
    ///
    /// ```rust
    /// let r = modhost_sdk::Response::empty()
    ///     .with_bytes(br#"{"items":"#.to_vec())
    ///     .with_db("templates.items")
    ///     .with_bytes(b"}".to_vec());
    /// ```
    pub fn with_db(mut self, path: &str) -> Self {
        self.body.push(Chunk::Db(path.to_owned()));
        self
    }

    /// The status code.
    ///
    /// ```rust
    /// assert_eq!(modhost_sdk::Response::empty().status(), 200);
    /// ```
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The literal bytes of the body with each db part shown as `<db:path>`: for tests and logs.
    ///
    /// ```rust
    /// let r = modhost_sdk::Response::empty().with_bytes(b"[".to_vec()).with_db("a.b").with_bytes(b"]".to_vec());
    /// assert_eq!(r.body_preview(), "[<db:a.b>]");
    /// ```
    pub fn body_preview(&self) -> String {
        let mut out = String::new();
        for chunk in &self.body {
            match chunk {
                Chunk::Bytes(b) => out.push_str(&String::from_utf8_lossy(b)),
                Chunk::Db(path) => {
                    out.push_str("<db:");
                    out.push_str(path);
                    out.push('>');
                }
            }
        }
        out
    }

    /// The first header with this name (compared case-insensitively).
    ///
    /// ```rust
    /// let r = modhost_sdk::Response::text("hi");
    /// assert_eq!(r.header("Content-Type"), Some("text/plain; charset=utf-8"));
    /// ```
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body as the client would get it: literal parts as they are, each db part replaced by the
    /// JSON text the host's db holds at its path (read now, so this needs a host: a running mod or a
    /// test under `modhost test-runner`). A db part whose path does not exist is an error, as it is
    /// a 500 in the host.
    ///
    /// ```rust,no_run
    /// let r = modhost_sdk::envelope::ok_db("globals.config");
    /// let body = r.body_bytes()?;
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn body_bytes(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        for chunk in &self.body {
            match chunk {
                Chunk::Bytes(b) => out.extend_from_slice(b),
                Chunk::Db(path) => out.extend_from_slice(crate::db::get_json(path)?.as_bytes()),
            }
        }
        Ok(out)
    }

    /// The body (db parts spliced in, see [`Response::body_bytes`]) parsed as JSON into `T`: in tests,
    /// usually an [`Envelope`](crate::envelope::Envelope).
    ///
    /// ```rust
    /// use modhost_sdk::envelope::{self, Envelope};
    /// let env: Envelope<u32> = envelope::ok(&7).body_json()?;
    /// assert_eq!((env.err, env.data), (0, Some(7)));
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn body_json<T: DeserializeOwned>(&self) -> Result<T> {
        let body = self.body_bytes()?;
        serde_json::from_slice(&body).map_err(|e| Error::Json(format!("response body: {e}")))
    }

    /// Every header it sets, in order.
    ///
    /// ```rust
    /// let r = modhost_sdk::Response::empty().with_header("x-a", "1");
    /// assert_eq!(r.headers(), [("x-a".to_owned(), "1".to_owned())]);
    /// ```
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    pub(crate) fn from_wit(inner: wit::Response) -> Self {
        Response { status: inner.status, headers: inner.headers, body: inner.body }
    }

    pub(crate) fn into_wit(self) -> wit::Response {
        wit::Response { status: self.status, headers: self.headers, body: self.body }
    }
}
