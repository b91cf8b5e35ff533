//! modhost's black-box test harness: a raw HTTP/1.1 client that speaks the SPT wire ([`client`]), test
//! servers on 127.0.0.1:0 with fixture mods installed ([`server`]), and where the built guests are
//! ([`guests`]), and a generator of SPT-shaped databases at any scale ([`gamedb`]). For the benchmarks:
//! medians, percentiles and the exact Mann-Whitney test ([`stats`]), self-contained HTML reports with
//! latency plots ([`report`]), `modhost serve` as a child process ([`child`]) and misbehaving clients
//! ([`adversary`]), a hostile component Rust cannot write ([`table_bomb`]), and C mods wrapped into components
//! ([`core_wrap`]).

pub mod adversary;
pub mod child;
pub mod client;
pub mod core_wrap;
/// The database generator lives in the host (`modhost gen-db`); re-exported for the tests.
pub use modhost_gamedb as gamedb;
pub mod report;
pub mod server;
pub mod stats;
pub mod table_bomb;
pub mod tiny_mod;
pub mod torture;

/// Paths of the guest components built by `build.rs` (once per test build).
pub mod guests {
    include!(concat!(env!("OUT_DIR"), "/guests.rs"));
}

pub use client::{Client, Reply};
pub use server::{TestServer, TestServerBuilder};
