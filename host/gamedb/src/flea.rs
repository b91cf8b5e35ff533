//! What the flea market reads from the database, generated small in SPT's shape:
//!
//! - the members of `globals.config.RagFair` the flea's rules read (the taxes, the offer's duration
//!   and renewal, `maxActiveOfferCount` by rating, the rating's growth), each put on its own so the
//!   base globals' `RagFair` members stay beside them;
//! - `configs.ragfair` (SPT's `configs/ragfair.json`): `sell` (the sale chance and time, the removal
//!   delay, fees), `dynamic` (the simulated players' offers: how many a template, their life, their
//!   price's spread) and `traders` (whose assorts are on the flea);
//! - `templates.handbook.Categories`: a root category holding the one the generated items are listed
//!   under, so a category search has a subtree to follow.

use crate::{TRADER, put};
use serde_json::{Map, Value, json};

/// The handbook category every generated item is listed under (`lib.rs`).
pub const CATEGORY: &str = "5b5f78dc86f77409407a7f8e";
/// Its parent: a category search from here finds every generated item's offers.
pub const ROOT_CATEGORY: &str = "5b47574386f77428ca22b33e";

/// Adds the flea's tables to `db`.
pub(crate) fn add(db: &mut Map<String, Value>) {
    let ragfair = ["globals", "config", "RagFair"];
    for (name, value) in [
        ("communityItemTax", json!(3)),
        ("communityRequirementTax", json!(3)),
        ("offerDurationTimeInHour", json!(12)),
        ("maxRenewOfferTimeInHour", json!(12)),
        ("ratingIncreaseCount", json!(0.02)),
        ("ratingSumForIncrease", json!(1_000_000)),
        ("minUserLevel", json!(15)),
        (
            "maxActiveOfferCount",
            json!([
                {"from": -10000, "to": 0, "count": 1, "countForSpecialEditions": 1},
                {"from": 0, "to": 10, "count": 2, "countForSpecialEditions": 2},
                {"from": 10, "to": 100000, "count": 5, "countForSpecialEditions": 5}
            ]),
        ),
    ] {
        put(db, &[ragfair[0], ragfair[1], ragfair[2], name], value);
    }
    put(
        db,
        &["configs", "ragfair"],
        json!({
            "runIntervalSeconds": 8,
            "sell": {
                "chance": {"base": 50, "sellMultiplier": 1.24, "minSellChancePercent": 0, "maxSellChancePercent": 100},
                "time": {"min": 0, "max": 1},
                "expireSeconds": 71,
                "fees": true
            },
            "dynamic": {
                "offerItemCount": {"min": 7, "max": 30},
                "endTimeSeconds": {"min": 360, "max": 3600},
                "priceRanges": {"default": {"min": 0.8, "max": 1.2}, "preset": {"min": 0.95, "max": 1.05}, "pack": {"min": 0.75, "max": 0.96}},
                "currencies": {"5449016a4bdc2d6f028b456f": 78, "5696686a4bdc2da3298b456a": 14, "569668774bdc2da2298b4568": 8}
            },
            "traders": {TRADER: true}
        }),
    );
    put(
        db,
        &["templates", "handbook", "Categories"],
        json!([
            {"Id": ROOT_CATEGORY, "ParentId": null, "Icon": "", "Color": "", "Order": "1"},
            {"Id": CATEGORY, "ParentId": ROOT_CATEGORY, "Icon": "", "Color": "", "Order": "1"}
        ]),
    );
}
