//! The one `bindgen!` of the host: Rust types and traits for the `plugin` world in `wit/`.
//!
//! Imports are synchronous (db, log: short in-memory operations, where a sync host call costs a
//! fraction of an async one), except the store's (a durable commit waits for fsyncs, a listing or a
//! 64 MiB value takes long: those run on the blocking pool) and `db.patch` (a large patch costs its
//! size: it runs on the blocking pool, and a call that gives up abandons it). Exports are async so a call runs on a
//! fiber and a long-running guest yields to tokio at every epoch tick instead of pinning a worker.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
    imports: { "modhost:plugin/store": async, "modhost:plugin/db.patch": async },
    exports: { default: async },
});

pub(crate) use self::modhost::plugin::types::{Chunk, MatchKind};
