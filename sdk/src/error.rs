//! The one error type of the SDK: the host's WIT `error` cases, plus JSON (de)serialization failures.

use crate::wit::modhost::plugin::types::Error as WitError;
use std::fmt;

/// Everything a host call or a helper of this crate can fail with.
///
/// The first cases are the host's answers (see `wit/types.wit`); match on them to decide what to do:
///
/// ```rust,no_run
/// use modhost_sdk::{store, Error};
///
/// match store::get::<serde_json::Value>("profile.0123456789abcdef01234567") {
///     Ok(Some(profile)) => { /* use it */ }
///     Ok(None) => { /* never written: create one */ }
///     // Present but unreadable: do NOT create a fresh profile over it.
///     Err(Error::Unreadable(why)) => panic!("profile unreadable: {why}"),
///     Err(other) => panic!("{other}"),
/// }
/// ```
///
/// The enum is `#[non_exhaustive]`: a later modhost may add a case (a new WIT error), and a mod that
/// matches on it keeps compiling, because it must already have a `_` or binding arm.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The db path or store key does not exist.
    NotFound(String),
    /// An argument was malformed (path, key, JSON text).
    Invalid(String),
    /// The value is of the wrong kind for the call (`keys` of an array, say).
    WrongKind(String),
    /// A stored value exists but could not be read. Not the same as missing.
    Unreadable(String),
    /// Over a limit.
    TooLarge(String),
    /// The mod has no grant for this write.
    Denied(String),
    /// A compare-and-set found another version: another write came first (see
    /// [`store::set_if_version`](crate::store::set_if_version)).
    Conflict(String),
    /// The host failed to do I/O; nothing was changed.
    Io(String),
    /// The mod failed: the host answers 500 with this reason.
    Failed(String),
    /// A value did not (de)serialize as the Rust type asked for.
    Json(String),
}

/// `Result` with this crate's [`Error`].
///
/// ```rust
/// fn parse(n: &str) -> modhost_sdk::Result<u32> {
///     n.parse().map_err(|e| modhost_sdk::Error::Invalid(format!("{n}: {e}")))
/// }
/// assert!(parse("7").is_ok());
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A [`Error::Failed`] with this message: the usual way for a handler to give up.
    ///
    /// ```rust
    /// let e = modhost_sdk::Error::failed("the trader has no such offer");
    /// assert_eq!(e.to_string(), "failed: the trader has no such offer");
    /// ```
    pub fn failed(message: impl Into<String>) -> Self {
        Error::Failed(message.into())
    }

    /// The case's name as the WIT spells it (`not-found`, `invalid`, `wrong-kind`, `unreadable`,
    /// `too-large`, `denied`, `conflict`, `io`, `failed`), or `json` for [`Error::Json`]: for
    /// answers that report an error as data.
    ///
    /// ```rust
    /// assert_eq!(modhost_sdk::Error::NotFound("x".into()).kind(), "not-found");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            Error::NotFound(_) => "not-found",
            Error::Invalid(_) => "invalid",
            Error::WrongKind(_) => "wrong-kind",
            Error::Unreadable(_) => "unreadable",
            Error::TooLarge(_) => "too-large",
            Error::Denied(_) => "denied",
            Error::Conflict(_) => "conflict",
            Error::Io(_) => "io",
            Error::Failed(_) => "failed",
            Error::Json(_) => "json",
        }
    }

    /// The sentence the case carries.
    ///
    /// ```rust
    /// assert_eq!(modhost_sdk::Error::failed("why").message(), "why");
    /// ```
    pub fn message(&self) -> &str {
        self.parts().1
    }

    fn parts(&self) -> (&'static str, &str) {
        match self {
            Error::NotFound(m) => ("not found", m),
            Error::Invalid(m) => ("invalid", m),
            Error::WrongKind(m) => ("wrong kind", m),
            Error::Unreadable(m) => ("unreadable", m),
            Error::TooLarge(m) => ("too large", m),
            Error::Denied(m) => ("denied", m),
            Error::Conflict(m) => ("conflict", m),
            Error::Io(m) => ("i/o", m),
            Error::Failed(m) => ("failed", m),
            Error::Json(m) => ("json", m),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, message) = self.parts();
        write!(f, "{kind}: {message}")
    }
}

impl std::error::Error for Error {}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Json(e.to_string())
    }
}

impl From<WitError> for Error {
    fn from(e: WitError) -> Self {
        match e {
            WitError::NotFound(m) => Error::NotFound(m),
            WitError::Invalid(m) => Error::Invalid(m),
            WitError::WrongKind(m) => Error::WrongKind(m),
            WitError::Unreadable(m) => Error::Unreadable(m),
            WitError::TooLarge(m) => Error::TooLarge(m),
            WitError::Denied(m) => Error::Denied(m),
            WitError::Conflict(m) => Error::Conflict(m),
            WitError::Io(m) => Error::Io(m),
            WitError::Failed(m) => Error::Failed(m),
        }
    }
}

impl From<Error> for WitError {
    fn from(e: Error) -> Self {
        match e {
            Error::NotFound(m) => WitError::NotFound(m),
            Error::Invalid(m) => WitError::Invalid(m),
            Error::WrongKind(m) => WitError::WrongKind(m),
            Error::Unreadable(m) => WitError::Unreadable(m),
            Error::TooLarge(m) => WitError::TooLarge(m),
            Error::Denied(m) => WitError::Denied(m),
            Error::Conflict(m) => WitError::Conflict(m),
            Error::Io(m) => WitError::Io(m),
            Error::Failed(m) => WitError::Failed(m),
            Error::Json(m) => WitError::Failed(format!("json: {m}")),
        }
    }
}
