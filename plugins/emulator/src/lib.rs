//! The reference game: an SPT-style backend written as an ordinary modhost mod.
//!
//! Built into the `modhost` binary (see `host/build.rs`); it uses nothing a third-party mod could not.
//! The routes come in the order of a player's session, one folder per phase or system, each adding
//! its routes in its `mod.rs` (every route, with the SPT source its shape comes from: `docs/game.md`):
//!
//! - `launcher/`: the SPT launcher (accounts in `launcher/account.rs`);
//! - `boot/`: the client's boot (static tables by db reference, so they never cross into the guest;
//!   profile create, list, select and status in `boot/profiles.rs`);
//! - `menu/`: the main menu (weather, locations, builds, achievements; quests and traders);
//! - `mail/`: friends, dialogues and chat servers (SPT's `DialogStaticRouter`);
//! - `hideout/`: the hideout's tables (SPT's `HideoutStaticRouter` and the hideout item events);
//! - `ragfair/`: the flea market (SPT's `RagfairStaticRouter` and the ragfair item events);
//! - `insurance/`: insurance quotes (SPT's `InsuranceStaticRouter` and `Insure`);
//! - `raid/`: a raid's round trip, its bots, loot and end, and the player's scav;
//! - `health/`: the profile's health between raids (regeneration, eating, healing, the therapist)
//!   and SPT's `HealthStaticRouter`;
//! - `repair/`: repairing with a kit or at a trader;
//! - `items/`: `/client/game/profile/items/moving`, every item event: inventory actions, trading,
//!   quest actions; and `give-item`, the function other mods call (`items/gifts.rs`).
//!
//! Under them, shared by every phase: `profile/` (the stored profile: its shape, a document read and
//! changed by path, the inventory model, the session's profile), `economy` (over `profile`: a trader's
//! currency, prices and loyalty, and the money a trade gives or takes), and leaves that import no
//! other game module: `ids` (ids), `clock` (the game's one clock), `progression` (levels, trader
//! standing, skills), `templates` (item templates), `events` (what other mods hear), `notify` (the client's
//! notifier), `input` (request bodies, bounded), `tables` (db tables answered by reference).
//!
//! Profiles are stored keyed and indexed (`profile/shape.rs`) and read and changed by path
//! (`profile/doc.rs`), so a drag costs what it touches, not the profile's size; the client still reads
//! SPT's shape.

mod boot;
mod clock;
mod economy;
mod events;
mod health;
mod hideout;
mod ids;
mod input;
mod insurance;
mod items;
mod json_scan;
mod launcher;
mod mail;
mod menu;
mod notify;
mod profile;
mod progression;
mod ragfair;
mod raid;
mod repair;
mod tables;
mod templates;

use modhost_sdk::{Router, export};

/// Every route of the game, phase by phase in the order a client's session reaches them.
fn router() -> Router {
    let router = launcher::routes(Router::new());
    let router = boot::routes(router);
    let router = menu::routes(router);
    let router = mail::routes(router);
    let router = hideout::routes(router);
    let router = ragfair::routes(router);
    let router = insurance::routes(router);
    let router = raid::routes(router);
    let router = health::routes(router);
    items::routes(router)
}

export!(router());
