//! The host's `bindgen!`s: Rust types and traits for the `plugin` world in `wit/`, and for the `full`
//! world's additions, the `guest` export (hooks, events, functions) and the `realtime` export
//! (websocket routes, timers), which only mods of that world have: a mod built for `plugin` (or before
//! an export existed) loads without it.
//!
//! Imports are synchronous (db, log, config, push, sockets: short in-memory operations, where a sync
//! host call costs a fraction of an async one), except the store's (a durable commit waits for fsyncs,
//! a listing or a 64 MiB value takes long: those run on the blocking pool), `db.patch` (a large patch
//! costs its size: it runs on the blocking pool, and a call that gives up abandons it), `mods` (an
//! event or a call runs other mods' instances), `timers` (scheduling one is a store commit) and
//! `push.send`/`push.broadcast` (on a store several hosts share, a message may go through it).
//! Exports are async so a call runs on a fiber and a long-running guest yields to tokio at every epoch
//! tick instead of pinning a worker.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "plugin",
    imports: {
        "modhost:plugin/store": async,
        "modhost:plugin/db.patch": async,
        "modhost:plugin/mods": async,
        "modhost:plugin/push.send": async,
        "modhost:plugin/push.broadcast": async,
        "modhost:plugin/timers": async,
    },
    exports: { default: async },
});

/// The `full` world, for its `guest` and `realtime` exports alone: every import maps to the `plugin`
/// bindings above.
pub(crate) mod full {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "full",
        exports: { default: async },
        with: {
            "modhost:plugin/types": super::modhost::plugin::types,
            "modhost:plugin/db": super::modhost::plugin::db,
            "modhost:plugin/store": super::modhost::plugin::store,
            "modhost:plugin/log": super::modhost::plugin::log,
            "modhost:plugin/config": super::modhost::plugin::config,
            "modhost:plugin/mods": super::modhost::plugin::mods,
            "modhost:plugin/push": super::modhost::plugin::push,
            "modhost:plugin/sockets": super::modhost::plugin::sockets,
            "modhost:plugin/timers": super::modhost::plugin::timers,
        },
    });
}

pub(crate) use self::modhost::plugin::types::{Chunk, MatchKind};
