//! Events: a mod emits a payload on a topic, and every mod that subscribes to the topic
//! ([`Router::on`](crate::Router::on)) hears it, in load order, before [`emit`] returns.
//!
//! Topics are 1-128 characters of `[a-z0-9._/-]`; payloads are JSON by convention, at most 1 MiB.
//! A mod emits its own topics (its id, then `.` or `/`: `my-mod.thing-happened`) and others only
//! under an `emit` grant in its `mod.toml`; every subscriber sees who emitted an event
//! ([`Event::source`], set by the host). The emitter never hears its own event. A subscriber runs
//! under its own deadline (the emitter's stops meanwhile); one that fails is logged, counted against
//! itself and skipped: [`emit`] answers how many handled it. Events and calls nest at most 8 deep, and a mod already running in
//! the chain is not entered again: a cycle is [`Error::Invalid`], not a hang.

use crate::wit::exports::modhost::plugin::guest as wit;
use crate::wit::modhost::plugin::mods as host;
use crate::{Error, Result};
use serde::{Serialize, de::DeserializeOwned};

/// Emits `payload` as JSON on `topic`; answers how many subscribers handled it without failing
/// (0 when nobody subscribes, as under `modhost test-runner`, where no other mod runs).
///
/// ```rust,no_run
/// // From mod `quests`: its own topic.
/// let heard = modhost_sdk::events::emit("quests.done", &serde_json::json!({"quest": "intro"}))?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
///
/// Errors: [`Error::Invalid`] for a bad topic or a cycle (nothing is delivered),
/// [`Error::Denied`] for a topic that is not the mod's own without an `emit` grant (nothing is
/// delivered), [`Error::TooLarge`] past the payload cap or the nesting bound.
pub fn emit<T: Serialize + ?Sized>(topic: &str, payload: &T) -> Result<u32> {
    emit_bytes(topic, &serde_json::to_vec(payload)?)
}

/// Emits raw bytes on `topic` (see [`emit`]).
///
/// ```rust,no_run
/// // From mod `raw`: its own topic.
/// modhost_sdk::events::emit_bytes("raw.ping", b"")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn emit_bytes(topic: &str, payload: &[u8]) -> Result<u32> {
    host::emit(topic, payload).map_err(Error::from)
}

/// An event delivered to a subscriber ([`Router::on`](crate::Router::on)).
///
/// ```rust
/// use modhost_sdk::Event;
///
/// let event = Event::new("profile.created", br#"{"nickname":"Bob"}"#.to_vec()).from("emulator");
/// let payload: serde_json::Value = event.json()?;
/// assert_eq!((event.topic(), event.source(), payload["nickname"].as_str()), ("profile.created", "emulator", Some("Bob")));
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Event {
    inner: wit::Event,
}

impl Event {
    pub(crate) fn from_wit(inner: wit::Event) -> Self {
        Event { inner }
    }

    #[cfg(test)]
    pub(crate) fn inner_for_tests(self) -> wit::Event {
        self.inner
    }

    /// An event on `topic` carrying `payload`, from no mod (source empty) and no session: for tests,
    /// which hand it to [`Router::run_event`](crate::Router::run_event).
    ///
    /// ```rust
    /// let e = modhost_sdk::Event::new("a.b", b"{}".to_vec());
    /// assert_eq!((e.topic(), e.payload(), e.session()), ("a.b", &b"{}"[..], None));
    /// ```
    pub fn new(topic: &str, payload: Vec<u8>) -> Self {
        Event::from_wit(wit::Event { topic: topic.to_owned(), payload, source: String::new(), session: None })
    }

    /// The same event as emitted by mod `source`.
    ///
    /// ```rust
    /// assert_eq!(modhost_sdk::Event::new("a", vec![]).from("emulator").source(), "emulator");
    /// ```
    pub fn from(mut self, source: &str) -> Self {
        self.inner.source = source.to_owned();
        self
    }

    /// The same event in session `id`'s request.
    ///
    /// ```rust
    /// let e = modhost_sdk::Event::new("a", vec![]).with_session("0123456789abcdef01234567");
    /// assert_eq!(e.session(), Some("0123456789abcdef01234567"));
    /// ```
    pub fn with_session(mut self, id: &str) -> Self {
        self.inner.session = Some(id.to_owned());
        self
    }

    /// Its topic.
    ///
    /// ```rust,no_run
    /// # fn f(e: &modhost_sdk::Event) { assert_eq!(e.topic(), "profile.created"); }
    /// ```
    pub fn topic(&self) -> &str {
        &self.inner.topic
    }

    /// What the emitter sent.
    ///
    /// ```rust,no_run
    /// # fn f(e: &modhost_sdk::Event) { let n = e.payload().len(); }
    /// ```
    pub fn payload(&self) -> &[u8] {
        &self.inner.payload
    }

    /// The payload parsed as JSON into `T` (an empty payload is JSON `null`).
    ///
    /// ```rust,no_run
    /// # fn f(e: &modhost_sdk::Event) -> modhost_sdk::Result<()> {
    /// #[derive(serde::Deserialize)]
    /// struct Created { session: String, nickname: String }
    /// let created: Created = e.json()?;
    /// # Ok(()) }
    /// ```
    pub fn json<T: DeserializeOwned>(&self) -> Result<T> {
        parse_payload(&self.inner.payload, "event payload")
    }

    /// The id of the mod that emitted it, set by the host: an emitter cannot choose it. A mod the
    /// player granted another's topic (`emit` under `[grants]`) can emit it too, so check the source
    /// before acting on an event (the game's come from `emulator`).
    ///
    /// ```rust,no_run
    /// # fn f(e: &modhost_sdk::Event) -> modhost_sdk::Result<()> {
    /// if e.source() != "emulator" {
    ///     return Ok(()); // not the game's: ignore it
    /// }
    /// # Ok(()) }
    /// ```
    pub fn source(&self) -> &str {
        &self.inner.source
    }

    /// The session of the request it happens in, if any.
    ///
    /// ```rust,no_run
    /// # fn f(e: &modhost_sdk::Event) { let key = e.session().map(|s| format!("seen.{s}")); }
    /// ```
    pub fn session(&self) -> Option<&str> {
        self.inner.session.as_deref()
    }
}

/// `bytes` as JSON into `T`, an empty (or all-whitespace) payload reading as `null`, as a request
/// body does.
pub(crate) fn parse_payload<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T> {
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) { b"null" } else { bytes };
    serde_json::from_slice(bytes).map_err(|e| Error::Json(format!("{what}: {e}")))
}
