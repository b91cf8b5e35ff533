//! Steps 4 and 7 of a request's path: which session a request belongs to ([`of_request`]), and its
//! lock ([`lock`]), for every request a mod is called for (a route's `handle`, a socket route's
//! `accept`).
//!
//! 4. `Cookie: PHPSESSID=<id>` first, else a `sessionid` header; present but not 24 hex digits (or
//!    not ASCII) is refused with 400 before any mod runs.
//! 7. The session's lock, waited for at most `session_lock_timeout` (503 naming the session after
//!    it); held by the caller around the mod's call and dropped when it returns, before the answer
//!    is written.
//!
//! The id ([`SessionId`]) and the locks are `crate::session`'s.

use super::answer::Answer;
use crate::app::App;
use crate::session::{BadSessionId, SessionGuard, SessionId};
use hyper::{StatusCode, header};

/// Step 4: the request's session, from its headers ([`session_of`]); a malformed one is 400.
pub(super) fn of_request(headers: &hyper::HeaderMap) -> Result<Option<SessionId>, Answer> {
    session_of(headers).map_err(|e| Answer::error(StatusCode::BAD_REQUEST, &e.to_string(), &[]))
}

/// Step 7: `session`'s lock (none without a session), or the 503 that names the session when it
/// stayed taken past the server's `session_lock_timeout`.
pub(super) async fn lock(app: &App, session: Option<SessionId>) -> Result<Option<SessionGuard>, Answer> {
    let Some(id) = session else { return Ok(None) };
    app.sessions
        .lock(id, app.config.session_lock_timeout)
        .await
        .map(Some)
        .map_err(|e| Answer::error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string(), &[("session", id.as_str())]))
}

/// The session: `Cookie: PHPSESSID=<id>` first, else the `sessionid` header. A header that holds a
/// session but is not visible ASCII is refused like any malformed id, never treated as absent (which
/// would run the mod without the session's lock).
fn session_of(headers: &hyper::HeaderMap) -> Result<Option<SessionId>, BadSessionId> {
    for cookie in headers.get_all(header::COOKIE) {
        match cookie.to_str() {
            Ok(text) => {
                if let Some(id) = session_from_cookie(text) {
                    return SessionId::parse(id).map(Some);
                }
            }
            Err(_) if cookie.as_bytes().windows(10).any(|w| w == b"PHPSESSID=") => return Err(BadSessionId),
            Err(_) => {}
        }
    }
    match headers.get("sessionid") {
        Some(value) => SessionId::parse(value.to_str().map_err(|_| BadSessionId)?).map(Some),
        None => Ok(None),
    }
}

/// The `PHPSESSID` value of a `Cookie` header, if present (ended by `;` or a space).
fn session_from_cookie(cookie: &str) -> Option<&str> {
    cookie.split(';').find_map(|pair| {
        let value = pair.trim_start().strip_prefix("PHPSESSID=")?;
        Some(value.split(' ').next().unwrap_or(value))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_cookie_parsing() {
        assert_eq!(session_from_cookie("PHPSESSID=abc"), Some("abc"));
        assert_eq!(session_from_cookie("a=1; PHPSESSID=abc; b=2"), Some("abc"));
        assert_eq!(session_from_cookie("PHPSESSID=abc def"), Some("abc"));
        assert_eq!(session_from_cookie("XPHPSESSID=abc"), None);
    }

    #[test]
    fn the_cookie_comes_first_and_a_bad_id_is_refused_not_ignored() {
        let id = "0123456789abcdef01234567";
        let mut headers = hyper::HeaderMap::new();
        assert_eq!(session_of(&headers).unwrap(), None);
        headers.insert("sessionid", "ffffffffffffffffffffffff".parse().unwrap());
        headers.insert(header::COOKIE, format!("a=1; PHPSESSID={}", id.to_uppercase()).parse().unwrap());
        assert_eq!(session_of(&headers).unwrap().unwrap().as_str(), id, "the cookie wins, in lower case");
        headers.insert(header::COOKIE, "PHPSESSID=nothex".parse().unwrap());
        assert!(session_of(&headers).is_err());
        headers.insert(header::COOKIE, hyper::header::HeaderValue::from_bytes(b"PHPSESSID=\xff").unwrap());
        assert!(session_of(&headers).is_err(), "a session that is not ASCII is refused, never treated as absent");
    }
}
