//! The hideout (SPT's `HideoutStaticRouter`, `DataStaticRouter`'s hideout tables and
//! `HideoutItemEventRouter`). Today: its tables, by db reference (`hideout.areas`, `hideout.qte`,
//! `hideout.settings`, `hideout.production`, `hideout.customisation`), which the client reads at the
//! main menu. The hideout's item events (`HideoutUpgrade`, `HideoutTakeProduction`, …) belong here,
//! dispatched from `items/mod.rs`'s action table, and read the time from `clock.rs`.

use crate::tables::table;
use modhost_sdk::Router;

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
}
