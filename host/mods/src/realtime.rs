//! What a mod serves in real time ([`RealtimeDeclarations`]: its websocket routes and its periodic
//! timers), checked at load. A mod answers these from its `realtime.declare-realtime` export; the
//! server (`generation.rs`) checks them here before the mod serves. Pure: no wasmtime, no I/O.

use std::collections::BTreeSet;

/// Socket routes, and periodic timers, a mod may declare, each.
pub const MAX_REALTIME_DECLARED: usize = 16;
/// The longest timer name.
pub const MAX_TIMER_NAME: usize = 64;
/// The longest period of a periodic timer, seconds (one day).
pub const MAX_PERIOD_S: u32 = 86_400;

/// One websocket route as declared.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SocketRoute {
    /// The path, starting with `/`.
    pub path: String,
    /// Whether `path` is a prefix (else exact).
    pub prefix: bool,
}

/// One periodic timer as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Periodic {
    /// Its name (see [`check_timer_name`]).
    pub name: String,
    /// Seconds between firings, 1 to [`MAX_PERIOD_S`].
    pub every_s: u32,
}

/// What one mod serves in real time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RealtimeDeclarations {
    /// Its websocket routes.
    pub sockets: Vec<SocketRoute>,
    /// Its periodic timers.
    pub timers: Vec<Periodic>,
}

/// A realtime declaration the host refuses, naming what and why: the mod is not loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RealtimeError {
    /// More than [`MAX_REALTIME_DECLARED`] of a kind.
    #[error("it declares {count} {what}; at most {MAX_REALTIME_DECLARED} are allowed")]
    TooMany {
        /// Socket routes or timers.
        what: &'static str,
        /// How many it declared.
        count: usize,
    },
    /// A timer name breaks the naming rule.
    #[error("timer `{0}` is not 1-{MAX_TIMER_NAME} characters of [a-z0-9._-]")]
    BadTimerName(String),
    /// A period out of range.
    #[error("timer `{name}` fires every {every_s} s; the period must be 1 to {MAX_PERIOD_S} s")]
    BadPeriod {
        /// The timer.
        name: String,
        /// Its period as declared.
        every_s: u32,
    },
    /// The same timer name twice.
    #[error("two timers named `{0}`")]
    DuplicateTimer(String),
    /// A socket route's path is not a route path, or is one the host answers itself.
    #[error("a socket route on `{0}`: {1}")]
    BadSocket(String, &'static str),
    /// The same socket route twice.
    #[error("two socket routes on `{0}`")]
    DuplicateSocket(String),
}

/// Checks a timer name (`[a-z0-9._-]`, 1-[`MAX_TIMER_NAME`] characters).
pub fn check_timer_name(name: &str) -> Result<(), RealtimeError> {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-');
    if name.is_empty() || name.len() > MAX_TIMER_NAME || !name.chars().all(ok) {
        return Err(RealtimeError::BadTimerName(name.chars().take(MAX_TIMER_NAME).collect()));
    }
    Ok(())
}

impl RealtimeDeclarations {
    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.sockets.is_empty() && self.timers.is_empty()
    }

    /// Checks the declarations: counts, names, periods, and socket paths (`/`-rooted, not the host's
    /// own `/modhost`, `/metrics` or `/notifierServer`).
    pub fn check(&self) -> Result<(), RealtimeError> {
        for (what, count) in [("socket routes", self.sockets.len()), ("timers", self.timers.len())] {
            if count > MAX_REALTIME_DECLARED {
                return Err(RealtimeError::TooMany { what, count });
            }
        }
        let mut names = BTreeSet::new();
        for timer in &self.timers {
            check_timer_name(&timer.name)?;
            if !(1..=MAX_PERIOD_S).contains(&timer.every_s) {
                return Err(RealtimeError::BadPeriod { name: timer.name.clone(), every_s: timer.every_s });
            }
            if !names.insert(timer.name.as_str()) {
                return Err(RealtimeError::DuplicateTimer(timer.name.clone()));
            }
        }
        let mut paths = BTreeSet::new();
        for socket in &self.sockets {
            let path = socket.path.as_str();
            if !path.starts_with('/') || path.len() > crate::MAX_NAME {
                return Err(RealtimeError::BadSocket(path.to_owned(), "a path starts with `/` and is at most 128 bytes"));
            }
            let host_owned = ["/modhost", "/metrics", "/notifierServer"]
                .iter()
                .any(|own| path == *own || path.starts_with(&format!("{own}/")) || own.starts_with(path));
            if host_owned {
                return Err(RealtimeError::BadSocket(path.to_owned(), "the host answers this path itself"));
            }
            if !paths.insert(socket.clone()) {
                return Err(RealtimeError::DuplicateSocket(path.to_owned()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn socket(path: &str) -> SocketRoute {
        SocketRoute { path: path.to_owned(), prefix: false }
    }

    #[test]
    fn accepts_a_socket_route_and_a_timer() {
        let d = RealtimeDeclarations {
            sockets: vec![socket("/fika/ws")],
            timers: vec![Periodic { name: "insurance.return".to_owned(), every_s: 60 }],
        };
        assert_eq!(d.check(), Ok(()));
    }

    #[test]
    fn refuses_bad_names_periods_paths_and_repeats() {
        let timer = |name: &str, every_s| RealtimeDeclarations {
            timers: vec![Periodic { name: name.to_owned(), every_s }],
            ..Default::default()
        };
        assert!(matches!(timer("Bad Name", 5).check(), Err(RealtimeError::BadTimerName(_))));
        assert!(matches!(timer("ok", 0).check(), Err(RealtimeError::BadPeriod { .. })));
        assert!(matches!(timer("ok", MAX_PERIOD_S + 1).check(), Err(RealtimeError::BadPeriod { .. })));
        let two = RealtimeDeclarations {
            timers: vec![Periodic { name: "a".into(), every_s: 1 }, Periodic { name: "a".into(), every_s: 2 }],
            ..Default::default()
        };
        assert_eq!(two.check(), Err(RealtimeError::DuplicateTimer("a".into())));
        for path in ["ws", "/modhost/ws", "/notifierServer/getwebsocket/", "/metrics", "/"] {
            let d = RealtimeDeclarations { sockets: vec![socket(path)], ..Default::default() };
            assert!(matches!(d.check(), Err(RealtimeError::BadSocket(..))), "{path}");
        }
        let twice = RealtimeDeclarations { sockets: vec![socket("/a"), socket("/a")], ..Default::default() };
        assert_eq!(twice.check(), Err(RealtimeError::DuplicateSocket("/a".into())));
        let many = RealtimeDeclarations {
            sockets: (0..17).map(|i| socket(&format!("/s{i}"))).collect(),
            ..Default::default()
        };
        assert!(matches!(many.check(), Err(RealtimeError::TooMany { .. })));
    }
}
