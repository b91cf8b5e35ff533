//! Websocket routes: a mod accepts connections on its own routes, hears their messages, and sends on
//! them.
//!
//! Declare a route with [`Router::socket`] (or [`Router::socket_prefix`]) and a [`SocketHandler`]:
//! its accept function sees the upgrade request (headers, session: authenticate here) and answers
//! [`Accept::Open`] or [`Accept::Refuse`]; its message function hears each message, one at a time in
//! order; its close function hears that the client left (not a close the mod asked for with
//! [`close`]). Each call runs in a fresh instance, like a route's handler: remember a connection in
//! the [`crate::store`], keyed by its id, if later calls need to know more about it than its id.
//!
//! A connection id (`&str` everywhere here) is made by the host: unguessable, and only this mod may
//! [`send_text`], [`send_binary`] or [`close`] on it; any other id answers [`Error::NotFound`].
//! A message is at most 1 MiB either way; a client that does not read what it is sent is closed
//! (1008) rather than queued for without end.
//!
//! ```rust
//! use modhost_sdk::sockets::{self, Accept, Message, SocketHandler};
//! use modhost_sdk::{Request, Response, Result, Router};
//!
//! fn accept(_id: &str, req: &Request) -> Result<Accept> {
//!     Ok(match req.header("x-token") {
//!         Some("letmein") => Accept::Open,
//!         _ => Accept::Refuse(Response::text("no").with_status(403)),
//!     })
//! }
//! fn echo(id: &str, message: &Message) -> Result<()> { sockets::send(id, message) }
//!
//! let router = Router::new().socket("/chat/ws", SocketHandler::new(echo).on_accept(accept));
//! let (_, verdict) = router.run_accept(&Request::get("/chat/ws"))?;
//! assert!(matches!(verdict, Accept::Refuse(_)));
//! # Ok::<(), modhost_sdk::Error>(())
//! ```

use crate::wit::exports::modhost::plugin::realtime as wit;
use crate::wit::modhost::plugin::sockets as host;
use crate::wit::modhost::plugin::types::{self, MatchKind};
use crate::{Error, Request, Response, Result, Router};
use std::borrow::Cow;

/// One websocket message.
///
/// ```rust
/// use modhost_sdk::sockets::Message;
/// let m = Message::Text("hi".into());
/// assert_eq!((m.as_text(), m.as_bytes()), (Some("hi"), &b"hi"[..]));
/// assert_eq!(Message::Binary(vec![1, 2]).as_text(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A text message (UTF-8).
    Text(String),
    /// A binary message.
    Binary(Vec<u8>),
}

impl Message {
    /// The text of a text message; `None` for a binary one.
    ///
    /// ```rust
    /// assert_eq!(modhost_sdk::sockets::Message::Text("a".into()).as_text(), Some("a"));
    /// ```
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Message::Text(text) => Some(text),
            Message::Binary(_) => None,
        }
    }

    /// The message's bytes (a text message's UTF-8).
    ///
    /// ```rust
    /// assert_eq!(modhost_sdk::sockets::Message::Binary(vec![7]).as_bytes(), &[7]);
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Message::Text(text) => text.as_bytes(),
            Message::Binary(bytes) => bytes,
        }
    }

    fn from_wit(message: wit::Message) -> Message {
        match message {
            wit::Message::Text(text) => Message::Text(text),
            wit::Message::Binary(bytes) => Message::Binary(bytes),
        }
    }
}

/// What an accept function decides about an upgrade.
///
/// ```rust
/// use modhost_sdk::{sockets::Accept, Response};
/// let no = Accept::Refuse(Response::text("who are you?").with_status(401));
/// ```
#[derive(Debug, Clone)]
pub enum Accept {
    /// Open the connection: its messages reach the handler's message function.
    Open,
    /// Refuse it with this answer (make it a 4xx); the client gets no socket.
    Refuse(Response),
}

type AcceptFn = Box<dyn Fn(&str, &Request) -> Result<Accept>>;
type MessageFn = Box<dyn Fn(&str, &Message) -> Result<()>>;
type CloseFn = Box<dyn Fn(&str, u16, &str) -> Result<()>>;

/// The functions of one websocket route: accept (default: open every connection), message, and
/// close (default: nothing). Closures, so one handler can carry what it was configured with.
///
/// ```rust
/// use modhost_sdk::sockets::{Accept, SocketHandler};
/// let handler = SocketHandler::new(|_id, _message| Ok(()))
///     .on_accept(|_id, req| Ok(if req.session().is_some() { Accept::Open } else {
///         Accept::Refuse(modhost_sdk::Response::text("log in first").with_status(401))
///     }))
///     .on_close(|id, code, _reason| { modhost_sdk::log::info(&format!("{id} left: {code}")); Ok(()) });
/// ```
pub struct SocketHandler {
    accept: Option<AcceptFn>,
    message: MessageFn,
    close: Option<CloseFn>,
}

impl SocketHandler {
    /// A handler whose `message` hears every message (`(connection, message)`). An error closes the
    /// connection (1011): answer `Ok` for a message you ignore.
    ///
    /// ```rust
    /// let h = modhost_sdk::sockets::SocketHandler::new(|id, m| modhost_sdk::sockets::send(id, m));
    /// ```
    pub fn new(message: impl Fn(&str, &Message) -> Result<()> + 'static) -> Self {
        SocketHandler { accept: None, message: Box::new(message), close: None }
    }

    /// Decide on each upgrade (`(connection, request)`): the request's headers and session are how
    /// a mod authenticates. Runs under the session's lock. An error refuses the connection, answered
    /// as a handler's error is.
    ///
    /// ```rust
    /// use modhost_sdk::sockets::{Accept, SocketHandler};
    /// let h = SocketHandler::new(|_, _| Ok(())).on_accept(|_, _| Ok(Accept::Open));
    /// ```
    pub fn on_accept(mut self, accept: impl Fn(&str, &Request) -> Result<Accept> + 'static) -> Self {
        self.accept = Some(Box::new(accept));
        self
    }

    /// Hear that a connection ended (`(connection, code, reason)`): the client closed it (its code;
    /// 1005 with none), it failed (1006), the server is stopping (1001), the mods were reloaded
    /// (1012), its client stopped reading (1008) or a message failed (1011). Not called after the
    /// mod's own [`close`]. The connection is gone: sending on it is [`Error::NotFound`].
    ///
    /// ```rust
    /// let h = modhost_sdk::sockets::SocketHandler::new(|_, _| Ok(())).on_close(|_, _, _| Ok(()));
    /// ```
    pub fn on_close(mut self, close: impl Fn(&str, u16, &str) -> Result<()> + 'static) -> Self {
        self.close = Some(Box::new(close));
        self
    }
}

/// Queues `text` on connection `connection`.
///
/// Errors: [`Error::NotFound`] when the connection is closed or not this mod's; [`Error::TooLarge`]
/// over 1 MiB, or when the connection's queue is full (its client does not read; it is then closed).
///
/// ```rust,no_run
/// modhost_sdk::sockets::send_text("0-9f…", "hello")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn send_text(connection: &str, text: &str) -> Result<()> {
    host::send(connection, &host::Message::Text(text.to_owned())).map_err(Error::from)
}

/// Queues `bytes` as a binary message on `connection` (errors as [`send_text`]).
///
/// ```rust,no_run
/// modhost_sdk::sockets::send_binary("0-9f…", &[1, 2, 3])?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn send_binary(connection: &str, bytes: &[u8]) -> Result<()> {
    host::send(connection, &host::Message::Binary(bytes.to_vec())).map_err(Error::from)
}

/// Queues `message` on `connection` as it is (errors as [`send_text`]): an echo in one call.
///
/// ```rust,no_run
/// use modhost_sdk::sockets::{send, Message};
/// send("0-9f…", &Message::Text("hi".into()))?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn send(connection: &str, message: &Message) -> Result<()> {
    match message {
        Message::Text(text) => send_text(connection, text),
        Message::Binary(bytes) => send_binary(connection, bytes),
    }
}

/// Closes `connection` after what was queued, with `code` (1000, or 3000-4999 for the mod's own
/// meanings) and `reason` (at most 123 bytes). The close function is not called for it.
///
/// Errors: [`Error::NotFound`] as for [`send_text`]; [`Error::Invalid`] for another code or a
/// longer reason.
///
/// ```rust,no_run
/// modhost_sdk::sockets::close("0-9f…", 4000, "game over")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn close(connection: &str, code: u16, reason: &str) -> Result<()> {
    host::close(connection, code, reason).map_err(Error::from)
}

/// The socket routes a [`crate::Router`] declares, in order: a connection's id starts with its
/// route's index in this list (`<index>-<secret>`, the host's format), which is how a message finds
/// its handler (the host names no route in `on-message`).
#[derive(Default)]
pub(crate) struct SocketRoutes {
    routes: Vec<(Cow<'static, str>, MatchKind, SocketHandler)>,
    /// Connections made by [`Router::run_accept`], to give each test connection its own id.
    test_ids: std::cell::Cell<u64>,
}

impl SocketRoutes {
    pub(crate) fn declared(&self) -> Vec<types::Route> {
        self.routes.iter().map(|(path, kind, _)| types::Route { path: path.to_string(), kind: *kind }).collect()
    }

    fn handler(&self, connection: &str) -> Result<&SocketHandler> {
        let index = connection.split_once('-').and_then(|(index, _)| index.parse::<usize>().ok());
        index
            .and_then(|i| self.routes.get(i))
            .map(|(_, _, handler)| handler)
            .ok_or_else(|| Error::NotFound(format!("this mod has no socket route for connection `{connection}`")))
    }

    fn run_accept(&self, connection: &str, request: &Request) -> Result<Accept> {
        match &self.handler(connection)?.accept {
            Some(accept) => accept(connection, request),
            None => Ok(Accept::Open),
        }
    }

    pub(crate) fn accept(
        &self,
        connection: String,
        request: types::Request,
    ) -> Result<wit::AcceptVerdict, types::Error> {
        match self.run_accept(&connection, &Request::new(request))? {
            Accept::Open => Ok(wit::AcceptVerdict::Accept),
            Accept::Refuse(response) => Ok(wit::AcceptVerdict::Refuse(response.into_wit())),
        }
    }

    pub(crate) fn message(&self, connection: String, message: wit::Message) -> Result<(), types::Error> {
        let handler = self.handler(&connection)?;
        (handler.message)(&connection, &Message::from_wit(message)).map_err(Into::into)
    }

    pub(crate) fn closed(&self, connection: String, code: u16, reason: String) -> Result<(), types::Error> {
        match &self.handler(&connection)?.close {
            Some(close) => close(&connection, code, &reason).map_err(Into::into),
            None => Ok(()),
        }
    }
}

impl Router {
    /// Serve websockets on exactly `path` with `handler`. A mod declares at most 16 socket routes;
    /// two mods' socket routes on one path refuse the second at load. The path may also be one of
    /// the mod's ordinary routes: only an upgrade request reaches the socket route.
    ///
    /// ```rust
    /// use modhost_sdk::{sockets::SocketHandler, Router};
    /// let r = Router::new().socket("/mymod/ws", SocketHandler::new(|_, _| Ok(())));
    /// ```
    pub fn socket(mut self, path: impl Into<Cow<'static, str>>, handler: SocketHandler) -> Self {
        self.sockets.routes.push((path.into(), MatchKind::Exact, handler));
        self
    }

    /// Serve websockets on every path that starts with `prefix` (matched like [`Router::prefix`];
    /// the accept function's [`Request::rest`] gives the rest).
    ///
    /// ```rust
    /// use modhost_sdk::{sockets::SocketHandler, Router};
    /// let r = Router::new().socket_prefix("/mymod/rooms/", SocketHandler::new(|_, _| Ok(())));
    /// ```
    pub fn socket_prefix(mut self, prefix: impl Into<Cow<'static, str>>, handler: SocketHandler) -> Self {
        self.sockets.routes.push((prefix.into(), MatchKind::Prefix, handler));
        self
    }

    /// Runs the accept function of the socket route `request` reaches (matched as the host matches),
    /// as the host does on an upgrade: for tests. Answers the connection id it made (use it with
    /// [`Router::run_message`] and [`Router::run_close`]) and the verdict. No socket route matches:
    /// [`Error::NotFound`].
    ///
    /// ```rust
    /// use modhost_sdk::{sockets::{Accept, SocketHandler}, Request, Router};
    /// let router = Router::new().socket("/ws", SocketHandler::new(|_, _| Ok(())));
    /// let (id, verdict) = router.run_accept(&Request::get("/ws"))?;
    /// assert!(matches!(verdict, Accept::Open) && id.starts_with("0-"));
    /// assert!(router.run_accept(&Request::get("/other")).is_err());
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn run_accept(&self, request: &Request) -> Result<(String, Accept)> {
        let path = request.path();
        let routes = &self.sockets.routes;
        let exact = routes.iter().position(|(route, kind, _)| *kind == MatchKind::Exact && route == path);
        let prefix = || {
            (routes.iter().enumerate())
                .filter(|(_, (route, kind, _))| *kind == MatchKind::Prefix && path.starts_with(route.as_ref()))
                .max_by_key(|(_, (route, _, _))| route.len())
                .map(|(i, _)| i)
        };
        let Some(index) = exact.or_else(prefix) else {
            return Err(Error::NotFound(format!("no socket route of this mod matches `{path}`")));
        };
        let n = self.sockets.test_ids.get() + 1;
        self.sockets.test_ids.set(n);
        let connection = format!("{index}-test{n:028x}");
        let mut request = request.clone();
        request.set_route(&routes[index].0);
        let verdict = self.sockets.run_accept(&connection, &request)?;
        Ok((connection, verdict))
    }

    /// Runs the message function of `connection`'s route on `message`, as the host does: for tests.
    /// Sending from it reaches the host only inside a mod (`modhost test-runner`). A connection id
    /// that names no socket route of this mod is [`Error::NotFound`].
    ///
    /// ```rust
    /// use modhost_sdk::{sockets::{Message, SocketHandler}, Error, Request, Router};
    /// let router = Router::new().socket("/ws", SocketHandler::new(|_, m| match m.as_text() {
    ///     Some("bad") => Err(Error::Invalid("bad".into())),
    ///     _ => Ok(()),
    /// }));
    /// let (id, _) = router.run_accept(&Request::get("/ws"))?;
    /// router.run_message(&id, &Message::Text("fine".into()))?;
    /// assert!(router.run_message(&id, &Message::Text("bad".into())).is_err());
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn run_message(&self, connection: &str, message: &Message) -> Result<()> {
        (self.sockets.handler(connection)?.message)(connection, message)
    }

    /// Runs the close function of `connection`'s route, as the host does when a client leaves: for
    /// tests.
    ///
    /// ```rust
    /// use modhost_sdk::{sockets::SocketHandler, Error, Request, Router};
    /// let router = Router::new().socket("/ws", SocketHandler::new(|_, _| Ok(()))
    ///     .on_close(|_, code, _| if code == 1000 { Ok(()) } else { Err(Error::failed("abnormal")) }));
    /// let (id, _) = router.run_accept(&Request::get("/ws"))?;
    /// router.run_close(&id, 1000, "")?;
    /// assert!(router.run_close(&id, 1006, "").is_err());
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn run_close(&self, connection: &str, code: u16, reason: &str) -> Result<()> {
        match &self.sockets.handler(connection)?.close {
            Some(close) => close(connection, code, reason),
            None => Ok(()),
        }
    }
}
