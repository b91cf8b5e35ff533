//! The host's integration tests: real servers on 127.0.0.1:0, real sockets, fixture mods.
//! One test binary, a module per area (see `modhost_tests` for the harness).

mod boot;
mod containment;
mod emulator;
mod front;
mod hello;
mod inventory;
mod observe;
mod routing;
mod sessions;
mod store;
mod wire;

use modhost_tests::{TestServer, guests};

/// A server with the fixture mod installed as `fx`.
async fn fixture_server() -> TestServer {
    TestServer::builder().with_mod("fx", guests::FIXTURE, "").start().await.expect("starting the fixture server")
}
