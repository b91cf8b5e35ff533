//! Calls between mods: one mod provides functions ([`Router::provide`](crate::Router::provide)),
//! another calls them with [`call`] and gets their answer. Payloads and answers are bytes, JSON by
//! convention (what [`call`] and [`Router::provide_json`](crate::Router::provide_json) do).
//!
//! The caller needs `call = ["<target>"]` under `[grants]` in its `mod.toml`. The callee runs in its
//! own fresh instance, under its own limits and grants, inside the caller's request (under its
//! session's lock), and sees the caller's id and the session. Calls and events nest at most 8 deep,
//! and a mod already running in the chain is not entered again (a cycle is [`Error::Invalid`]).
//!
//! Errors of every call: [`Error::Denied`] without the grant; [`Error::NotFound`] when the target is
//! not loaded or does not provide the function (always, under `modhost test-runner`, where no other
//! mod runs); [`Error::Invalid`] for a cycle; [`Error::TooLarge`] past the 1 MiB payload cap or the
//! nesting bound; the callee's own error as it returned it; [`Error::Failed`] when the callee
//! trapped, ran out its deadline or is quarantined.

use crate::events::parse_payload;
use crate::wit::exports::modhost::plugin::guest as wit;
use crate::wit::modhost::plugin::mods as host;
use crate::{Error, Result};
use serde::{Serialize, de::DeserializeOwned};

/// Calls `function` of mod `target` with `payload` as JSON, and parses its answer as JSON into `R`.
///
/// ```rust,no_run
/// #[derive(serde::Deserialize)]
/// struct Given { ids: Vec<String> }
///
/// let given: Given = modhost_sdk::calls::call("emulator", "give-item", &serde_json::json!({
///     "tpl": "5449016a4bdc2d6f028b456f", "count": 1,
/// }))?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn call<R: DeserializeOwned>(target: &str, function: &str, payload: &(impl Serialize + ?Sized)) -> Result<R> {
    let answer = call_bytes(target, function, &serde_json::to_vec(payload)?)?;
    parse_payload(&answer, &format!("the answer of {target}.{function}"))
}

/// Calls `function` of mod `target` with raw bytes and answers its raw bytes.
///
/// ```rust,no_run
/// let answer = modhost_sdk::calls::call_bytes("other", "ping", b"")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn call_bytes(target: &str, function: &str, payload: &[u8]) -> Result<Vec<u8>> {
    host::call(target, function, payload).map_err(Error::from)
}

/// [`call`], for session `session` (24 lower-case hex digits) rather than the request's: the host
/// takes that session's lock first (unless this chain holds it already, waiting at most 2 s) and the
/// callee sees that session. How one player's request changes another player's profile safely.
///
/// ```rust,no_run
/// let given: serde_json::Value = modhost_sdk::calls::call_for_session(
///     "0123456789abcdef01234567", "emulator", "give-item",
///     &serde_json::json!({"tpl": "5449016a4bdc2d6f028b456f", "count": 1}),
/// )?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
///
/// Errors: as [`call`]; [`Error::Invalid`] for a malformed session id; [`Error::Conflict`] when
/// the session's lock stayed taken.
pub fn call_for_session<R: DeserializeOwned>(
    session: &str,
    target: &str,
    function: &str,
    payload: &(impl Serialize + ?Sized),
) -> Result<R> {
    let answer = call_for_session_bytes(session, target, function, &serde_json::to_vec(payload)?)?;
    parse_payload(&answer, &format!("the answer of {target}.{function}"))
}

/// [`call_bytes`] for session `session` (see [`call_for_session`]).
///
/// ```rust,no_run
/// let answer = modhost_sdk::calls::call_for_session_bytes("0123456789abcdef01234567", "other", "ping", b"")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn call_for_session_bytes(session: &str, target: &str, function: &str, payload: &[u8]) -> Result<Vec<u8>> {
    host::call_for_session(session, target, function, payload).map_err(Error::from)
}

/// A call into one of this mod's functions ([`Router::provide`](crate::Router::provide)).
///
/// ```rust
/// use modhost_sdk::Invocation;
///
/// let call = Invocation::new("greet", br#"{"name":"Bob"}"#.to_vec()).from("other-mod");
/// let payload: serde_json::Value = call.json()?;
/// assert_eq!((call.function(), call.caller(), payload["name"].as_str()), ("greet", "other-mod", Some("Bob")));
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Invocation {
    inner: wit::Invocation,
}

impl Invocation {
    pub(crate) fn from_wit(inner: wit::Invocation) -> Self {
        Invocation { inner }
    }

    #[cfg(test)]
    pub(crate) fn inner_for_tests(self) -> wit::Invocation {
        self.inner
    }

    /// A call of `function` with `payload`, from no mod (caller empty) and no session: for tests,
    /// which hand it to [`Router::run_function`](crate::Router::run_function).
    ///
    /// ```rust
    /// let c = modhost_sdk::Invocation::new("greet", b"{}".to_vec());
    /// assert_eq!((c.function(), c.payload(), c.session()), ("greet", &b"{}"[..], None));
    /// ```
    pub fn new(function: &str, payload: Vec<u8>) -> Self {
        Invocation::from_wit(wit::Invocation {
            function: function.to_owned(),
            payload,
            caller: String::new(),
            session: None,
        })
    }

    /// The same call made by mod `caller`.
    ///
    /// ```rust
    /// assert_eq!(modhost_sdk::Invocation::new("f", vec![]).from("other").caller(), "other");
    /// ```
    pub fn from(mut self, caller: &str) -> Self {
        self.inner.caller = caller.to_owned();
        self
    }

    /// The same call for session `id`.
    ///
    /// ```rust
    /// let c = modhost_sdk::Invocation::new("f", vec![]).with_session("0123456789abcdef01234567");
    /// assert_eq!(c.session(), Some("0123456789abcdef01234567"));
    /// ```
    pub fn with_session(mut self, id: &str) -> Self {
        self.inner.session = Some(id.to_owned());
        self
    }

    /// Which function was called.
    ///
    /// ```rust,no_run
    /// # fn f(c: &modhost_sdk::Invocation) { assert_eq!(c.function(), "greet"); }
    /// ```
    pub fn function(&self) -> &str {
        &self.inner.function
    }

    /// What the caller sent.
    ///
    /// ```rust,no_run
    /// # fn f(c: &modhost_sdk::Invocation) { let n = c.payload().len(); }
    /// ```
    pub fn payload(&self) -> &[u8] {
        &self.inner.payload
    }

    /// The payload parsed as JSON into `T` (an empty payload is JSON `null`).
    ///
    /// ```rust,no_run
    /// # fn f(c: &modhost_sdk::Invocation) -> modhost_sdk::Result<()> {
    /// let args: serde_json::Value = c.json()?;
    /// # Ok(()) }
    /// ```
    pub fn json<T: DeserializeOwned>(&self) -> Result<T> {
        parse_payload(&self.inner.payload, "call payload")
    }

    /// The calling mod's id.
    ///
    /// ```rust,no_run
    /// # fn f(c: &modhost_sdk::Invocation) { assert_eq!(c.caller(), "other-mod"); }
    /// ```
    pub fn caller(&self) -> &str {
        &self.inner.caller
    }

    /// The session the call is for: the request's, or the one the caller named.
    ///
    /// ```rust,no_run
    /// # fn f(c: &modhost_sdk::Invocation) { let s = c.session().unwrap_or("none"); }
    /// ```
    pub fn session(&self) -> Option<&str> {
        self.inner.session.as_deref()
    }
}
