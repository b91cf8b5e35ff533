//! The host's integration tests: real servers on 127.0.0.1:0, real sockets, fixture mods.
//! One test binary, a module per area (see `modhost_tests` for the harness).

mod api_contract;
mod boot;
mod check;
mod cluster;
mod cluster_realtime;
mod cluster_timers;
mod config;
mod containment;
mod contract;
mod emulator;
mod front;
mod game_actions;
mod game_boot;
mod game_client;
mod game_flea;
mod game_health;
mod game_hideout;
mod game_insurance;
mod game_mail;
mod game_menu;
mod game_quests;
mod game_raid;
mod game_repeatable;
mod game_routes;
mod game_shapes;
mod game_soak;
mod game_trade;
mod game_wipe;
mod grants;
mod hardening_data;
mod hardening_front;
mod hardening_sandbox;
mod hello;
mod hostile;
mod inventory;
mod lifecycle;
mod notifier;
mod observe;
mod ownership;
mod polyglot;
mod routing;
mod sessions;
mod shares;
mod sockets;
mod store;
mod timers;
mod together;
mod wire;

use modhost_tests::{TestServer, guests};
use std::sync::{Arc, Mutex, PoisonError};

/// The fixture's grants in the tests: it may patch the db under `fx`.
const FX_GRANTS: &str = "[grants]\ndb_write = [\"fx\"]";

/// A server with the fixture mod installed as `fx`, granted `FX_GRANTS`.
async fn fixture_server() -> TestServer {
    TestServer::builder().with_mod("fx", guests::FIXTURE, FX_GRANTS).start().await.expect("starting the fixture server")
}

/// The fixture (`fx`, granted `FX_GRANTS`) beside the hello example (`hello`), with the player's
/// `modhost.toml` holding `player_toml`.
async fn two_mods(player_toml: &str, configure: impl FnOnce(&mut modhost::ServerSettings)) -> TestServer {
    let builder = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, FX_GRANTS)
        .with_mod("hello", guests::HELLO, "")
        .config(configure);
    std::fs::write(builder.root().join("modhost.toml"), player_toml).unwrap();
    builder.start().await.unwrap()
}

/// What the server logs on this thread, captured: a test on a current-thread runtime runs the whole
/// server on its own thread, so nothing of other tests lands here. Installed with
/// `tracing::subscriber::set_default` over `tracing_subscriber::fmt().with_writer(captured.clone())`.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}
