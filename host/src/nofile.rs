//! The process's file-descriptor limit, and the connection cap derived from it.
//!
//! Every connection is a descriptor, and so is each store file, compiled mod, log and watch. The usual
//! soft limit is 1024, which the front's 1024 connections alone would fill: the store's next open then
//! fails with EMFILE (and in durable mode a commit can report failure after it landed). So at start
//! the soft limit is raised to the hard one ([`raise`]), and the front takes [`connection_cap`] of
//! what there is, leaving the rest to everything else.

/// Connections the front keeps open at once, at most: each costs memory, whatever the fd limit.
/// An open websocket counts as one (each player's notifier socket, mods' sockets): 4096 leaves room
/// for a thousand players' sockets beside the requests.
pub(crate) const MAX_CONNECTIONS: usize = 4096;

/// Descriptors kept for everything that is not a connection, at least: stdio, the listener, the
/// runtime's epoll and wakers, the store (SQLite's database, WAL and shared-memory files, the root
/// lock), the compile cache, `--watch`'s inotify, and some slack for what a library opens on its own.
const RESERVED_FDS: u64 = 128;

/// How many connections fit under a soft limit of `nofile` descriptors: what is left after
/// [`RESERVED_FDS`] or an eighth of the limit, whichever is more, and at most [`MAX_CONNECTIONS`].
/// At least one, so a server under a tiny limit still answers (and its store fails with a clear
/// error instead).
pub(crate) fn connection_cap(nofile: u64) -> usize {
    let reserved = RESERVED_FDS.max(nofile / 8);
    let left = usize::try_from(nofile.saturating_sub(reserved)).unwrap_or(usize::MAX);
    left.clamp(1, MAX_CONNECTIONS)
}

/// The descriptor limits before and after [`raise`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NofileLimit {
    /// The soft limit the process started with.
    pub(crate) was: u64,
    /// The soft limit now (the hard limit, when raising it worked).
    pub(crate) now: u64,
}

/// Raises the soft limit on open files to the hard one. When the limits cannot be read (or on a
/// platform without them), answers `None`: the front then keeps its own cap.
pub(crate) fn raise() -> Option<NofileLimit> {
    #[cfg(unix)]
    {
        use rlimit::Resource;
        let (soft, hard) = Resource::NOFILE.get().ok()?;
        if soft >= hard {
            return Some(NofileLimit { was: soft, now: soft });
        }
        // macOS refuses a soft limit above OPEN_MAX even when the hard one is unlimited; so does Linux
        // above nr_open. Either way the old soft limit stays in force, and is what we report.
        let now = match Resource::NOFILE.set(hard, hard) {
            Ok(()) => hard,
            Err(e) => {
                tracing::warn!("could not raise the open-file limit from {soft} to {hard}: {e}");
                soft
            }
        };
        Some(NofileLimit { was: soft, now })
    }
    #[cfg(not(unix))]
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_cap_leaves_room_for_the_store_and_mods() {
        // The usual soft limit: the connections alone must not take every descriptor.
        assert_eq!(connection_cap(1024), 1024 - 128);
        assert_eq!(connection_cap(1100), 1100 - 137, "an eighth once that is more than 128");
        assert_eq!(connection_cap(2048), 2048 - 256);
        assert_eq!(connection_cap(8192), MAX_CONNECTIONS);
        assert_eq!(connection_cap(65_536), MAX_CONNECTIONS);
        assert_eq!(connection_cap(u64::MAX), MAX_CONNECTIONS);
        assert_eq!(connection_cap(256), 128);
        assert_eq!(connection_cap(100), 1, "a tiny limit still serves one");
        assert_eq!(connection_cap(0), 1);
    }
}
