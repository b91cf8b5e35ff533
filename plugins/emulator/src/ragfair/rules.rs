//! The flea's rules from the db: the globals' `config.RagFair` (taxes, offer duration, the offer limit
//! by rating, rating growth) and SPT's `configs.ragfair` (sale chance and time, removal delay, fees,
//! generated offers), with SPT's defaults where the db has none. Read once per instance.
//!
//! Also the two helpers every part of the flea shares: an item's flea price in roubles, and a random
//! number source (sales and generated offers are rolled as SPT rolls them).

use modhost_sdk::db;
use serde_json::Value;

/// What the flea reads from the db.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    /// `communityItemTax` and `communityRequirementTax`, percent.
    pub(crate) item_tax: f64,
    pub(crate) requirement_tax: f64,
    /// `offerDurationTimeInHour`: how long a player's offer stands.
    pub(crate) duration_hours: u64,
    /// `maxRenewOfferTimeInHour`: the most hours one renewal adds.
    pub(crate) max_renew_hours: u64,
    /// `maxActiveOfferCount`: `(from, to, count)` by flea rating.
    pub(crate) max_active: Vec<(f64, f64, u64)>,
    /// `ratingIncreaseCount` / `ratingSumForIncrease`: rating gained per rouble sold.
    pub(crate) rating_per_rouble: f64,
    /// `configs.ragfair.sell.chance`: base, sellMultiplier, min and max percent.
    pub(crate) chance_base: f64,
    pub(crate) chance_multiplier: f64,
    pub(crate) chance_min: f64,
    pub(crate) chance_max: f64,
    /// `configs.ragfair.sell.time`: minutes, min and max, between sales.
    pub(crate) time_min: f64,
    pub(crate) time_max: f64,
    /// `configs.ragfair.sell.expireSeconds`: a removed offer ends this soon.
    pub(crate) expire_seconds: u64,
    /// `configs.ragfair.sell.fees`: whether listing and renewing cost a fee.
    pub(crate) fees: bool,
    /// `configs.ragfair.dynamic`: generated offers per template (min), their life in seconds, and
    /// their price's spread around the flea price.
    pub(crate) generated_per_template: u64,
    pub(crate) generated_life: (u64, u64),
    pub(crate) price_range: (f64, f64),
    /// Which traders' assorts are on the flea (`configs.ragfair.traders`; none listed: every trader).
    pub(crate) traders: Option<Vec<String>>,
}

fn num(value: &Value, default: f64) -> f64 {
    value.as_f64().filter(|n| n.is_finite()).unwrap_or(default)
}

impl Rules {
    /// The rules from a db's `globals.config.RagFair` and `configs.ragfair`.
    pub(crate) fn from(globals: &Value, config: &Value) -> Rules {
        let max_active: Vec<(f64, f64, u64)> = globals["maxActiveOfferCount"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| Some((num(&r["from"], f64::MIN), num(&r["to"], f64::MAX), r["count"].as_u64()?)))
            .collect();
        let sell = &config["sell"];
        let dynamic = &config["dynamic"];
        let traders = config["traders"].as_object().map(|t| {
            t.iter().filter(|(_, on)| on.as_bool() == Some(true)).map(|(id, _)| id.clone()).collect::<Vec<_>>()
        });
        let increase = num(&globals["ratingIncreaseCount"], 0.02);
        let sum = num(&globals["ratingSumForIncrease"], 1_000_000.0).max(1.0);
        Rules {
            item_tax: num(&globals["communityItemTax"], 3.0),
            requirement_tax: num(&globals["communityRequirementTax"], 3.0),
            duration_hours: globals["offerDurationTimeInHour"].as_u64().unwrap_or(12).max(1),
            max_renew_hours: globals["maxRenewOfferTimeInHour"].as_u64().unwrap_or(12).max(1),
            max_active: if max_active.is_empty() { vec![(f64::MIN, f64::MAX, 2)] } else { max_active },
            rating_per_rouble: increase / sum,
            chance_base: num(&sell["chance"]["base"], 50.0),
            chance_multiplier: num(&sell["chance"]["sellMultiplier"], 1.24),
            chance_min: num(&sell["chance"]["minSellChancePercent"], 0.0),
            chance_max: num(&sell["chance"]["maxSellChancePercent"], 100.0),
            time_min: num(&sell["time"]["min"], 0.0).max(0.0),
            time_max: num(&sell["time"]["max"], 1.0).max(0.0),
            expire_seconds: sell["expireSeconds"].as_u64().unwrap_or(71),
            fees: sell["fees"].as_bool().unwrap_or(true),
            generated_per_template: dynamic["offerItemCount"]["min"].as_u64().unwrap_or(7).min(100),
            generated_life: (
                dynamic["endTimeSeconds"]["min"].as_u64().unwrap_or(360).max(60),
                dynamic["endTimeSeconds"]["max"].as_u64().unwrap_or(3600).max(60),
            ),
            price_range: (
                num(&dynamic["priceRanges"]["default"]["min"], 0.8),
                num(&dynamic["priceRanges"]["default"]["max"], 1.2),
            ),
            traders,
        }
    }

    /// The most offers a player with `rating` may have standing at once.
    pub(crate) fn offer_limit(&self, rating: f64) -> u64 {
        self.max_active.iter().find(|(from, to, _)| rating >= *from && rating < *to).map_or(0, |(_, _, n)| *n)
    }
}

/// The db's rules, read once per instance.
pub(crate) fn get() -> &'static Rules {
    static RULES: std::sync::OnceLock<Rules> = std::sync::OnceLock::new();
    RULES.get_or_init(|| {
        let globals: Value = db::get("globals.config.RagFair").unwrap_or_default();
        let config: Value = db::get("configs.ragfair").unwrap_or_default();
        Rules::from(&globals, &config)
    })
}

/// The flea price of one `tpl` in roubles: `templates.prices`, else the template's `CreditsPrice`
/// (the handbook's price in SPT's items); 0 when the db has neither.
pub(crate) fn price(tpl: &str) -> f64 {
    if tpl == crate::templates::ROUBLES {
        return 1.0;
    }
    db::get::<f64>(&db::path(&["templates", "prices", tpl]))
        .ok()
        .or_else(|| db::get::<f64>(&db::path(&["templates", "items", tpl, "_props", "CreditsPrice"])).ok())
        .filter(|p| p.is_finite() && *p >= 0.0)
        .unwrap_or(0.0)
}

/// A small random source (splitmix64), seeded from WASI's randomness.
pub(crate) struct Rng(u64);

impl Rng {
    /// A fresh source.
    pub(crate) fn new() -> Rng {
        use std::hash::BuildHasher;
        Rng(std::collections::hash_map::RandomState::new().hash_one(0u8))
    }

    /// A source from `seed` (tests).
    #[cfg(test)]
    pub(crate) fn seeded(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `[0, 1)`.
    pub(crate) fn float(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A whole number from `lo` to `hi`, both included.
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo { lo } else { lo + self.next() % (hi - lo + 1) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_offer_limit_follows_the_rating_bands() {
        let globals = json!({"maxActiveOfferCount": [
            {"from": -10000, "to": 0, "count": 1}, {"from": 0, "to": 10, "count": 3}, {"from": 10, "to": 100000, "count": 5}
        ]});
        let rules = Rules::from(&globals, &json!({}));
        assert_eq!((rules.offer_limit(-1.0), rules.offer_limit(0.2), rules.offer_limit(12.0)), (1, 3, 5));
        let defaults = Rules::from(&json!({}), &json!({}));
        assert_eq!((defaults.offer_limit(0.0), defaults.expire_seconds, defaults.duration_hours), (2, 71, 12));
    }

    #[test]
    fn the_random_source_stays_in_its_ranges() {
        let mut rng = Rng::seeded(7);
        for _ in 0..1000 {
            let f = rng.float();
            assert!((0.0..1.0).contains(&f));
            assert!((3..=5).contains(&rng.range(3, 5)));
        }
    }
}
