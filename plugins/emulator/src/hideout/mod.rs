//! The hideout (SPT's `HideoutStaticRouter`, `DataStaticRouter`'s hideout tables and
//! `HideoutItemEventRouter`): its tables, by db reference (`hideout.areas`, `hideout.qte`,
//! `hideout.settings`, `hideout.production`, `hideout.customisation`), which the client reads at the
//! main menu, and its item events, dispatched from `items/mod.rs`'s action table.
//!
//! - `state.rs`: the stored hideout is the state at its `sptUpdateLastRunTimestamp`; what is shown is
//!   that state advanced to now (`simulate.rs`), and reading writes nothing. An action first stores the
//!   advanced state ([`state::settle`]) and then changes it.
//! - `simulate.rs`: time passing, as a pure function of the stored state and the elapsed time (fuel,
//!   filters, power, crafts, the water collector, the bitcoin farm, the scav case, the cultist circle).
//! - `areas.rs`: building and upgrading areas and their improvements (`HideoutUpgrade`,
//!   `HideoutUpgradeComplete`, `HideoutImproveArea`) and the bonuses each level gives.
//! - `bonuses.rs`: what a built level gives the profile (a bigger stash, fuel use, …).
//! - `slots.rs`: items put into and taken from area slots, areas toggled (`HideoutPutItemsInAreaSlots`,
//!   `HideoutTakeItemsFromAreaSlots`, `HideoutToggleArea`).
//! - `production.rs`: crafts started, taken, cancelled and deleted (`HideoutSingleProductionStart`,
//!   `HideoutContinuousProductionStart`, `HideoutScavCaseProductionStart`,
//!   `HideoutCircleOfCultistProductionStart`, `HideoutTakeProduction`, `HideoutCancelProductionCommand`,
//!   `HideoutDeleteProductionCommand`).
//! - `ready.rs`: the host's timer for an area built or a craft done, which tells the mods.
//! - `extras.rs`: the shooting range's record, QTE results, hideout customization and the mannequin's
//!   pose (`RecordShootingRangePoints`, `HideoutQuickTimeEvent`, `HideoutCustomizationApply`,
//!   `HideoutCustomizationSetMannequinPose`).

pub(crate) mod areas;
pub(crate) mod bonuses;
pub(crate) mod extras;
pub(crate) mod production;
pub(crate) mod ready;
pub(crate) mod simulate;
pub(crate) mod slots;
pub(crate) mod state;

use crate::tables::table;
use modhost_sdk::Router;

pub(crate) use state::shown;

/// Adds the hideout's routes to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router
        .route("/client/hideout/areas", |_| Ok(table("hideout.areas", "[]")))
        .route("/client/hideout/qte/list", |_| Ok(table("hideout.qte", "[]")))
        .route("/client/hideout/settings", |_| Ok(table("hideout.settings", "{}")))
        .route("/client/hideout/production/recipes", |_| {
            Ok(table("hideout.production", r#"{"recipes":[],"scavRecipes":[],"cultistRecipes":[]}"#))
        })
        .route("/client/hideout/customization/offer/list", |_| {
            Ok(table("hideout.customisation", r#"{"globals":[],"slots":[]}"#))
        })
        .on_timer(ready::READY_TIMER, ready::fired)
}
