//! modhost's benchmarks: programs that print tables, never timed assertions (`src/bin/`: the client's
//! mix `modhost-bench`, `front-bench`, `db-bench`, `store-bench`, and `hyper-hello`, raw hyper for
//! `wrk.sh`). Here: medians, percentiles and the exact Mann-Whitney test ([`stats`]), self-contained
//! HTML reports with latency plots ([`report`]), and misbehaving clients ([`adversary`]).
//!
//! Not a default member of the workspace: `cargo test` does not build it; `make test` builds the
//! `modhost-bench` gate with `cargo build --release -p modhost-benches`, and the layout test keeps that
//! build's features the test build's, so it compiles this crate alone.

pub mod adversary;
pub mod report;
pub mod stats;
