//! modhost's black-box test harness: a raw HTTP/1.1 client that speaks the SPT wire ([`client`]), test
//! servers on 127.0.0.1:0 with fixture mods installed ([`server`]), where the built guests are
//! ([`guests`]), a generator of SPT-shaped databases at any scale ([`gamedb`]), `modhost serve` as a
//! child process ([`child`]), a hostile component Rust cannot write ([`table_bomb`]), tiny components
//! made to order ([`tiny_mod`]), components greedy for the instance pool ([`greedy`]), one whose start
//! code sleeps in WASI ([`sleepy_start`]), and C mods wrapped into components ([`core_wrap`]). The benchmark programs and their statistics live in
//! `tests/bench` (`modhost-benches`).

pub mod child;
pub mod client;
pub mod core_wrap;
pub mod greedy;
/// The database generator (crate `modhost-gamedb`, also `modhost gen-db`), re-exported for the tests.
pub use modhost_gamedb as gamedb;
pub mod server;
pub mod shapes;
pub mod sleepy_start;
pub mod table_bomb;
pub mod tiny_mod;
pub mod torture;

/// Paths of the guest components built by `build.rs` (once per test build).
pub mod guests {
    include!(concat!(env!("OUT_DIR"), "/guests.rs"));
}

pub use client::{Client, Reply};
pub use server::{TestServer, TestServerBuilder};
