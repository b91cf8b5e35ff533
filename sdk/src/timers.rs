//! Timers: work a mod schedules for later, once ([`schedule`]) or every N seconds
//! ([`Router::every`]), that survives restarts.
//!
//! The host runs a timer that came due in a fresh instance, as it runs a request: a one-shot
//! timer's handler is the router's [`Router::on_timer`] of its name, a periodic one's is the
//! function given to [`Router::every`]. A timer scheduled for a session runs under that session's
//! lock, so it never interleaves with that player's requests, and with that session's rights (it may
//! push to it); one without a session runs outside any lock. A timer names the session of the call
//! that schedules it (the request's, or a timer's own), any other only with `timers = "any"` under
//! `[grants]`. A firing takes the lock only when it is free, so it never keeps the player's requests
//! waiting: it is tried again a second later. A timer that came due while the server was off fires once at the next start, with
//! [`Fired::late_ms`] saying how late; a periodic timer then goes on every N seconds (it never
//! fires the missed ones in a burst, and never overlaps itself).
//!
//! Bounds: names are 1-64 characters of `[a-z0-9._-]`, payloads at most 64 KiB, delays at most 30
//! days, at most 1000 one-shot timers pending per mod, at most 16 periodic timers of 1 to 86 400 s.
//! A handler that fails (an error, a panic, its deadline) is logged and counted in
//! `/modhost/mods` (`timers_failed`); a one-shot that failed is not fired again.

use crate::wit::exports::modhost::plugin::realtime as wit;
use crate::wit::modhost::plugin::timers as host;
use crate::wit::modhost::plugin::types;
use crate::{Error, Result, Router};
use serde::{Serialize, de::DeserializeOwned};
use std::borrow::Cow;
use std::time::Duration;

/// Schedules the timer `name` to fire once, `delay` from now, with `payload`, for `session` when
/// given (its handler then runs under that session's lock). Answers the timer's id, for [`cancel`]
/// and [`Fired::id`]. The timer is stored when this returns: it fires even if the server restarts
/// first.
///
/// ```rust,no_run
/// use std::time::Duration;
/// let id = modhost_sdk::timers::schedule("insurance.return", Duration::from_secs(3600), Some("0123456789abcdef01234567"), b"{}")?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
///
/// `session` must be the session of the call scheduling it (the request's, or the firing timer's own):
/// any other, or any from a call without one (`init`, a timer without a session), needs
/// `timers = "any"` under `[grants]`.
///
/// Errors: [`Error::Invalid`] for a bad name or session id; [`Error::Denied`] for a session the call
/// does not handle, without the grant; [`Error::TooLarge`] for a payload over
/// 64 KiB, a delay over 30 days or a 1001st pending timer; [`Error::Io`] when the host could not
/// store it (it is not scheduled).
pub fn schedule(name: &str, delay: Duration, session: Option<&str>, payload: &[u8]) -> Result<String> {
    // Past `u64::MAX` ms is past the 30-day cap too: the host says so.
    let delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
    host::schedule(name, delay_ms, session, payload).map_err(Error::from)
}

/// [`schedule`] with `payload` serialized as JSON (read back with [`Fired::json`]).
///
/// ```rust,no_run
/// use std::time::Duration;
/// let id = modhost_sdk::timers::schedule_json("craft.done", Duration::from_secs(90), None, &serde_json::json!({"recipe": 7}))?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
pub fn schedule_json<T: Serialize + ?Sized>(
    name: &str,
    delay: Duration,
    session: Option<&str>,
    payload: &T,
) -> Result<String> {
    schedule(name, delay, session, &serde_json::to_vec(payload)?)
}

/// Cancels the one-shot timer `id` (as [`schedule`] answered it). Answers whether it was pending:
/// `false` for one that fired already, was cancelled, or never was.
///
/// ```rust,no_run
/// # let id = String::new();
/// let was_pending = modhost_sdk::timers::cancel(&id)?;
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
///
/// Errors: [`Error::Io`] when the host could not write the store.
pub fn cancel(id: &str) -> Result<bool> {
    host::cancel(id).map_err(Error::from)
}

/// A timer that came due, as its handler gets it.
///
/// ```rust
/// use modhost_sdk::timers::Fired;
///
/// let fired = Fired::new("craft.done", br#"{"recipe":7}"#.to_vec()).with_session("0123456789abcdef01234567");
/// let payload: serde_json::Value = fired.json()?;
/// assert_eq!((fired.name(), fired.session(), payload["recipe"].as_u64()), ("craft.done", Some("0123456789abcdef01234567"), Some(7)));
/// # Ok::<(), modhost_sdk::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Fired {
    inner: wit::Fired,
}

impl Fired {
    /// A one-shot timer `name` carrying `payload`, due now, with no session and an id of `test`:
    /// for tests, which hand it to [`Router::run_timer`].
    ///
    /// ```rust
    /// let f = modhost_sdk::timers::Fired::new("a.b", b"x".to_vec());
    /// assert_eq!((f.name(), f.payload(), f.id(), f.session(), f.late_ms()), ("a.b", &b"x"[..], Some("test"), None, 0));
    /// ```
    pub fn new(name: &str, payload: Vec<u8>) -> Self {
        Fired {
            inner: wit::Fired {
                name: name.to_owned(),
                id: Some("test".to_owned()),
                session: None,
                payload,
                due_ms: 0,
                late_ms: 0,
            },
        }
    }

    /// A firing of the periodic timer `name` (no id, no payload): for tests.
    ///
    /// ```rust
    /// let f = modhost_sdk::timers::Fired::periodic("tick");
    /// assert!(f.is_periodic() && f.payload().is_empty());
    /// ```
    pub fn periodic(name: &str) -> Self {
        let mut fired = Fired::new(name, Vec::new());
        fired.inner.id = None;
        fired
    }

    /// The same firing for session `id`.
    ///
    /// ```rust
    /// let f = modhost_sdk::timers::Fired::new("a", vec![]).with_session("0123456789abcdef01234567");
    /// assert_eq!(f.session(), Some("0123456789abcdef01234567"));
    /// ```
    pub fn with_session(mut self, id: &str) -> Self {
        self.inner.session = Some(id.to_owned());
        self
    }

    /// The same firing, due at `due_ms` (ms since the Unix epoch) and `late_ms` late.
    ///
    /// ```rust
    /// let f = modhost_sdk::timers::Fired::new("a", vec![]).with_times(1_000, 250);
    /// assert_eq!((f.due_ms(), f.late_ms()), (1_000, 250));
    /// ```
    pub fn with_times(mut self, due_ms: u64, late_ms: u64) -> Self {
        (self.inner.due_ms, self.inner.late_ms) = (due_ms, late_ms);
        self
    }

    pub(crate) fn from_wit(inner: wit::Fired) -> Self {
        Fired { inner }
    }

    /// The timer's name.
    ///
    /// ```rust,no_run
    /// # fn f(t: &modhost_sdk::timers::Fired) { assert_eq!(t.name(), "craft.done"); }
    /// ```
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// A one-shot timer's id, as [`schedule`] answered it; `None` for a periodic timer.
    ///
    /// ```rust,no_run
    /// # fn f(t: &modhost_sdk::timers::Fired) { let id = t.id(); }
    /// ```
    pub fn id(&self) -> Option<&str> {
        self.inner.id.as_deref()
    }

    /// Whether it is a periodic timer's firing ([`Router::every`]).
    ///
    /// ```rust,no_run
    /// # fn f(t: &modhost_sdk::timers::Fired) { assert!(!t.is_periodic()); }
    /// ```
    pub fn is_periodic(&self) -> bool {
        self.inner.id.is_none()
    }

    /// The session it was scheduled for, if any: its lock is held while the handler runs.
    ///
    /// ```rust,no_run
    /// # fn f(t: &modhost_sdk::timers::Fired) { if let Some(session) = t.session() {} }
    /// ```
    pub fn session(&self) -> Option<&str> {
        self.inner.session.as_deref()
    }

    /// What [`schedule`] was given (empty for a periodic timer).
    ///
    /// ```rust,no_run
    /// # fn f(t: &modhost_sdk::timers::Fired) { let n = t.payload().len(); }
    /// ```
    pub fn payload(&self) -> &[u8] {
        &self.inner.payload
    }

    /// The payload parsed as JSON into `T` (an empty payload is JSON `null`).
    ///
    /// ```rust,no_run
    /// # fn f(t: &modhost_sdk::timers::Fired) -> modhost_sdk::Result<()> {
    /// #[derive(serde::Deserialize)]
    /// struct Craft { recipe: u32 }
    /// let craft: Craft = t.json()?;
    /// # Ok(()) }
    /// ```
    pub fn json<T: DeserializeOwned>(&self) -> Result<T> {
        let bytes: &[u8] = if self.inner.payload.is_empty() { b"null" } else { &self.inner.payload };
        Ok(serde_json::from_slice(bytes)?)
    }

    /// When it was due, in ms since the Unix epoch.
    ///
    /// ```rust,no_run
    /// # fn f(t: &modhost_sdk::timers::Fired) { let due = t.due_ms(); }
    /// ```
    pub fn due_ms(&self) -> u64 {
        self.inner.due_ms
    }

    /// How late it fires, in ms: large when it came due while the server was off.
    ///
    /// ```rust,no_run
    /// # fn f(t: &modhost_sdk::timers::Fired) { if t.late_ms() > 60_000 { /* caught up after a restart */ } }
    /// ```
    pub fn late_ms(&self) -> u64 {
        self.inner.late_ms
    }
}

type TimerFn = Box<dyn Fn(&Fired) -> Result<()>>;

/// The timers a [`crate::Router`] declares and handles.
#[derive(Default)]
pub(crate) struct TimerSet {
    /// [`Router::every`]: declared to the host at load.
    periodic: Vec<(Cow<'static, str>, u32, TimerFn)>,
    /// [`Router::on_timer`]: the handlers of one-shot timers, by name.
    once: Vec<(Cow<'static, str>, TimerFn)>,
}

impl TimerSet {
    /// The periodic timers, for `declare-realtime` (one per name: the first).
    pub(crate) fn declared(&self) -> Vec<wit::Periodic> {
        let mut declared: Vec<wit::Periodic> = Vec::new();
        for (name, every_s, _) in &self.periodic {
            if !declared.iter().any(|p| p.name == *name) {
                declared.push(wit::Periodic { name: name.to_string(), every_s: *every_s });
            }
        }
        declared
    }

    pub(crate) fn fire(&self, timer: wit::Fired) -> Result<(), types::Error> {
        self.run(&Fired::from_wit(timer)).map_err(types::Error::from)
    }

    fn run(&self, fired: &Fired) -> Result<()> {
        let handler = match fired.is_periodic() {
            true => self.periodic.iter().find(|(name, _, _)| name == fired.name()).map(|(_, _, f)| f),
            false => self.once.iter().find(|(name, _)| name == fired.name()).map(|(_, f)| f),
        };
        match handler {
            Some(handler) => handler(fired),
            None => Err(Error::NotFound(format!(
                "this mod handles no {} timer `{}`",
                if fired.is_periodic() { "periodic" } else { "one-shot" },
                fired.name()
            ))),
        }
    }
}

impl Router {
    /// Run `handler` every `every_s` seconds (1 to 86 400), from the mod's load on: the periodic
    /// timer `name` (1-64 characters of `[a-z0-9._-]`). It runs outside any session lock, never
    /// overlaps itself, and after a restart that missed it fires once, late. At most 16 per mod; a
    /// name declared twice keeps the first.
    ///
    /// ```rust
    /// use modhost_sdk::{timers::Fired, Result, Router};
    ///
    /// fn restock(_: &Fired) -> Result<()> { Ok(()) }
    /// let r = Router::new().every("flea.restock", 60, restock);
    /// r.run_timer(&Fired::periodic("flea.restock"))?;
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn every(
        mut self,
        name: impl Into<Cow<'static, str>>,
        every_s: u32,
        handler: impl Fn(&Fired) -> Result<()> + 'static,
    ) -> Self {
        self.timers.periodic.push((name.into(), every_s, Box::new(handler)));
        self
    }

    /// Handle the one-shot timers named `name` ([`schedule`]) with `handler`.
    ///
    /// ```rust
    /// use modhost_sdk::{timers::Fired, Result, Router};
    ///
    /// fn returned(t: &Fired) -> Result<()> {
    ///     let items: Vec<String> = t.json()?;
    ///     modhost_sdk::log::info(&format!("{} insured items back for {:?}", items.len(), t.session()));
    ///     Ok(())
    /// }
    /// let r = Router::new().on_timer("insurance.return", returned);
    /// ```
    pub fn on_timer(
        mut self,
        name: impl Into<Cow<'static, str>>,
        handler: impl Fn(&Fired) -> Result<()> + 'static,
    ) -> Self {
        self.timers.once.push((name.into(), Box::new(handler)));
        self
    }

    /// Runs the handler of `fired` as the host would when it comes due: for tests. A timer the
    /// router has no handler for is [`Error::NotFound`].
    ///
    /// ```rust
    /// use modhost_sdk::{timers::Fired, Result, Router};
    ///
    /// fn done(t: &Fired) -> Result<()> { assert_eq!(t.payload(), b"7"); Ok(()) }
    /// let r = Router::new().on_timer("craft.done", done);
    /// r.run_timer(&Fired::new("craft.done", b"7".to_vec()))?;
    /// assert!(r.run_timer(&Fired::new("other", vec![])).is_err());
    /// assert!(r.run_timer(&Fired::periodic("craft.done")).is_err(), "one-shot handlers are not periodic ones");
    /// # Ok::<(), modhost_sdk::Error>(())
    /// ```
    pub fn run_timer(&self, fired: &Fired) -> Result<()> {
        self.timers.run(fired)
    }
}
