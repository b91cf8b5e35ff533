//! Step 2½ of a request's path, before anything else reads it: the `Host` header, against DNS
//! rebinding. A web page whose name the attacker re-points at 127.0.0.1 makes the player's browser
//! send requests here that carry the attacker's name in `Host`; answering them would hand the page
//! every profile and `/modhost/reload`. So only Hosts that name this machine are served:
//!
//! - a loopback address (`127.0.0.0/8`, `[::1]`), `localhost`, or the address the server listens on
//!   when it is a specific one (a LAN address the player chose), with or without a port;
//! - the names the player lists in `<root>/modhost.toml` (`[http] allowed_hosts`).
//!
//! Any other Host is answered **421 Misdirected Request** naming it: the request reached a server
//! that does not serve that name (RFC 9110 §15.5.20), which is what happened; 403 would say the
//! client lacks a permission it could obtain. HTTP/1.1 without a Host, with more than one, or with
//! one whose value is not `host[:port]` (`a b`, `user@host`, a port that is not a number) is 400
//! (RFC 9112 §3.2: it names no machine, not another one). HTTP/1.0 without a Host is served: the
//! protocol had none, and a browser (the only way a rebinding page reaches us) always sends one.
//!
//! What a reader must not break: the check runs before the host's own pages too (`/modhost/reload`
//! is the most dangerous target), and compares names whole, never by suffix.

use super::answer::Answer;
use hyper::header::{self, HeaderMap};
use hyper::http::uri::Authority;
use hyper::{StatusCode, Uri, Version};
use std::net::{IpAddr, SocketAddr};

/// Whether `host` (a Host's host part, any case, IPv6 in brackets) names this machine: a loopback
/// address, `localhost`, the address the server listens on (`own`, unless a wildcard), or one of the
/// player's `names` (normalised by the config).
fn allowed(host: &str, names: &[String], own: IpAddr) -> bool {
    let host = crate::settings::normalise_host(host);
    match host.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback() || (ip == own && !own.is_unspecified()) || names.contains(&host),
        Err(_) => host == "localhost" || names.contains(&host),
    }
}

/// Longest Host quoted back in an answer or the log: a refused Host is the client's text.
const QUOTED_HOST_MAX: usize = 256;

/// `Ok` when the request may be served; otherwise the 400 or 421 to answer.
pub(super) fn check(
    version: Version,
    uri: &Uri,
    headers: &HeaderMap,
    names: &[String],
    own: SocketAddr,
) -> Result<(), Answer> {
    let mut hosts = headers.get_all(header::HOST).iter();
    let (first, second) = (hosts.next(), hosts.next());
    let bad = |sentence: &str| {
        let mut answer = Answer::error(StatusCode::BAD_REQUEST, sentence, &[]);
        answer.headers.push((header::CONNECTION, header::HeaderValue::from_static("close")));
        Err(answer)
    };
    if second.is_some() {
        return bad("the request has more than one Host header (RFC 9112 §3.2)");
    }
    // An absolute-form target (`GET http://name/ HTTP/1.1`) names the host itself, and wins over the
    // header (RFC 9112 §3.2.2): it is checked too.
    let named = [uri.authority().map(Authority::as_str), first.map(|v| v.to_str().unwrap_or("\u{fffd}"))];
    if named == [None, None] {
        return match version {
            Version::HTTP_10 | Version::HTTP_09 => Ok(()),
            _ => bad("the request has no Host header (RFC 9112 §3.2)"),
        };
    }
    for name in named.into_iter().flatten() {
        let quoted: String = name.chars().take(QUOTED_HOST_MAX).collect();
        // An empty Host is well-formed (RFC 9112 §3.2: a target without an authority) and names
        // nothing here: 421 below. Anything else must be `host[:port]`; userinfo (`user@host`) has no
        // place in a Host, though `Authority` would accept it.
        let host = match name.parse::<Authority>() {
            Ok(authority) if !name.contains('@') && port_is_digits(&authority) => Some(authority),
            _ if name.is_empty() => None,
            _ => {
                let mut answer = Answer::error(
                    StatusCode::BAD_REQUEST,
                    "the Host header is not a host with an optional port (RFC 9112 §3.2)",
                    &[("host", &quoted)],
                );
                answer.headers.push((header::CONNECTION, header::HeaderValue::from_static("close")));
                return Err(answer);
            }
        };
        if !host.is_some_and(|a| allowed(a.host(), names, own.ip())) {
            tracing::debug!("refused a request for Host {quoted:?}");
            return Err(Answer::error(
                StatusCode::MISDIRECTED_REQUEST,
                "this server answers only Hosts that name this machine (loopback, localhost) or that \
                 modhost.toml lists under [http] allowed_hosts",
                &[("host", &quoted)],
            ));
        }
    }
    Ok(())
}

/// Whether what follows the host is nothing, or `:` and digits (RFC 3986 `port = *DIGIT`):
/// `Authority` checks only the characters, so `127.0.0.1:port` would pass as `127.0.0.1`.
fn port_is_digits(authority: &Authority) -> bool {
    let rest = authority.as_str().get(authority.host().len()..).unwrap_or_default();
    rest.is_empty() || rest.strip_prefix(':').is_some_and(|port| port.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(version: Version, uri: &str, hosts: &[&str], names: &[&str], own: &str) -> Option<u16> {
        let mut headers = HeaderMap::new();
        for host in hosts {
            headers.append(header::HOST, header::HeaderValue::from_str(host).unwrap());
        }
        let names: Vec<String> = names.iter().map(|n| crate::settings::host_name(n).unwrap()).collect();
        check(version, &uri.parse().unwrap(), &headers, &names, own.parse().unwrap()).err().map(|a| a.status.as_u16())
    }

    #[test]
    fn loopback_and_localhost_are_served_with_or_without_a_port() {
        for host in [
            "127.0.0.1",
            "127.0.0.1:6969",
            "127.1.2.3:80",
            "[::1]",
            "[::1]:6969",
            "localhost",
            "LocalHost:1",
            "localhost.",
        ] {
            assert_eq!(answer(Version::HTTP_11, "/x", &[host], &[], "127.0.0.1:6969"), None, "{host}");
        }
    }

    #[test]
    fn other_names_are_misdirected_unless_the_player_lists_them() {
        let wildcard = "0.0.0.0:6969";
        for host in [
            "rebind.example:6969",
            "rebind.example",
            "localhost.rebind.example",
            "127.0.0.1.nip.io",
            "0.0.0.0",
            "10.0.0.5",
            "",
        ] {
            assert_eq!(answer(Version::HTTP_11, "/x", &[host], &[], wildcard), Some(421), "{host:?}");
        }
        let names = ["Game.LAN", "[fd00::1]"];
        for host in ["game.lan:6969", "GAME.lan", "[fd00::1]:6969", "10.0.0.5:6969"] {
            assert_eq!(answer(Version::HTTP_11, "/x", &[host], &names, "10.0.0.5:6969"), None, "{host}");
        }
        assert_eq!(answer(Version::HTTP_11, "/x", &["sub.game.lan"], &names, "10.0.0.5:6969"), Some(421));
        // The absolute-form target is checked as well as the header.
        assert_eq!(answer(Version::HTTP_11, "http://rebind.example/x", &["127.0.0.1"], &[], wildcard), Some(421));
    }

    #[test]
    fn a_missing_or_doubled_host_is_400_on_http_1_1_and_1_0_may_omit_it() {
        let own = "127.0.0.1:6969";
        assert_eq!(answer(Version::HTTP_11, "/x", &[], &[], own), Some(400));
        assert_eq!(answer(Version::HTTP_11, "/x", &["127.0.0.1", "127.0.0.1"], &[], own), Some(400));
        assert_eq!(answer(Version::HTTP_10, "/x", &[], &[], own), None);
        assert_eq!(answer(Version::HTTP_10, "/x", &["rebind.example"], &[], own), Some(421));
    }

    #[test]
    fn a_host_that_is_not_host_and_port_is_400() {
        for host in ["a b", "127.0.0.1 x", "a@127.0.0.1", "127.0.0.1:port", "127.0.0.1/x", "[::1"] {
            assert_eq!(answer(Version::HTTP_11, "/x", &[host], &[], "127.0.0.1:6969"), Some(400), "{host:?}");
        }
    }
}
