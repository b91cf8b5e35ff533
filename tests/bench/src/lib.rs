//! modhost's benchmarks: programs that print tables, never timed assertions (`src/bin/`: the client's
//! mix `modhost-bench`, a trivial route's CPU against raw hyper `route-cost`, what hooks, events and
//! calls between mods cost `chain-cost`, what the notifier's sockets cost `realtime-cost`,
//! `front-bench`, `db-bench`, `store-bench`, `deflate-bench`, and `hyper-hello`, raw hyper for `route-cost`, `chain-cost` and `wrk.sh`; beside them
//! `wasi-hello`, the `wasi:http` component `wrk.sh` runs under `wasmtime serve`). Here: medians,
//! percentiles and the exact Mann-Whitney test ([`stats`]), a server child under keep-alive load and
//! its CPU per request ([`cpu_load`]), self-contained HTML reports with latency plots ([`report`]),
//! and misbehaving clients ([`adversary`]).
//!
//! Not a default member of the workspace: `cargo test` does not build it; `make test` builds the
//! `modhost-bench` gate with `cargo build --release -p modhost-benches`, and the layout test keeps that
//! build's features the test build's, so it compiles this crate alone.

pub mod adversary;
pub mod cpu_load;
pub mod report;
pub mod stats;
