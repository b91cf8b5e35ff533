//! Step 2¾ of a request's path: what a browser may make this server do. A page the player visits
//! can make the player's browser send requests here (it names 127.0.0.1 and a port, which the `Host`
//! check lets through), and the requests carry what the browser adds on its own: a websocket
//! upgrade its `Origin`, any request its `Sec-Fetch-Site`. The game's client is a .NET program, not a
//! browser: it sends no `Sec-Fetch-Site`, and .NET's websocket clients (websocket-sharp,
//! `ClientWebSocket`) send an `Origin` only when the program sets one, so the policy costs the game
//! nothing:
//!
//! - **Websockets** ([`check_socket`]): an upgrade that carries an `Origin` is served only when the
//!   `Origin` is the server's own, `http://` and the request's own `Host` (a page this server served,
//!   under the name the socket is opened with); any other, `null` included, is 403 naming it. The
//!   notifier's sockets and mods' socket routes alike, before anything else is done for them (a mod's
//!   `accept` is not called). Without an `Origin` it is not a browser's, and served.
//! - **The notifier's poll** ([`check_poll`]): a poll drains the session's queue, so a page that
//!   could send one (an `<img>` needs no permission) would take the player's messages. A poll the
//!   browser marks as sent by another origin's page (`Sec-Fetch-Site` other than `same-origin` or
//!   `none`, the address the player typed) or with a foreign `Origin` is 403 and takes nothing.
//!   `same-site` is refused too: another port of 127.0.0.1 is the same site.
//!
//! Framing: the host's own pages send `X-Frame-Options: DENY` and `Content-Security-Policy:
//! frame-ancestors 'none'` ([`no_framing`], `dispatch.rs`), so no page can frame `/modhost/` and
//! trick the player into clicking its buttons.
//!
//! What a reader must not break: the comparison is the whole origin (scheme, host, port), never a
//! suffix or the host alone: a page on another port of 127.0.0.1 is another origin.

use super::answer::Answer;
use hyper::StatusCode;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::http::uri::{Authority, Uri};

/// The headers every host page carries, so that no other page can frame it.
pub(super) fn no_framing() -> [(HeaderName, HeaderValue); 2] {
    [
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
        (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("frame-ancestors 'none'")),
    ]
}

/// The `Sec-Fetch-Site` header (RFC-less, Fetch Metadata: sent by every current browser).
const SEC_FETCH_SITE: &str = "sec-fetch-site";

/// Longest `Origin` quoted back in an answer: it is the client's text.
const QUOTED_ORIGIN_MAX: usize = 256;

/// `Ok` unless the request carries an `Origin` that is not the server's own: then the 403 to answer.
pub(super) fn check_socket(headers: &HeaderMap) -> Result<(), Answer> {
    match foreign_origin(headers) {
        None => Ok(()),
        Some(origin) => {
            Err(refuse("a websocket opens only from a page of this server: the request's Origin is another's", &origin))
        }
    }
}

/// `Ok` unless a browser says another origin's page sent the request: then the 403 to answer.
pub(super) fn check_poll(headers: &HeaderMap) -> Result<(), Answer> {
    if let Some(site) = headers.get(SEC_FETCH_SITE) {
        let site = site.as_bytes();
        if !(site.eq_ignore_ascii_case(b"same-origin") || site.eq_ignore_ascii_case(b"none")) {
            let quoted = String::from_utf8_lossy(site).chars().take(QUOTED_ORIGIN_MAX).collect::<String>();
            let mut answer = Answer::error(
                StatusCode::FORBIDDEN,
                "a page of another origin cannot poll a session's notifications",
                &[("sec-fetch-site", &quoted)],
            );
            answer.headers.push((header::CACHE_CONTROL, HeaderValue::from_static("no-store")));
            return Err(answer);
        }
    }
    match foreign_origin(headers) {
        None => Ok(()),
        Some(origin) => Err(refuse("a page of another origin cannot poll a session's notifications", &origin)),
    }
}

fn refuse(sentence: &str, origin: &str) -> Answer {
    let quoted: String = origin.chars().take(QUOTED_ORIGIN_MAX).collect();
    tracing::debug!("refused a request from Origin {quoted:?}");
    Answer::error(StatusCode::FORBIDDEN, sentence, &[("origin", &quoted)]).closing()
}

/// The request's `Origin` when it has one that is not its own (`http://` and its `Host`), as text.
fn foreign_origin(headers: &HeaderMap) -> Option<String> {
    let mut origins = headers.get_all(header::ORIGIN).iter();
    let origin = origins.next()?;
    let text = String::from_utf8_lossy(origin.as_bytes()).into_owned();
    // A browser sends one; two are nobody's to trust.
    if origins.next().is_some() {
        return Some(text);
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).and_then(|h| h.parse::<Authority>().ok());
    match (origin_authority(&text), host) {
        (Some(origin), Some(host)) if same_authority(&origin, &host) => None,
        _ => Some(text),
    }
}

/// The authority of an `http` origin (`http://host[:port]`, nothing after it); `None` for any other
/// (`null`, `https`, a path).
fn origin_authority(origin: &str) -> Option<Authority> {
    let uri = origin.parse::<Uri>().ok()?;
    let plain = uri.scheme_str().is_some_and(|s| s.eq_ignore_ascii_case("http"));
    let bare = matches!(uri.path(), "" | "/") && uri.query().is_none() && !origin.ends_with('/');
    match (plain, bare, uri.authority()) {
        (true, true, Some(authority)) if !authority.as_str().contains('@') => Some(authority.clone()),
        _ => None,
    }
}

/// Whether two authorities name the same host (any case, a trailing dot ignored) and port (80 when
/// none is written: both are `http`).
fn same_authority(a: &Authority, b: &Authority) -> bool {
    crate::settings::normalise_host(a.host()) == crate::settings::normalise_host(b.host())
        && a.port_u16().unwrap_or(80) == b.port_u16().unwrap_or(80)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(lines: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in lines {
            map.append(HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn a_socket_opens_without_an_origin_or_from_the_servers_own() {
        for own in [
            vec![("host", "127.0.0.1:6969")],
            vec![("host", "127.0.0.1:6969"), ("origin", "http://127.0.0.1:6969")],
            vec![("host", "LocalHost:6969"), ("origin", "http://localhost.:6969")],
            vec![("host", "127.0.0.1"), ("origin", "http://127.0.0.1:80")],
            vec![("host", "[::1]:6969"), ("origin", "http://[::1]:6969")],
        ] {
            assert!(check_socket(&headers(&own)).is_ok(), "{own:?}");
        }
    }

    #[test]
    fn a_socket_from_another_origin_is_403() {
        for foreign in [
            vec![("host", "127.0.0.1:6969"), ("origin", "http://127.0.0.1:8000")],
            vec![("host", "127.0.0.1:6969"), ("origin", "http://127.0.0.1")],
            vec![("host", "127.0.0.1:6969"), ("origin", "http://localhost:6969")],
            vec![("host", "127.0.0.1:6969"), ("origin", "https://127.0.0.1:6969")],
            vec![("host", "127.0.0.1:6969"), ("origin", "null")],
            vec![("host", "127.0.0.1:6969"), ("origin", "http://127.0.0.1:6969/x")],
            vec![("host", "127.0.0.1:6969"), ("origin", "http://a@127.0.0.1:6969")],
            vec![("origin", "http://127.0.0.1:6969")],
            vec![("host", "127.0.0.1:6969"), ("origin", "http://127.0.0.1:6969"), ("origin", "http://127.0.0.1:6969")],
        ] {
            let refused = check_socket(&headers(&foreign)).err().map(|a| a.status.as_u16());
            assert_eq!(refused, Some(403), "{foreign:?}");
        }
    }

    #[test]
    fn a_poll_another_origins_page_sends_is_403() {
        let host = ("host", "127.0.0.1:6969");
        for served in
            [vec![host], vec![host, ("sec-fetch-site", "same-origin")], vec![host, ("sec-fetch-site", "none")]]
        {
            assert!(check_poll(&headers(&served)).is_ok(), "{served:?}");
        }
        for refused in [
            vec![host, ("sec-fetch-site", "cross-site")],
            vec![host, ("sec-fetch-site", "same-site")],
            vec![host, ("origin", "http://127.0.0.1:8000")],
        ] {
            assert_eq!(check_poll(&headers(&refused)).err().map(|a| a.status.as_u16()), Some(403), "{refused:?}");
        }
    }
}
