//! modhost: a game server whose game logic lives in WebAssembly mods.
//!
//! # Layout
//! - [`body_cache`]: compressed answers keyed by content and db-node identity (never stale).
//! - [`conn_guard`]: the idle, head and write-stall deadlines hyper does not enforce.
//! - [`config`]: the validated configuration and the limits every mod runs under.
//! - [`server`]: boot (root, store, listener, first generation), [`Server::run`], and reloads.
//! - [`generation`]: one set of mods in load order, the db their inits built, their routes.
//! - `http`: the hyper front: accept, deadlines, one request → one mod call.
//! - [`wire`]: the SPT wire rules as pure functions (zlib both ways, session sources, identity).
//! - [`session`]: session ids and the per-session lock.
//! - [`router`]: the route table (exact beats prefix, longest prefix wins).
//! - [`perf`]: `--perf`, time per request phase, per endpoint and per mod, into `<root>/perf.txt`.
//! - [`status`]: the host's pages under `/modhost/`: status and mods as JSON, a page, reload.
//! - [`watch`]: `serve --watch`, a reload when a mod's files or `db.json` change.
//! - [`metrics`]: `/metrics`, per-route counters and latency histograms (Prometheus text format).
//! - [`gamedb`]: a deterministic generator of SPT-shaped databases (`modhost gen-db`).
//! - [`db`]: the game database engine (no wasmtime, no hyper).
//! - [`store`]: the durable key/value engine (no wasmtime, no hyper).
//! - [`mods`]: finding mods and reading `mod.toml` (with its `[grants]`).
//! - [`inspect`]: each loaded mod's grants, limits and routes (`modhost mods`).
//! - [`check`]: `modhost check`, a mod vetted in a throwaway root with generated requests.
//! - [`plugin`]: wasmtime: engine, compile cache, instances under limits, the host side of `wit/`.
//! - [`scaffold`]: `modhost new`, a mod project on the SDK (embedded in the binary) with a route and a test.
//! - [`testrun`]: `modhost test-runner`, a mod's test binary run with a real db and a scratch store.

mod app;
mod body_cache;
mod builtin;
pub mod check;
pub mod client;
pub mod config;
mod front;
pub mod generation;
pub mod metrics;
pub mod perf;
pub mod sandbox;
pub mod scaffold;
pub mod server;
pub mod session;
pub mod status;
pub mod testrun;
pub mod views;
pub mod watch;

pub use app::{App, ReloadOutcome};
pub use config::{Config, Limits};
pub use front::wire;
pub use generation::{LeftOut, LoadReport};
pub use server::Server;
