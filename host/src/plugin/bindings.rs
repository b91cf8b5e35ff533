//! The one `bindgen!` of the host: Rust types and traits for the `plugin` world in `wit/`.
//!
//! Imports (db, store, log) are synchronous: each is a short in-memory or small-file operation, and a
//! sync host call costs a fraction of an async one. Exports are async so a call runs on a fiber and a
//! long-running guest yields to tokio at every epoch tick instead of pinning a worker thread.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
    exports: { default: async },
});

pub use self::modhost::plugin::types::{Chunk, MatchKind};
