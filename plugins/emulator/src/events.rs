//! The game's events: what other mods hear at its key points (`docs/mods-together.md`).
//!
//! Events are emitted after the game's own writes: a subscriber may call back into the game (a
//! welcome gift on `profile.created`) and must find the profile written. An event that no mod hears
//! costs one host call; one that fails is logged, and the player's request goes on.
//!
//! The topics, each with its payload:
//! - [`PROFILE_CREATED`] `{session, uid, nickname, side}`: a new PMC (`boot/profiles.rs`);
//! - [`PROFILE_SELECTED`] `{session, uid}`: a session chose the profile it plays;
//! - [`ITEMS_MOVED`]: a batch of `items/moving` applied (`items/mod.rs`);
//! - [`TRADE_DONE`]: a purchase from a trader (`items/trading.rs`);
//! - [`TRADE_SOLD`] `{session, uid, trader, action, items}`: a sale to a trader (`items/selling.rs`), or
//!   the scav's loot sold to Fence (`items/savage.rs`, no `items`);
//! - [`HEALTH_HEALED`] `{session, uid, action}`: an `Eat`, `Heal` or `RestoreHealth` applied (`health/`);
//! - [`ITEM_REPAIRED`] `{session, uid, action}`: a `Repair` or `TraderRepair` applied (`repair/`).
//! - [`MAIL_SENT`] `{session, uid, dialogId, messageId, type, items}`: a letter arrived in a player's
//!   mailbox (`mail/mailbox.rs`);
//! - [`INSURANCE_RETURNED`] `{session, uid, trader, items, messageId}`: insured items lost in a raid came
//!   back by mail (`insurance/returns.rs`).
//! - [`FLEA_BOUGHT`] `{session, uid, action}`, [`FLEA_LISTED`] `{session, uid, action}` and
//!   [`FLEA_SOLD`] `{uid, offer, count, tpl}`: the flea market (`ragfair/`).
//! - [`HIDEOUT_AREA_READY`] `{session, uid, area, level}` and [`HIDEOUT_PRODUCTION_READY`]
//!   `{session, uid, recipeId}`: an area's construction or a craft is done (`hideout/ready.rs`).

use modhost_sdk::{events, log};
use serde::Serialize;

/// A new PMC was created.
pub(crate) const PROFILE_CREATED: &str = "profile.created";
/// A session chose the profile it plays.
pub(crate) const PROFILE_SELECTED: &str = "profile.selected";
/// A batch of inventory actions applied.
pub(crate) const ITEMS_MOVED: &str = "items.moved";
/// A trade with a trader went through.
pub(crate) const TRADE_DONE: &str = "trade.done";
/// Items were sold to a trader.
pub(crate) const TRADE_SOLD: &str = "trade.sold";
/// The player ate, healed or was healed by a trader.
pub(crate) const HEALTH_HEALED: &str = "health.healed";
/// An item was repaired, with a kit or by a trader.
pub(crate) const ITEM_REPAIRED: &str = "item.repaired";

/// A letter arrived in a player's mailbox.
pub(crate) const MAIL_SENT: &str = "mail.sent";
/// Insured items came back by mail.
pub(crate) const INSURANCE_RETURNED: &str = "insurance.returned";
/// The topics a pending letter may announce when it is delivered (`mail/mailbox.rs`).
pub(crate) const DELIVERY_TOPICS: [&str; 1] = [INSURANCE_RETURNED];
/// A flea offer was bought (`ragfair/buy.rs`).
pub(crate) const FLEA_BOUGHT: &str = "flea.bought";
/// A player's flea offer sold, its money sent by mail (`ragfair/selling.rs`).
pub(crate) const FLEA_SOLD: &str = "flea.sold";
/// A player listed an offer on the flea (`ragfair/player.rs`).
pub(crate) const FLEA_LISTED: &str = "flea.listed";

/// An area's construction is done (the client completes it with `HideoutUpgradeComplete`).
pub(crate) const HIDEOUT_AREA_READY: &str = "emulator.hideout.area.ready";
/// A craft is done and can be taken.
pub(crate) const HIDEOUT_PRODUCTION_READY: &str = "emulator.hideout.production.ready";

/// Emits `topic` with `payload`; a failure is logged, never the request's.
pub(crate) fn announce(topic: &str, payload: &impl Serialize) {
    if let Err(e) = events::emit(topic, payload) {
        log::warn(&format!("emitting {topic}: {e}"));
    }
}
