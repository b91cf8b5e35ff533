//! [`Router`]: which function answers which route, which hooks, topics and functions the mod
//! declares, and the glue [`crate::export!`] calls.

use crate::hooks::{Hook, ResponseEdit, Verdict};
use crate::wit::exports::modhost::plugin::guest::{self as guest, Phase};
use crate::wit::modhost::plugin::types::{self as wit, MatchKind};
use crate::{Error, Event, Invocation, Request, Response, Result};
use serde::Serialize;
use std::borrow::Cow;

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

// Hooks, subscribers and functions are boxed closures, not `fn` pointers like route handlers: a mod
// whose hooks come from its configuration needs each one to carry what it was configured with.
type BeforeFn = Box<dyn Fn(&Request) -> Result<Verdict>>;
type AfterFn = Box<dyn Fn(&Request, &Response) -> Result<ResponseEdit>>;
type EventFn = Box<dyn Fn(&Event) -> Result<()>>;
type FunctionFn = Box<dyn Fn(&Invocation) -> Result<Vec<u8>>>;

enum HookFn {
    Before(BeforeFn),
    After(AfterFn),
}

impl HookFn {
    fn phase(&self) -> Phase {
        match self {
            HookFn::Before(_) => Phase::Before,
            HookFn::After(_) => Phase::After,
        }
    }
}

/// Maps routes to handlers, and declares the mod's hooks on other mods' routes, the topics it hears
/// and the functions it provides. The host does the matching (exact beats prefix, the longest prefix
/// wins, the query is ignored) and tells the mod which route or hook matched, so dispatch here is one
/// comparison per entry.
///
/// ```rust
/// use modhost_sdk::{Event, Invocation, Request, Response, Result, Router, Verdict};
///
/// fn items(_: &Request) -> Result<Response> { Ok(Response::db("templates.items")) }
/// fn locale(req: &Request) -> Result<Response> { Ok(Response::text(req.rest())) }
/// fn setup() -> Result<()> { Ok(()) }
/// fn watch(_: &Request) -> Result<Verdict> { Ok(Verdict::Proceed) }
/// fn created(_: &Event) -> Result<()> { Ok(()) }
/// fn ping(_: &Invocation) -> Result<Vec<u8>> { Ok(b"pong".to_vec()) }
///
/// let router = Router::new()
///     .route("/client/items", items)
///     .prefix("/client/locale/", locale)
///     .on_init(setup)
///     .before("/client/game/start", watch)
///     .on("profile.created", created)
///     .provide("ping", ping);
/// ```
#[derive(Default)]
pub struct Router {
    routes: Vec<(Cow<'static, str>, MatchKind, Handler)>,
    init: Option<InitFn>,
    hooks: Vec<(Hook, HookFn)>,
    subscriptions: Vec<(Cow<'static, str>, EventFn)>,
    functions: Vec<(Cow<'static, str>, FunctionFn)>,
    /// Its websocket routes (`sockets.rs`).
    pub(crate) sockets: crate::sockets::SocketRoutes,
    /// Its timers (`timers.rs`).
    pub(crate) timers: crate::timers::TimerSet,
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
    pub fn route(mut self, path: impl Into<Cow<'static, str>>, handler: Handler) -> Self {
        self.routes.push((path.into(), MatchKind::Exact, handler));
        self
    }

    /// Answer requests whose path starts with `prefix` with `handler` ([`Request::rest`] gives the rest).
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// # fn files(req: &Request) -> Result<Response> { Ok(Response::text(req.rest())) }
    /// let r = Router::new().prefix("/files/", files);
    /// ```
    pub fn prefix(mut self, prefix: impl Into<Cow<'static, str>>, handler: Handler) -> Self {
        self.routes.push((prefix.into(), MatchKind::Prefix, handler));
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

    /// Run `hook` before the owner of every request whose path is exactly `path` (priority 0). It sees
    /// the request and decides: [`Verdict::Proceed`], [`Verdict::Edit`] or [`Verdict::Answer`].
    /// Needs `hook = ["<path>"]` under `[grants]` in `mod.toml`.
    ///
    /// One hook per path and phase: a second one on the same path (exact or prefix) and phase is
    /// not declared (the host names a hook by its path alone), and the mod logs a warning.
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// fn watch(_: &Request) -> Result<Verdict> { Ok(Verdict::Proceed) }
    /// let r = Router::new().before("/client/game/start", watch);
    /// ```
    pub fn before(
        self,
        path: impl Into<Cow<'static, str>>,
        hook: impl Fn(&Request) -> Result<Verdict> + 'static,
    ) -> Self {
        self.before_hook(Hook::exact(path), hook)
    }

    /// [`Router::before`] on every request whose path starts with `prefix`.
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// fn watch(_: &Request) -> Result<Verdict> { Ok(Verdict::Proceed) }
    /// let r = Router::new().before_prefix("/client/trading/", watch);
    /// ```
    pub fn before_prefix(
        self,
        prefix: impl Into<Cow<'static, str>>,
        hook: impl Fn(&Request) -> Result<Verdict> + 'static,
    ) -> Self {
        self.before_hook(Hook::prefix(prefix), hook)
    }

    /// [`Router::before`] with the path, kind and priority of `spec`.
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// fn first(_: &Request) -> Result<Verdict> { Ok(Verdict::Proceed) }
    /// let r = Router::new().before_hook(Hook::exact("/client/game/start").priority(100), first);
    /// ```
    pub fn before_hook(mut self, spec: Hook, hook: impl Fn(&Request) -> Result<Verdict> + 'static) -> Self {
        self.hooks.push((spec, HookFn::Before(Box::new(hook))));
        self
    }

    /// Run `hook` after the owner of every request whose path is exactly `path` (priority 0, without
    /// the answer's body: see [`Router::after_hook`] and [`Hook::with_body`]). It sees the request and
    /// the answer so far, and returns what to change ([`ResponseEdit::none`] for nothing). Needs
    /// `hook = ["<path>"]` under `[grants]` in `mod.toml`. One hook per path and phase, as
    /// [`Router::before`].
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// fn stamp(_: &Request, answer: &Response) -> Result<ResponseEdit> {
    ///     Ok(ResponseEdit::none().header(answer, "x-seen", "1"))
    /// }
    /// let r = Router::new().after("/client/game/start", stamp);
    /// ```
    pub fn after(
        self,
        path: impl Into<Cow<'static, str>>,
        hook: impl Fn(&Request, &Response) -> Result<ResponseEdit> + 'static,
    ) -> Self {
        self.after_hook(Hook::exact(path), hook)
    }

    /// [`Router::after`] on every request whose path starts with `prefix`.
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// fn count(_: &Request, _: &Response) -> Result<ResponseEdit> { Ok(ResponseEdit::none()) }
    /// let r = Router::new().after_prefix("/client/", count);
    /// ```
    pub fn after_prefix(
        self,
        prefix: impl Into<Cow<'static, str>>,
        hook: impl Fn(&Request, &Response) -> Result<ResponseEdit> + 'static,
    ) -> Self {
        self.after_hook(Hook::prefix(prefix), hook)
    }

    /// [`Router::after`] with the path, kind, priority and body choice of `spec`.
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// fn wrap(_: &Request, answer: &Response) -> Result<ResponseEdit> {
    ///     let body = answer.body_preview(); // the whole body: the hook asked for it
    ///     Ok(ResponseEdit::none().body(format!("[{body}]").into_bytes()))
    /// }
    /// let r = Router::new().after_hook(Hook::exact("/client/items").with_body(), wrap);
    /// ```
    pub fn after_hook(
        mut self,
        spec: Hook,
        hook: impl Fn(&Request, &Response) -> Result<ResponseEdit> + 'static,
    ) -> Self {
        self.hooks.push((spec, HookFn::After(Box::new(hook))));
        self
    }

    /// Hear the events emitted on `topic` (by other mods: never this one's own). An error is logged
    /// by the host and counted against this mod; the emitter is not told. Several handlers of one
    /// topic run in the order added. Check [`Event::source`] before acting on one: a mod granted the
    /// topic may emit it too.
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// fn created(event: &Event) -> Result<()> {
    ///     if event.source() != "emulator" {
    ///         return Ok(()); // only the game's word counts
    ///     }
    ///     let payload: serde_json::Value = event.json()?;
    ///     log::info(&format!("new profile: {}", payload["nickname"]));
    ///     Ok(())
    /// }
    /// let r = Router::new().on("profile.created", created);
    /// ```
    pub fn on(mut self, topic: impl Into<Cow<'static, str>>, handler: impl Fn(&Event) -> Result<()> + 'static) -> Self {
        self.subscriptions.push((topic.into(), Box::new(handler)));
        self
    }

    /// Provide function `name` (1-64 characters of `[a-z0-9._-]`) to other mods' [`crate::calls`]:
    /// it gets the call and answers bytes (or an error, which the caller gets as it is). One function
    /// per name: a second one is not declared.
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// fn echo(call: &Invocation) -> Result<Vec<u8>> { Ok(call.payload().to_vec()) }
    /// let r = Router::new().provide("echo", echo);
    /// ```
    pub fn provide(
        mut self,
        name: impl Into<Cow<'static, str>>,
        function: impl Fn(&Invocation) -> Result<Vec<u8>> + 'static,
    ) -> Self {
        self.functions.push((name.into(), Box::new(function)));
        self
    }

    /// [`Router::provide`] answering JSON: `function`'s value is serialized as the answer.
    ///
    /// ```rust
    /// # use modhost_sdk::*;
    /// #[derive(serde::Deserialize)]
    /// struct Ask { name: String }
    ///
    /// fn greet(call: &Invocation) -> Result<serde_json::Value> {
    ///     let ask: Ask = call.json()?;
    ///     Ok(serde_json::json!({"greeting": format!("hello, {}", ask.name), "caller": call.caller()}))
    /// }
    /// let r = Router::new().provide_json("greet", greet);
    /// let answer = r.run_function(&Invocation::new("greet", br#"{"name":"Bob"}"#.to_vec()))?;
    /// let answer: serde_json::Value = serde_json::from_slice(&answer)?;
    /// assert_eq!(answer, serde_json::json!({"greeting": "hello, Bob", "caller": ""}));
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn provide_json<R: Serialize>(
        self,
        name: impl Into<Cow<'static, str>>,
        function: impl Fn(&Invocation) -> Result<R> + 'static,
    ) -> Self {
        self.provide(name, move |call| Ok(serde_json::to_vec(&function(call)?)?))
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
        let exact = self.routes.iter().find(|(route, kind, _)| *kind == MatchKind::Exact && route == path);
        let prefix = || {
            self.routes
                .iter()
                .filter(|(route, kind, _)| *kind == MatchKind::Prefix && path.starts_with(route.as_ref()))
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

    /// Runs the before-hook declared on `hook` (its path, as given to [`Router::before`]) on
    /// `request`, as the host does: for tests. No such hook is [`Error::NotFound`].
    ///
    /// ```rust
    /// use modhost_sdk::{envelope, Request, Result, Router, Verdict};
    ///
    /// fn refuse(_: &Request) -> Result<Verdict> { Ok(Verdict::Answer(envelope::error(1, "no"))) }
    ///
    /// let router = Router::new().before("/client/game/start", refuse);
    /// let verdict = router.run_before("/client/game/start", &Request::post("/client/game/start"))?;
    /// assert!(matches!(verdict, Verdict::Answer(_)));
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn run_before(&self, hook: &str, request: &Request) -> Result<Verdict> {
        match self.hook(hook, Phase::Before) {
            Some(HookFn::Before(f)) => f(request),
            _ => Err(Error::NotFound(format!("this mod has no before-hook on `{hook}`"))),
        }
    }

    /// Runs the after-hook declared on `hook` on `request` and `answer`, as the host does: for tests
    /// ([`ResponseEdit::apply`] shows the edited answer). No such hook is [`Error::NotFound`].
    ///
    /// ```rust
    /// use modhost_sdk::{Request, Response, ResponseEdit, Result, Router};
    ///
    /// fn teapot(_: &Request, _: &Response) -> Result<ResponseEdit> { Ok(ResponseEdit::none().status(418)) }
    ///
    /// let router = Router::new().after("/x", teapot);
    /// let edit = router.run_after("/x", &Request::get("/x"), &Response::text("hi"))?;
    /// assert_eq!(edit.apply(Response::text("hi")).status(), 418);
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn run_after(&self, hook: &str, request: &Request, answer: &Response) -> Result<ResponseEdit> {
        match self.hook(hook, Phase::After) {
            Some(HookFn::After(f)) => f(request, answer),
            _ => Err(Error::NotFound(format!("this mod has no after-hook on `{hook}`"))),
        }
    }

    /// Delivers `event` to this mod's handlers of its topic, as the host does: for tests. A topic the
    /// mod does not hear is [`Error::NotFound`].
    ///
    /// ```rust
    /// use modhost_sdk::{Event, Result, Router};
    ///
    /// fn heard(_: &Event) -> Result<()> { Ok(()) }
    ///
    /// let router = Router::new().on("a.b", heard);
    /// router.run_event(&Event::new("a.b", b"{}".to_vec()))?;
    /// assert!(router.run_event(&Event::new("c", vec![])).is_err());
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn run_event(&self, event: &Event) -> Result<()> {
        let mut handlers = self.subscriptions.iter().filter(|(topic, _)| topic == event.topic()).peekable();
        if handlers.peek().is_none() {
            return Err(Error::NotFound(format!("this mod does not hear `{}`", event.topic())));
        }
        handlers.try_for_each(|(_, handler)| handler(event))
    }

    /// Runs the function `call` names, as the host does: for tests. A function the mod does not
    /// provide is [`Error::NotFound`].
    ///
    /// ```rust
    /// use modhost_sdk::{Invocation, Result, Router};
    ///
    /// fn echo(call: &Invocation) -> Result<Vec<u8>> { Ok(call.payload().to_vec()) }
    ///
    /// let router = Router::new().provide("echo", echo);
    /// assert_eq!(router.run_function(&Invocation::new("echo", b"hi".to_vec()))?, b"hi");
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn run_function(&self, call: &Invocation) -> Result<Vec<u8>> {
        match self.functions.iter().find(|(name, _)| name == call.function()) {
            Some((_, function)) => function(call),
            None => Err(Error::NotFound(format!("this mod provides no function `{}`", call.function()))),
        }
    }

    /// The first hook declared on `path` in `phase` (later ones are not declared: see `declare`).
    fn hook(&self, path: &str, phase: Phase) -> Option<&HookFn> {
        self.hooks.iter().find(|(spec, f)| spec.path == path && f.phase() == phase).map(|(_, f)| f)
    }
}

/// The routes the router claims, for the host.
pub fn routes(router: &Router) -> Vec<wit::Route> {
    router.routes.iter().map(|(path, kind, _)| wit::Route { path: path.to_string(), kind: *kind }).collect()
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

/// What the router declares, for the host: each hook, topic and function once (the first of a
/// path and phase, of a topic, of a name), with a warning in the log for each one left out.
pub fn declare(router: &Router) -> guest::Declarations {
    let (declarations, left_out) = declarations(router);
    for warning in left_out {
        crate::log::warn(&warning);
    }
    declarations
}

/// [`declare`]'s answer, and a sentence for each entry left out (a second hook on a path and phase,
/// a second function of a name; a second handler of a topic is no repeat, it runs too).
fn declarations(router: &Router) -> (guest::Declarations, Vec<String>) {
    let mut left_out = Vec::new();
    let mut hooks: Vec<guest::Hook> = Vec::new();
    for (spec, f) in &router.hooks {
        let phase = f.phase();
        if hooks.iter().any(|h| h.route.path == spec.path && h.phase == phase) {
            left_out.push(format!("a second {phase:?} hook on `{}` is left out: one per path and phase", spec.path));
            continue;
        }
        hooks.push(guest::Hook {
            route: wit::Route { path: spec.path.to_string(), kind: spec.kind },
            phase,
            priority: spec.priority,
            // Only an after-hook reads an answer's body; a before-hook always has the request's.
            body: spec.body && phase == Phase::After,
        });
    }
    let mut subscriptions: Vec<String> = Vec::new();
    for (topic, _) in &router.subscriptions {
        if !subscriptions.iter().any(|t| t == topic) {
            subscriptions.push(topic.to_string());
        }
    }
    let mut functions: Vec<String> = Vec::new();
    for (name, _) in &router.functions {
        if functions.iter().any(|n| n == name) {
            left_out.push(format!("a second function `{name}` is left out: the first one answers"));
        } else {
            functions.push(name.to_string());
        }
    }
    (guest::Declarations { hooks, subscriptions, functions }, left_out)
}

/// Runs the before-hook the host named.
pub fn before(router: &Router, hook: &str, request: wit::Request) -> Result<guest::Verdict, wit::Error> {
    if router.hook(hook, Phase::Before).is_none() {
        return Err(unrouted("before-hook", hook));
    }
    router.run_before(hook, &Request::new(request)).map(Verdict::into_wit).map_err(Into::into)
}

/// Runs the after-hook the host named.
pub fn after(
    router: &Router,
    hook: &str,
    request: wit::Request,
    response: wit::Response,
) -> Result<Option<guest::ResponseEdit>, wit::Error> {
    if router.hook(hook, Phase::After).is_none() {
        return Err(unrouted("after-hook", hook));
    }
    let (request, response) = (Request::new(request), Response::from_wit(response));
    router.run_after(hook, &request, &response).map(ResponseEdit::into_wit).map_err(Into::into)
}

/// Delivers the event the host brought.
pub fn on_event(router: &Router, event: guest::Event) -> Result<(), wit::Error> {
    let event = Event::from_wit(event);
    if !router.subscriptions.iter().any(|(topic, _)| topic == event.topic()) {
        return Err(wit::Error::Failed(format!(
            "the host delivered `{}` here but this mod does not hear it",
            event.topic()
        )));
    }
    router.run_event(&event).map_err(Into::into)
}

/// Runs the function the host named.
pub fn invoke(router: &Router, call: guest::Invocation) -> Result<Vec<u8>, wit::Error> {
    let call = Invocation::from_wit(call);
    if !router.functions.iter().any(|(name, _)| name == call.function()) {
        return Err(wit::Error::Failed(format!(
            "the host called `{}` here but this mod has no such function",
            call.function()
        )));
    }
    router.run_function(&call).map_err(Into::into)
}

/// The host asked for a hook this mod does not have: the host's mistake, not a missing value, so
/// `failed` (as an unknown route in `handle`).
fn unrouted(what: &str, hook: &str) -> wit::Error {
    wit::Error::Failed(format!("the host ran {what} `{hook}` here but this mod has none"))
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

#[cfg(test)]
mod guest_tests {
    use super::*;
    use crate::Hook;

    fn tag(req: &Request) -> Result<Verdict> {
        Ok(Verdict::with_header(req, "X-Tag", "t"))
    }
    fn status(_: &Request, _: &Response) -> Result<ResponseEdit> {
        Ok(ResponseEdit::none().status(299))
    }
    fn nothing(_: &Request, _: &Response) -> Result<ResponseEdit> {
        Ok(ResponseEdit::none())
    }
    fn missing(_: &Request) -> Result<Verdict> {
        Err(Error::NotFound("the hook's own not-found".into()))
    }

    fn request() -> wit::Request {
        wit::Request {
            method: "GET".into(),
            url: "/x".into(),
            route: "/x".into(),
            session: None,
            headers: vec![("a".into(), "1".into())],
            body: vec![],
        }
    }

    fn response() -> wit::Response {
        wit::Response { status: 200, headers: vec![], body: vec![] }
    }

    #[test]
    fn declares_each_hook_once_per_path_and_phase_and_body_only_after() {
        let r = Router::new()
            .before_hook(Hook::exact("/x").priority(7).with_body(), tag)
            .before("/x", missing)
            .after_hook(Hook::prefix("/x").with_body(), status)
            .on("t", |_| Ok(()))
            .on("t", |_| Ok(()))
            .provide("f", |_| Ok(vec![]))
            .provide("f", |_| Ok(vec![1]));
        let (d, left_out) = declarations(&r);
        assert_eq!(left_out.len(), 2, "{left_out:?}");
        let hooks: Vec<_> =
            d.hooks.iter().map(|h| (h.route.path.as_str(), h.route.kind, h.phase, h.priority, h.body)).collect();
        assert_eq!(
            hooks,
            [("/x", MatchKind::Exact, Phase::Before, 7, false), ("/x", MatchKind::Prefix, Phase::After, 0, true)]
        );
        assert_eq!((d.subscriptions, d.functions), (vec!["t".to_owned()], vec!["f".to_owned()]));
        assert_eq!(
            invoke(&r, Invocation::new("f", vec![]).inner_for_tests()).unwrap(),
            Vec::<u8>::new(),
            "the first wins"
        );
    }

    #[test]
    fn dispatches_hooks_by_path_and_phase() {
        let r = Router::new().before("/x", tag).after("/x", status).after("/y", nothing);
        let Ok(guest::Verdict::Edit(edit)) = before(&r, "/x", request()) else { panic!("an edit") };
        assert_eq!(edit.headers.unwrap(), [("a".to_owned(), "1".to_owned()), ("x-tag".to_owned(), "t".to_owned())]);
        let edit = after(&r, "/x", request(), response()).unwrap().expect("an edit");
        assert_eq!((edit.status, edit.headers.is_none(), edit.body.is_none()), (Some(299), true, true));
        assert!(after(&r, "/y", request(), response()).unwrap().is_none(), "no change is none");
        assert!(matches!(before(&r, "/y", request()), Err(wit::Error::Failed(_))), "no before-hook on /y");
    }

    #[test]
    fn a_hooks_own_not_found_passes_as_it_is() {
        let r = Router::new().before("/x", missing);
        assert!(matches!(before(&r, "/x", request()), Err(wit::Error::NotFound(m)) if m.contains("own")));
    }

    #[test]
    fn unknown_topics_and_functions_are_failures_not_panics() {
        let r = Router::new();
        assert!(matches!(on_event(&r, Event::new("t", vec![]).inner_for_tests()), Err(wit::Error::Failed(_))));
        assert!(matches!(invoke(&r, Invocation::new("f", vec![]).inner_for_tests()), Err(wit::Error::Failed(_))));
        let (d, left_out) = declarations(&r);
        assert!(left_out.is_empty());
        assert!(d.hooks.is_empty() && d.subscriptions.is_empty() && d.functions.is_empty());
    }
}
