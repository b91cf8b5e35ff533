//! The reference game: an SPT-style backend written as an ordinary modhost mod.
//!
//! Built into the `modhost` binary (see `host/build.rs`); it uses nothing a third-party mod could not.
//! It answers the SPT launcher (`launcher.rs`: accounts in `account.rs`), the client's boot
//! (`boot.rs`: the static tables by db reference, so they never cross into the guest; profile create,
//! list, select and status in `profile.rs`), the main menu (`menu.rs`), the raid (`raid.rs`,
//! `scav.rs`), and `items/moving` (`moving.rs`): inventory actions (`actions.rs`), buying from traders
//! (`trading.rs`) and quests (`quest_actions.rs`) over a shared inventory model (`inventory.rs`), each
//! validated whole before it changes anything. Profiles are stored keyed
//! and indexed (`shape.rs`) and read and changed by path (`doc.rs`), so a drag costs what it touches,
//! not the profile's size; the client still reads SPT's shape. Other mods reach it through
//! `gifts.rs`: the function `give-item`, and the events it emits (`profile.created`,
//! `profile.selected`, `items.moved`, `trade.done`; `docs/mods-together.md`). It tells the client
//! through the notifier (`notify.rs`): its channel, and a chat message when a gift or a purchase
//! arrives (`docs/realtime.md`). Each route, by phase, with where its shape comes from in SPT's source:
//! `docs/game.md`.

mod account;
mod actions;
mod boot;
mod doc;
mod gifts;
mod input;
mod inventory;
mod launcher;
mod menu;
mod moving;
mod notify;
mod profile;
mod quest_actions;
mod raid;
mod scav;
mod shape;
mod trading;

use modhost_sdk::{Request, Response, Result, Router, db, envelope, export};

fn router() -> Router {
    let router = Router::new()
        .route("/client/notifier/channel/create", notify::channel)
        .route("/client/game/profile/items/moving", moving::moving)
        .route("/client/handbook/templates", handbook)
        .provide_json("give-item", gifts::give_item);
    // Each phase of a client's session adds its own routes (`docs/game-routes.md` lists them).
    let router = launcher::routes(router);
    let router = boot::routes(router);
    let router = menu::routes(router);
    raid::routes(router)
}

/// The backend's address as the client and the launcher will use it: this host, as the request
/// named it.
pub(crate) fn backend_url(req: &Request) -> String {
    format!("http://{}", req.header("host").unwrap_or("127.0.0.1:6969"))
}

pub(crate) fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn handbook(_: &Request) -> Result<Response> {
    if db::exists("templates.handbook") {
        Ok(envelope::ok_db("templates.handbook"))
    } else {
        Ok(envelope::ok(&serde_json::json!({"Categories": [], "Items": []})))
    }
}

export!(router());
