//! Progression: a player's level from experience, standing with a trader, and skills, as the db's
//! `globals` and `traders` define them. Quests, raids and (later) the hideout all move a player along
//! these, so they live in one leaf every phase reads.

use modhost_sdk::db;
use serde::Deserialize;
use serde_json::{Value, json};

/// SPT's highest skill progress (level 51), which no skill goes beyond.
pub(crate) const MAX_SKILL_PROGRESS: f64 = 5100.0;

/// A `TradersInfo` entry for a trader the profile meets now, at `standing` (SPT's `TraderInfo`; unlocked
/// when the trader's base says it is by default).
pub(crate) fn trader_met(trader: &str, standing: f64) -> Value {
    let unlocked = db::get::<bool>(&db::path(&["traders", trader, "base", "unlockedByDefault"])).unwrap_or(true);
    json!({"loyaltyLevel": 1, "salesSum": 0, "standing": standing, "nextResupply": 0, "unlocked": unlocked,
           "disabled": false})
}

/// The level `xp` reaches in `globals.config.exp.level.exp_table` (each entry the experience of one
/// more level); `None` when the database has no table.
pub(crate) fn level_for(xp: f64) -> Option<Value> {
    let table: Vec<Value> = db::get("globals.config.exp.level.exp_table").ok()?;
    let mut total = 0.0;
    let mut level = 0u64;
    for entry in table.iter().take(500) {
        total += entry["exp"].as_f64().unwrap_or(0.0);
        if xp >= total {
            level += 1;
        } else {
            break;
        }
    }
    Some(json!(level.max(1)))
}

/// The experience each level needs (`globals.config.exp.level.exp_table`), bounded.
pub(crate) fn exp_table() -> Vec<i64> {
    #[derive(Deserialize)]
    struct Level {
        #[serde(default)]
        exp: i64,
    }
    let levels: Vec<Level> = db::get("globals.config.exp.level.exp_table").unwrap_or_default();
    levels.into_iter().take(1000).map(|l| l.exp).collect()
}

/// SPT's `ProfileHelper.GetExperience`: the experience to reach `level`.
pub(crate) fn experience(table: &[i64], level: i64) -> i64 {
    let level = level.clamp(0, table.len().saturating_sub(1) as i64) as usize;
    table[..level].iter().sum()
}

/// Skill `skill`'s progress in `Skills.Common` (a level is 100 of it); 0 for a skill not listed.
pub(crate) fn skill_progress(common: &Value, skill: &str) -> f64 {
    common
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["Id"] == skill)
        .and_then(|s| s["Progress"].as_f64())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn experience_sums_the_levels_below() {
        let table = [0, 1000, 3000, 6000];
        assert_eq!(experience(&table, 1), 0);
        assert_eq!(experience(&table, 2), 1000);
        assert_eq!(experience(&table, 3), 4000);
        assert_eq!(experience(&table, 99), 4000, "past the last level, the last");
        assert_eq!(experience(&[], 5), 0);
    }
}
