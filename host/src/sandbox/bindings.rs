//! The one `bindgen!` of the host: Rust types and traits for the `plugin` world in `wit/`.
//!
//! Imports are synchronous (db, log: short in-memory operations, where a sync host call costs a
//! fraction of an async one), except the store's: a durable commit waits for two fsyncs, which must
//! not hold an async worker, so those run on the blocking pool. Exports are async so a call runs on a
//! fiber and a long-running guest yields to tokio at every epoch tick instead of pinning a worker.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
    imports: { "modhost:plugin/store": async },
    exports: { default: async },
});

pub(crate) use self::modhost::plugin::types::{Chunk, MatchKind};
