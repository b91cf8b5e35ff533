//! [`Router`]: which function answers which route, and the glue [`crate::export!`] calls.

use crate::wit::modhost::plugin::types::{self as wit, MatchKind};
use crate::{Request, Response, Result};

/// A route handler: a plain function from the request to a response.
///
/// ```rust
/// use modhost_sdk::{Handler, Request, Response, Result};
/// fn hi(_: &Request) -> Result<Response> { Ok(Response::text("hi")) }
/// let h: Handler = hi;
/// ```
pub type Handler = fn(&Request) -> Result<Response>;

/// The function run once at load (see [`Router::on_init`]).
///
/// ```rust
/// fn setup() -> modhost_sdk::Result<()> { Ok(()) }
/// let f: modhost_sdk::InitFn = setup;
/// ```
pub type InitFn = fn() -> Result<()>;

/// Maps routes to handlers. The host does the matching (exact beats prefix, the longest prefix wins, the
/// query is ignored) and tells the mod which route matched, so dispatch here is one comparison per route.
///
/// ```rust
/// use modhost_sdk::{Request, Response, Result, Router};
///
/// fn items(_: &Request) -> Result<Response> { Ok(Response::db("templates.items")) }
/// fn locale(req: &Request) -> Result<Response> { Ok(Response::text(req.rest())) }
/// fn setup() -> Result<()> { Ok(()) }
///
/// let router = Router::new()
///     .route("/client/items", items)
///     .prefix("/client/locale/", locale)
///     .on_init(setup);
/// ```
#[derive(Default)]
pub struct Router {
    routes: Vec<(&'static str, MatchKind, Handler)>,
    init: Option<InitFn>,
}

impl Router {
    /// A router with no routes.
    ///
    /// ```rust
    /// let r = modhost_sdk::Router::new();
    /// ```
    pub fn new() -> Self {
        Router::default()
    }

    /// Answer requests whose path is exactly `path` with `handler`.
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// # fn ping(_: &Request) -> Result<Response> { Ok(Response::text("pong")) }
    /// let r = Router::new().route("/ping", ping);
    /// ```
    pub fn route(mut self, path: &'static str, handler: Handler) -> Self {
        self.routes.push((path, MatchKind::Exact, handler));
        self
    }

    /// Answer requests whose path starts with `prefix` with `handler` ([`Request::rest`] gives the rest).
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// # fn files(req: &Request) -> Result<Response> { Ok(Response::text(req.rest())) }
    /// let r = Router::new().prefix("/files/", files);
    /// ```
    pub fn prefix(mut self, prefix: &'static str, handler: Handler) -> Self {
        self.routes.push((prefix, MatchKind::Prefix, handler));
        self
    }

    /// Run `init` once when the mod loads, before any request (it may patch the db). An error disables
    /// the mod and the host logs why.
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// fn setup() -> Result<()> { db::patch("globals.config", &serde_json::json!({"MyMod": true})) }
    /// let r = Router::new().on_init(setup);
    /// ```
    pub fn on_init(mut self, init: InitFn) -> Self {
        self.init = Some(init);
        self
    }
}

impl Router {
    /// Answers `request` as the host would: picks the route the way the host matches (an exact route
    /// beats a prefix, the longest prefix wins, the query is ignored), then calls its handler. For
    /// tests; under `modhost test-runner` the handler's db and store calls reach a real (scratch) db
    /// and store. A path no route claims is [`Error::NotFound`](crate::Error::NotFound), where the
    /// host would answer 404 without calling the mod.
    ///
    /// ```rust
    /// use modhost_sdk::{envelope, Request, Response, Result, Router};
    ///
    /// fn hello(_: &Request) -> Result<Response> { Ok(envelope::ok(&"hi")) }
    ///
    /// let router = Router::new().route("/mymod/hello", hello);
    /// let response = router.call(&Request::get("/mymod/hello?x=1"))?;
    /// let env: envelope::Envelope<String> = response.body_json()?;
    /// assert_eq!((response.status(), env.err, env.data.as_deref()), (200, 0, Some("hi")));
    /// assert!(router.call(&Request::get("/elsewhere")).is_err());
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn call(&self, request: &Request) -> Result<Response> {
        let path = request.path();
        let exact = self.routes.iter().find(|(route, kind, _)| *kind == MatchKind::Exact && *route == path);
        let prefix = || {
            self.routes
                .iter()
                .filter(|(route, kind, _)| *kind == MatchKind::Prefix && path.starts_with(route))
                .max_by_key(|(route, _, _)| route.len())
        };
        let Some((route, _, handler)) = exact.or_else(prefix) else {
            return Err(crate::Error::NotFound(format!("no route of this mod matches `{path}`")));
        };
        let mut request = request.clone();
        request.set_route(route);
        handler(&request)
    }

    /// Runs the [`Router::on_init`] function, if there is one, as the host does at load: for tests
    /// of a mod that shapes the db in `init`.
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// fn setup() -> Result<()> { Ok(()) }
    /// Router::new().on_init(setup).run_init()?;
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn run_init(&self) -> Result<()> {
        self.init.map_or(Ok(()), |f| f())
    }
}

/// The routes the router claims, for the host.
pub fn routes(router: &Router) -> Vec<wit::Route> {
    router.routes.iter().map(|(path, kind, _)| wit::Route { path: (*path).to_owned(), kind: *kind }).collect()
}

/// Runs the router's init function, if any.
pub fn init(router: &Router) -> Result<(), wit::Error> {
    match router.init {
        Some(f) => f().map_err(Into::into),
        None => Ok(()),
    }
}

/// Calls the handler of the route the host matched.
pub fn handle(router: &Router, request: wit::Request) -> Result<wit::Response, wit::Error> {
    let handler =
        router.routes.iter().find(|(path, _, _)| *path == request.route).map(|(_, _, h)| *h).ok_or_else(|| {
            wit::Error::Failed(format!("the host routed `{}` here but this mod has no such route", request.route))
        })?;
    let request = Request::new(request);
    handler(&request).map(Response::into_wit).map_err(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(_: &Request) -> Result<Response> {
        Ok(Response::text("a"))
    }
    fn b(req: &Request) -> Result<Response> {
        Ok(Response::text(req.rest()))
    }

    fn request(url: &str, route: &str) -> wit::Request {
        wit::Request {
            method: "GET".into(),
            url: url.into(),
            route: route.into(),
            session: None,
            headers: vec![],
            body: vec![],
        }
    }

    #[test]
    fn dispatches_on_the_route_the_host_matched() {
        let r = Router::new().route("/a", a).prefix("/b/", b);
        let body = |out: wit::Response| match out.body.as_slice() {
            [wit::Chunk::Bytes(b)] => b.clone(),
            _ => panic!("expected one literal chunk"),
        };
        assert_eq!(body(handle(&r, request("/b/xyz?q=1", "/b/")).unwrap()), b"xyz");
        assert_eq!(body(handle(&r, request("/a", "/a")).unwrap()), b"a");
    }

    #[test]
    fn call_matches_routes_as_the_host_does() {
        let r = Router::new().route("/b/exact", a).prefix("/b/", b).prefix("/b/longer/", b);
        let body = |url: &str| r.call(&Request::get(url)).map(|out| out.body_preview());
        assert_eq!(body("/b/exact?q=1").unwrap(), "a", "exact beats prefix, query ignored");
        assert_eq!(body("/b/longer/xyz").unwrap(), "xyz", "the longest prefix wins");
        assert_eq!(body("/b/other").unwrap(), "other");
        assert!(matches!(r.call(&Request::get("/c")), Err(crate::Error::NotFound(_))));
    }

    #[test]
    fn an_unknown_route_is_an_error_not_a_panic() {
        let r = Router::new().route("/a", a);
        assert!(matches!(handle(&r, request("/zzz", "/zzz")), Err(wit::Error::Failed(_))));
    }

    #[test]
    fn routes_are_reported_with_their_kind() {
        let r = Router::new().route("/a", a).prefix("/b/", b);
        let got: Vec<_> = routes(&r).into_iter().map(|r| (r.path, r.kind)).collect();
        assert_eq!(got, vec![("/a".to_owned(), MatchKind::Exact), ("/b/".to_owned(), MatchKind::Prefix)]);
    }
}
