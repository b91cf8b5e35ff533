//! The HTTP/1.1 front: one file per step of a request's path, in this order.
//!
//! 0. **Boot** (`listen.rs`): the listener is bound before the mods load; a connection that arrives
//!    meanwhile waits (30 s by default) and is then served, or answered 503 with `Retry-After`.
//! 1. **Accept** (`listen.rs`): a tokio task per connection, at most 4096 open, websockets included (fewer under a low
//!    open-file limit, `crate::nofile`), handed to hyper at its first byte, tracked so shutdown
//!    drains them; the 512th request on a connection is answered `Connection: close`; the heap a burst
//!    of connections freed is given back to the OS when it ends (`reclaim.rs`).
//! 2. **Deadlines** (`guard.rs`): idle, head and write-stall deadlines hyper lacks, on the socket.
//!    **Host** (`host.rs`): a `Host` that names neither this machine nor a name the player allowed →
//!    421 (DNS rebinding); none, two, or one that is not a host on HTTP/1.1 → 400. Checked before
//!    everything below. **Origin** (`origin.rs`): the browser policy: a websocket upgrade whose
//!    `Origin` is not the server's own → 403, a notifier poll another origin's page sent → 403; the
//!    host's pages refuse framing.
//! 3. **Head size** (`request.rs`): over 64 KiB of headers → 431 and close.
//! 4. **Session** (`session.rs`): `Cookie: PHPSESSID=` or a `sessionid` header; malformed → 400.
//! 5. **Route** (`dispatch.rs`): everything but the host's own paths goes to the route table
//!    (`modhost-routes`); no route → 404 naming the URL. `/metrics` and `/modhost/…` are answered by
//!    the host before steps 3 and 4, uncompressed. Whatever answers a request returns what it
//!    handled (`answer::Handled`: the reply, the route and the mod it was served for), which
//!    `dispatch.rs` frames and counts.
//! 6. **Body** (`request.rs`): capped (413), collected within its deadline (408) under a server-wide
//!    budget, and inflated when it is zlib (bounded; 400 when it looks like zlib and is not).
//! 7. **Lock** (`session.rs`): the session's lock (`crate::session`), 503 after its timeout, released
//!    when the mod returns. Steps 3, 4 and 7 are the same functions for a route's `handle` and a
//!    socket route's `accept` (`modsock.rs`), and the request the mod gets is built in one place
//!    (`request.rs`).
//! 8. **Call** (`chain.rs`): the route's chain: the before-hooks that reach its URL, the owner's
//!    `handle`, the after-hooks, each in its own mod's sandbox under that mod's limits.
//! 9. **Answer** (`answer.rs`): a mod's error → status; its response checked and its db references
//!    spliced from one snapshot.
//! 10. **Compress** (`compress.rs`): zlib unless the client asked for identity, large answers through
//!     the compressed-body cache (`crate::body_cache`, keyed by content and db-node identity).
//!
//! The SPT wire's rules (zlib both ways, identity, error bodies) are pure functions in the
//! `modhost-wire` crate, which these steps apply.

mod answer;
mod chain;
mod compress;
mod dispatch;
mod guard;
mod host;
mod listen;
mod modsock;
mod notifier;
mod origin;
mod reclaim;
mod request;
mod session;
mod upgrade;

pub(crate) use listen::{EarlyAccept, serve};
pub(crate) use request::REQUEST_BYTES_BUDGET;
