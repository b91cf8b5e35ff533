//! Hooks on other mods' routes: [`Hook`] (where and in what order), [`Verdict`] (what a before-hook
//! decides) and [`ResponseEdit`] (what an after-hook changes). The router holds them
//! ([`Router::before`](crate::Router::before), [`Router::after`](crate::Router::after)).

use crate::Response;
use crate::wit::exports::modhost::plugin::guest as wit;
use crate::wit::modhost::plugin::types::{Chunk, MatchKind};
use std::borrow::Cow;

/// Where a hook goes and in what order it runs: the path (exact or prefix, matched as routes are),
/// its priority (among hooks the load order does not order, a higher priority runs first; ties go to
/// the smaller mod id) and, for an after-hook, whether it reads the answer's body.
///
/// Declaring a hook needs `hook = ["<path>"]` under `[grants]` in `mod.toml` (the path itself, or a
/// prefix of it ending in `/`).
///
/// ```rust
/// use modhost_sdk::Hook;
///
/// let early = Hook::exact("/client/game/profile/create").priority(10);
/// let reads_answers = Hook::prefix("/client/trading/").with_body();
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    pub(crate) path: Cow<'static, str>,
    pub(crate) kind: MatchKind,
    pub(crate) priority: i32,
    pub(crate) body: bool,
}

impl Hook {
    /// A hook on requests whose path is exactly `path`, at priority 0, without the answer's body.
    ///
    /// ```rust
    /// let hook = modhost_sdk::Hook::exact("/client/items");
    /// ```
    pub fn exact(path: impl Into<Cow<'static, str>>) -> Self {
        Hook { path: path.into(), kind: MatchKind::Exact, priority: 0, body: false }
    }

    /// A hook on requests whose path starts with `prefix`, at priority 0, without the answer's body.
    ///
    /// ```rust
    /// let hook = modhost_sdk::Hook::prefix("/client/locale/");
    /// ```
    pub fn prefix(prefix: impl Into<Cow<'static, str>>) -> Self {
        Hook { path: prefix.into(), kind: MatchKind::Prefix, priority: 0, body: false }
    }

    /// Sets the priority: higher runs earlier among hooks the load order leaves unordered.
    ///
    /// ```rust
    /// let hook = modhost_sdk::Hook::exact("/x").priority(-5); // after the others
    /// ```
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// An after-hook with this sees the answer's body (every db reference read into bytes, which
    /// costs the host the value's size). Without it the after-hook sees an empty body. A before-hook
    /// always sees the request's body; this changes nothing for one.
    ///
    /// ```rust
    /// let hook = modhost_sdk::Hook::exact("/client/items").with_body();
    /// ```
    pub fn with_body(mut self) -> Self {
        self.body = true;
        self
    }

    /// The declared path.
    ///
    /// ```rust
    /// assert_eq!(modhost_sdk::Hook::prefix("/a/").path(), "/a/");
    /// ```
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// What a before-hook decides about a request.
///
/// ```rust
/// use modhost_sdk::{envelope, Request, Result, Verdict};
///
/// fn tag(req: &Request) -> Result<Verdict> {
///     if req.header("x-blocked").is_some() {
///         // The owner and later before-hooks do not run; after-hooks still do.
///         return Ok(Verdict::Answer(envelope::error(1, "blocked")));
///     }
///     Ok(Verdict::with_header(req, "x-seen-by", "my-mod"))
/// }
/// ```
#[derive(Debug, Clone)]
pub enum Verdict {
    /// Go on with the request as it is.
    Proceed,
    /// Go on with the request changed: what is `Some` replaces the request's.
    Edit {
        /// The whole new header list (the host wants names in lower case; the SDK lowers them). The
        /// session stays the request's whatever the headers say.
        headers: Option<Vec<(String, String)>>,
        /// The new body.
        body: Option<Vec<u8>>,
    },
    /// Answer this instead of the owner.
    Answer(Response),
}

impl Verdict {
    /// An edit that replaces the request's body and keeps its headers.
    ///
    /// ```rust
    /// let v = modhost_sdk::Verdict::with_body(br#"{"nickname":"Bob"}"#.to_vec());
    /// ```
    pub fn with_body(body: Vec<u8>) -> Self {
        Verdict::Edit { headers: None, body: Some(body) }
    }

    /// An edit that keeps `request`'s headers and sets header `name` to `value` (replacing every
    /// header of that name, compared case-insensitively).
    ///
    /// ```rust
    /// use modhost_sdk::{Request, Verdict};
    /// let v = Verdict::with_header(&Request::get("/x").with_header("a", "1"), "B", "2");
    /// let Verdict::Edit { headers: Some(h), body: None } = v else { panic!() };
    /// assert_eq!(h, [("a".to_owned(), "1".to_owned()), ("b".to_owned(), "2".to_owned())]);
    /// ```
    pub fn with_header(request: &crate::Request, name: &str, value: &str) -> Self {
        Verdict::Edit { headers: Some(set_header(request.headers(), name, value)), body: None }
    }

    pub(crate) fn into_wit(self) -> wit::Verdict {
        match self {
            Verdict::Proceed => wit::Verdict::Proceed,
            Verdict::Edit { headers, body } => wit::Verdict::Edit(wit::RequestEdit {
                headers: headers.map(|h| h.into_iter().map(|(n, v)| (n.to_ascii_lowercase(), v)).collect()),
                body,
            }),
            Verdict::Answer(response) => wit::Verdict::Answer(response.into_wit()),
        }
    }
}

/// `headers` with `name` set to `value`: every header of that name (case-insensitively) removed, and
/// the new one appended in lower case.
pub(crate) fn set_header(headers: &[(String, String)], name: &str, value: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> =
        headers.iter().filter(|(n, _)| !n.eq_ignore_ascii_case(name)).cloned().collect();
    out.push((name.to_ascii_lowercase(), value.to_owned()));
    out
}

/// What an after-hook changes in the answer: what is set replaces the answer's, the rest stays.
/// [`ResponseEdit::none`] changes nothing.
///
/// An edit rather than a whole response, so a hook that did not ask for the body
/// ([`Hook::with_body`]) cannot wipe it out by handing back the empty body it was shown.
///
/// ```rust
/// use modhost_sdk::{Request, Response, ResponseEdit, Result};
///
/// fn stamp(_req: &Request, answer: &Response) -> Result<ResponseEdit> {
///     if answer.status() != 200 {
///         return Ok(ResponseEdit::none());
///     }
///     Ok(ResponseEdit::none().header(answer, "x-stamped", "yes"))
/// }
/// let edited = stamp(&Request::get("/x"), &Response::text("hi"))?.apply(Response::text("hi"));
/// assert_eq!((edited.header("x-stamped"), edited.body_preview().as_str()), (Some("yes"), "hi"));
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct ResponseEdit {
    status: Option<u16>,
    headers: Option<Vec<(String, String)>>,
    body: Option<Vec<Chunk>>,
}

impl ResponseEdit {
    /// No change.
    ///
    /// ```rust
    /// assert!(modhost_sdk::ResponseEdit::none().is_none());
    /// ```
    pub fn none() -> Self {
        ResponseEdit::default()
    }

    /// Whether it changes nothing.
    ///
    /// ```rust
    /// assert!(!modhost_sdk::ResponseEdit::none().status(404).is_none());
    /// ```
    pub fn is_none(&self) -> bool {
        self.status.is_none() && self.headers.is_none() && self.body.is_none()
    }

    /// Sets the status.
    ///
    /// ```rust
    /// let edit = modhost_sdk::ResponseEdit::none().status(299);
    /// ```
    pub fn status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Replaces the whole header list.
    ///
    /// ```rust
    /// let edit = modhost_sdk::ResponseEdit::none().headers(vec![("content-type".into(), "text/plain".into())]);
    /// ```
    pub fn headers(mut self, headers: Vec<(String, String)>) -> Self {
        self.headers = Some(headers);
        self
    }

    /// Sets header `name` to `value` over the headers this edit already sets, or else over
    /// `answer`'s (every header of that name is replaced).
    ///
    /// ```rust
    /// use modhost_sdk::{Response, ResponseEdit};
    /// let answer = Response::text("hi");
    /// let edit = ResponseEdit::none().header(&answer, "x-a", "1").header(&answer, "x-b", "2");
    /// let out = edit.apply(answer);
    /// assert_eq!((out.header("x-a"), out.header("x-b")), (Some("1"), Some("2")));
    /// ```
    pub fn header(mut self, answer: &Response, name: &str, value: &str) -> Self {
        let base = self.headers.as_deref().unwrap_or(answer.headers());
        self.headers = Some(set_header(base, name, value));
        self
    }

    /// Replaces the body with these bytes.
    ///
    /// ```rust
    /// let edit = modhost_sdk::ResponseEdit::none().body(br#"{"wrapped":true}"#.to_vec());
    /// ```
    pub fn body(mut self, bytes: Vec<u8>) -> Self {
        self.body = Some(vec![Chunk::Bytes(bytes)]);
        self
    }

    /// Replaces the body with `response`'s (its db references included; its status and headers are
    /// not taken).
    ///
    /// ```rust
    /// let edit = modhost_sdk::ResponseEdit::none().body_of(modhost_sdk::envelope::ok_db("globals"));
    /// ```
    pub fn body_of(mut self, response: Response) -> Self {
        self.body = Some(response.into_wit().body);
        self
    }

    /// `answer` with this edit applied: what the host does with it, for tests.
    ///
    /// ```rust
    /// use modhost_sdk::{Response, ResponseEdit};
    /// let out = ResponseEdit::none().status(299).apply(Response::text("kept"));
    /// assert_eq!((out.status(), out.body_preview().as_str()), (299, "kept"));
    /// ```
    pub fn apply(self, answer: Response) -> Response {
        let mut wit = answer.into_wit();
        if let Some(status) = self.status {
            wit.status = status;
        }
        if let Some(headers) = self.headers {
            wit.headers = headers;
        }
        if let Some(body) = self.body {
            wit.body = body;
        }
        Response::from_wit(wit)
    }

    pub(crate) fn into_wit(self) -> Option<wit::ResponseEdit> {
        (!self.is_none()).then_some(wit::ResponseEdit { status: self.status, headers: self.headers, body: self.body })
    }
}
