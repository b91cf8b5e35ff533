//! modhost's server: an HTTP/1.1 front speaking the SPT client's wire, which runs each route's handler
//! in a sandboxed wasmtime component and gives mods the game database and a durable store. The
//! engines it serves are crates of their own (`modhost-db`, `modhost-store`, `modhost-routes`,
//! `modhost-mods`, `modhost-gamedb`, `modhost-wire`); this crate is the glue between them, hyper and wasmtime, and the `modhost` binary.
//!
//! # Layout
//! In the order a request meets them, then what surrounds them. No module imports one that imports it
//! back.
//! - `front`: the HTTP front, one file per step of a request's path (its header is the list).
//! - `session`: session ids and the per-session lock held around each mod call.
//! - `body_cache`: compressed answers keyed by content and db-node identity (never stale).
//! - `sandbox`: wasmtime: engine, compile cache, instances under limits, one glue file per WIT
//!   interface.
//! - `realtime`: the SPT notifier (a websocket per session, queues, push), mods' websocket routes and
//!   timers: what reaches players and mods outside a request's answer.
//! - `app`: [`App`], the state every request shares, and [`App::reload`].
//! - `generation`: one set of mods in load order, the db their inits built, their routes.
//! - `builtin`: the mods embedded in the binary.
//! - [`server`]: boot (root, store, listener, first generation) and [`Server::run`].
//! - `scheduler`: the task that fires the mods' timers (`realtime::timers`) in the serving generation.
//! - `nofile`: the open-file limit, raised to the hard one at start, and the connection cap from it.
//! - `settings`: the server's settings ([`ServerSettings`]: the command line's, `modhost.toml` over
//!   them) and the limits of the engine, the front and each mod. Not a mod's configuration, which is
//!   `modhost_mods::config`'s, read by mods through the WIT `config` interface and edited by
//!   `config_edit`.
//! - [`watch`]: `serve --watch`, a reload when a mod's files or `db.json` change.
//! - [`dev`]: `modhost dev`, a mod project rebuilt, installed and reloaded on each save.
//! - [`status`]: the host's pages under `/modhost/`: status and mods as JSON, a page, reload.
//! - [`toggle`]: the page's enable and disable buttons, `POST /modhost/mods/<id>/enable|disable`.
//! - `config_edit`: the page's editor of a mod's configuration (the player's settings for that mod,
//!   not the server's), `POST /modhost/config/<id>`: check, write atomically, reload.
//! - [`views`]: typed views of what is loaded, shared by the status JSON and the CLI.
//! - `metrics`: `/metrics`, per-route counters and latency histograms (Prometheus text format).
//! - `series`: latency over time per route (a ring of 10 s slots), for the status page's plots.
//! - `perf`: `--perf`, time per request phase, per endpoint and per mod, into `<root>/perf.txt`.
//! - [`check`]: `modhost check`, a mod vetted in a throwaway root with generated requests.
//! - [`installed`]: a root's installed mods: listed, planned against, enabled, disabled, uninstalled.
//! - [`install`]: a package installed safely (staged, vetted, swapped in), and `modhost pack`.
//! - [`registry`]: packages in an OCI registry: `modhost publish`, installs and updates from one.
//! - [`scaffold`]: `modhost new`, a mod project on the SDK (embedded in the binary); `scaffold_ts` and
//!   `scaffold_python` write the TypeScript and Python projects on `sdk-js/` and `sdk-python/`.
//! - [`testrun`]: `modhost test-runner`, a mod's test binary run with a real db and a scratch store.
//! - [`client`]: the one-request HTTP client the tools use.
//! - [`wire`]: the SPT wire's rules as pure functions (zlib both ways, identity): `modhost-wire`.
//!
//! The library prints nothing: the binary (`src/bin/modhost/`) renders what it answers.

#![warn(missing_docs)]

mod app;
pub mod body_cache;
mod builtin;
pub mod check;
pub mod client;
mod cluster_link;
mod config_edit;
mod dblog;
pub mod dev;
mod front;
mod generation;
pub mod install;
pub mod installed;
mod members;
mod metrics;
mod nofile;
mod perf;
mod realtime;
pub mod registry;
mod sandbox;
pub mod scaffold;
mod scaffold_python;
mod scaffold_ts;
mod scheduler;
mod series;
pub mod server;
mod session;
mod settings;
pub mod status;
pub mod testrun;
pub mod toggle;
pub mod views;
pub mod watch;

pub use app::{App, ReloadOutcome};
pub use generation::{Generation, LeftOut, LoadReport, LoadedInfo};
pub use metrics::RouteStats;
pub use modhost_wire as wire;
pub use realtime::RealtimeLimits;
pub use sandbox::{CompileSource, LoadedMod, ModContext};
pub use series::{LatencySeries, Point};
pub use server::Server;
pub use session::{BadSessionId, SessionId};
pub use settings::{
    EngineLever, EngineLimits, FrontLimits, HttpDeadlines, LimitError, LimitOverrides, ModLimits, PlayerFile,
    PlayerFileError, ServerSettings,
};
