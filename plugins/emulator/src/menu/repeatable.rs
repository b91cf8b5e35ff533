//! Repeatable quests: the daily and weekly tasks traders hand out, generated per player (SPT's
//! `RepeatableQuestGenerator`, `RepeatableQuestRewardGenerator` and the roll-over and change rules of
//! `RepeatableQuestController`).
//!
//! A kind (`configs.quest.repeatableQuests[]`: Daily, Weekly, Daily_Savage) gives `numQuests`
//! quests per period, each drawn from a pool (SPT's `QuestTypePool`) so a period does not explore a
//! map twice or send the player after the same target on the same map twice:
//!
//! - **Elimination**: the kind's `questConfig.Elimination` entry for the player's level; a target
//!   drawn by `relativeProbability` (a boss becomes `Savage` with its `savageRole`), on any map or,
//!   with `specificLocationProb`, one map of the pool; a body part with `bodyPartProb` (one or two,
//!   each drawn by probability and widened to the client's parts: `Arms` → both arms); a distance with
//!   `distProb` (off on the maps of `distLocationBlacklist`); a kill count from the boss, PMC or plain
//!   range. Its difficulty is SPT's weighing, mapped to 0.5–2, and scales the rewards (at most 1).
//! - **Completion**: items to hand in, found in raid when `requiredItemsAreFiR`, from what the trader
//!   may reward (below) priced under a budget (the level's `rewardScaling.roubles` × 0.5–1, at least
//!   5000), narrowed to `templates.repeatableQuests.data.Completion.itemsWhitelist` for the level
//!   when `useWhitelist`; 1 to `uniqueItemCount` distinct items, each 1–4 units (ammunition 15–40) as
//!   the budget allows; a weapon's or armour's minimum durability drawn from the config's two.
//! - **Exploration**: survive 1 to `maxExtracts` raids on one map of the pool (the maps whose
//!   `RequiredPlayerLevelMin/Max` admit the player), with `specificExits.probability` through a named
//!   exit of that map (then at most `maxExtractsWithSpecificExit - 1` raids). Its difficulty is the
//!   raid count mapped to 0.2–1.
//!
//! A quest is given by a trader of the kind's `traderWhitelist` that offers its type and that the
//! player has unlocked. It is the db's `templates.repeatableQuests.templates.<type>` with fresh ids,
//! SPT's locale keys (`{templateId}`/`{traderId}` filled from `configs.quest.questTemplateIds`) and
//! `location` from `configs.quest.locationIdMap`. Its rewards (SPT's reward generator): experience,
//! money (roubles; euros from Peacekeeper and Fence, at the handbook's rate), GP coins when the db
//! has them, 1 to the level's `items` reward items within the money budget (what the trader may
//! reward: a template the handbook prices, of one of the trader's `rewardBaseWhitelist` categories,
//! not of `rewardBaseTypeBlacklist`, not in `rewardBlacklist`; a Completion's own items are avoided),
//! standing with the trader, and with the level's `skillRewardChance` skill points in one of the
//! type's `possibleSkillRewards`. All scaled by `rewardScaling` interpolated at the player's level,
//! spread by ± `rewardSpread`.
//!
//! Left out: SPT's weapon requirements on eliminations (SPT's own generator leaves the category unset),
//! a weapon preset as a reward, the seasonal-event item filter, Pickup quests (no kind of SPT's uses
//! them), and the extra quests of an elite Charisma.

use crate::economy::{EUROS, Prices};
use crate::ids;
use crate::templates::{ROUBLES, Templates};
use modhost_sdk::db;
use serde_json::{Map, Value, json};

/// Attempts at one quest before the period goes without it (SPT's `lifeline`).
const MAX_ATTEMPTS: usize = 10;
/// Entries read from any list of the config (types, traders, maps, targets, body parts, whitelists).
const MAX_LIST: usize = 256;
/// Handbook entries considered as requested or reward items.
const MAX_CANDIDATES: usize = 20_000;
/// The least a Completion's budget is (SPT's floor).
const MIN_COMPLETION_BUDGET: f64 = 5000.0;
/// Traders that pay in euros (SPT's `GetMoneyReward`: Peacekeeper and Fence).
const EURO_TRADERS: [&str; 2] = ["5935c25fb3acc3127c3d8cd9", "579dc571d53a0658a154fbec"];
/// The GP coin's template.
const GP_COIN: &str = "5d235b4d86f7742e017bc88a";
/// Categories: ammunition (counted in bullets), and weapons and armour (asked at a durability).
const AMMO: &str = "5485a8684bdc2da71d8b4567";
const WEAPON: &str = "5422acb9af1c889c16000029";
const ARMOR: &str = "5448e54d4bdc2dcc718b4568";
/// Game editions with free changes (SPT's `HasAccessToRepeatableFreeRefreshSystem`).
const FREE_CHANGE_EDITIONS: [&str; 2] = ["edge_of_darkness", "unheard_edition"];

/// The kind named `name` in `configs.quest.repeatableQuests`.
pub(crate) fn kind(name: &str) -> Option<Value> {
    let kinds: Vec<Value> = db::get("configs.quest.repeatableQuests").unwrap_or_default();
    kinds.into_iter().take(MAX_LIST).find(|k| k["name"] == name)
}

/// The active repeatable quest `qid` of the profile's `RepeatableQuests`, and the index of its period.
pub(crate) fn active<'a>(periods: &'a Value, qid: &str) -> Option<(usize, &'a Value)> {
    periods.as_array()?.iter().take(MAX_LIST).enumerate().find_map(|(at, period)| {
        period["activeQuests"].as_array()?.iter().take(MAX_LIST).find(|q| q["_id"] == qid).map(|q| (at, q))
    })
}

/// `(freeChanges, freeChangesAvailable)` of a new period of `kind`: the config's for the editions
/// SPT gives free changes to, none for the others.
pub(crate) fn free_changes(kind: &Value, edition: &str) -> (u64, u64) {
    if FREE_CHANGE_EDITIONS.contains(&edition) {
        (kind["freeChanges"].as_u64().unwrap_or(0), kind["freeChangesAvailable"].as_u64().unwrap_or(0))
    } else {
        (0, 0)
    }
}

/// What replacing `quest` costs (a period's `changeRequirement.<id>`): the quest's `changeCost`, and
/// a standing drawn from the kind's `standingChangeCost`.
pub(crate) fn requirement(kind: &Value, quest: &Value) -> Value {
    let standing = pick(kind["standingChangeCost"].as_array().map(Vec::as_slice).unwrap_or_default())
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    json!({"changeCost": quest["changeCost"].as_array().cloned().unwrap_or_default(), "changeStandingCost": standing})
}

/// What the generator knows of the player.
pub(crate) struct Player<'a> {
    pub(crate) uid: &'a str,
    pub(crate) level: f64,
    /// The profile's `TradersInfo`.
    pub(crate) traders: &'a Value,
}

/// What a period's quests may still be (SPT's `QuestTypePool`): the types left, the maps left to
/// explore (config key → location ids), and each elimination target with the maps left for it.
pub(crate) struct Pool {
    types: Vec<String>,
    explore: Vec<(String, Value)>,
    targets: Vec<(String, Vec<String>)>,
}

impl Pool {
    /// A fresh pool for a period of `kind` (or `only` its one type, for a change that keeps the type).
    pub(crate) fn new(kind: &Value, level: f64, only: Option<&str>) -> Pool {
        let mut types: Vec<String> = strings(&kind["types"]);
        if let Some(only) = only {
            types.retain(|t| t == only);
        }
        let mut maps: Vec<(String, Value)> = Vec::new();
        for (key, ids) in kind["locations"].as_object().into_iter().flatten().take(MAX_LIST) {
            let allowed: Vec<Value> =
                strings(ids).into_iter().filter(|id| map_allows(id, level)).map(Value::String).collect();
            if !allowed.is_empty() {
                maps.push((key.clone(), Value::Array(allowed)));
            }
        }
        let explore = maps.iter().filter(|(key, _)| key != "any").cloned().collect();
        let mut targets = Vec::new();
        if let Some(config) = elimination(kind, level) {
            for target in config["targets"].as_array().into_iter().flatten().take(MAX_LIST) {
                let Some(key) = target["key"].as_str() else { continue };
                let on: Vec<String> = if target["data"]["isBoss"] == true {
                    vec!["any".to_owned()]
                } else {
                    // Scavs are not on the lab.
                    maps.iter().map(|(k, _)| k.clone()).filter(|k| !(key == "Savage" && k == "laboratory")).collect()
                };
                targets.push((key.to_owned(), on));
            }
        }
        Pool { types, explore, targets }
    }

    fn drop_type(&mut self, kind: &str) {
        self.types.retain(|t| t != kind);
    }
}

/// Whether map `id`'s level range admits the player (a map the db lacks does, as SPT's).
fn map_allows(id: &str, level: f64) -> bool {
    if id == "any" {
        return true;
    }
    let base = db::path(&["locations", &id.to_lowercase(), "base"]);
    let min = db::get::<f64>(&format!("{base}.RequiredPlayerLevelMin")).unwrap_or(0.0);
    let max = db::get::<f64>(&format!("{base}.RequiredPlayerLevelMax")).unwrap_or(f64::MAX);
    level >= min && level <= max
}

/// The kind's `questConfig.Elimination` entry whose `levelRange` holds `level`.
fn elimination(kind: &Value, level: f64) -> Option<&Value> {
    kind["questConfig"]["Elimination"].as_array()?.iter().take(MAX_LIST).find(|c| {
        let range = &c["levelRange"];
        level >= range["min"].as_f64().unwrap_or(0.0) && level <= range["max"].as_f64().unwrap_or(f64::MAX)
    })
}

/// The strings of a JSON list.
fn strings(list: &Value) -> Vec<String> {
    list.as_array().into_iter().flatten().take(MAX_LIST).filter_map(Value::as_str).map(str::to_owned).collect()
}

/// A random element of `list`.
fn pick<T>(list: &[T]) -> Option<&T> {
    (!list.is_empty()).then(|| &list[ids::below(list.len() as u64) as usize])
}

/// A random whole number in `lo..=hi` (`lo` when `hi < lo`).
fn between(lo: u64, hi: u64) -> u64 {
    if hi <= lo { lo } else { lo + ids::below(hi - lo + 1) }
}

/// A random number in `lo..hi`.
fn uniform(lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * ids::unit()
}

/// The index drawn from `weights` (each `relativeProbability`), or `None` when none is positive.
fn draw(weights: &[f64]) -> Option<usize> {
    ids::weighted(weights, ids::unit())
}

/// SPT's `Interp1`: `ys` at `x`, linearly between the `xs` around it, clamped at the ends.
fn interp(x: f64, xs: &Value, ys: &Value) -> f64 {
    let xs: Vec<f64> = xs.as_array().into_iter().flatten().take(MAX_LIST).filter_map(Value::as_f64).collect();
    let ys: Vec<f64> = ys.as_array().into_iter().flatten().take(MAX_LIST).filter_map(Value::as_f64).collect();
    let n = xs.len().min(ys.len());
    if n == 0 {
        return 0.0;
    }
    if x <= xs[0] {
        return ys[0];
    }
    for i in 0..n - 1 {
        if x >= xs[i] && x <= xs[i + 1] && xs[i + 1] > xs[i] {
            return ys[i] + (x - xs[i]) * (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]);
        }
    }
    ys[n - 1]
}

/// SPT's `MapToRange`: `x` from `min_in..max_in` to `min_out..max_out`, clamped to the latter.
fn map_to_range(x: f64, min_in: f64, max_in: f64, min_out: f64, max_out: f64) -> f64 {
    if max_in == min_in || !x.is_finite() {
        return min_out;
    }
    (min_out + (max_out - min_out) * (x - min_in) / (max_in - min_in)).clamp(min_out, max_out)
}

/// A template the handbook prices, and its lineage (itself, then its categories).
struct Candidate {
    tpl: String,
    price: f64,
    lineage: Vec<String>,
}

/// What generating reads of the db's items, read once per request and kept for every quest and kind
/// generated in it: the handbook's prices and each priced template's lineage.
#[derive(Default)]
pub(crate) struct Catalogue {
    prices: Prices,
    templates: Templates,
    candidates: Option<Vec<Candidate>>,
}

impl Catalogue {
    /// The priced templates the db has (a template it lacks has a lineage of itself alone).
    fn candidates(&mut self) -> &[Candidate] {
        if self.candidates.is_none() {
            let mut all = Vec::new();
            for (tpl, price) in crate::templates::handbook_prices().into_iter().take(MAX_CANDIDATES) {
                if price.is_finite() && price > 0.0 {
                    let lineage = self.templates.lineage(&tpl);
                    if lineage.len() > 1 {
                        all.push(Candidate { tpl, price, lineage });
                    }
                }
            }
            self.candidates = Some(all);
        }
        self.candidates.as_deref().unwrap_or_default()
    }
}

/// Generates one kind's quests for one player.
pub(crate) struct Generator<'a> {
    kind: &'a Value,
    player: Player<'a>,
    catalogue: &'a mut Catalogue,
}

impl<'a> Generator<'a> {
    pub(crate) fn new(kind: &'a Value, player: Player<'a>, catalogue: &'a mut Catalogue) -> Generator<'a> {
        Generator { kind, player, catalogue }
    }

    /// A new quest from `pool`, tried up to [`MAX_ATTEMPTS`] times; `None` when the pool runs dry.
    pub(crate) fn quest(&mut self, pool: &mut Pool) -> Option<Value> {
        for _ in 0..MAX_ATTEMPTS {
            let kind = pick(&pool.types)?.clone();
            let traders = self.traders_for(&kind);
            let Some(trader) = pick(&traders).cloned() else {
                pool.drop_type(&kind);
                continue;
            };
            let quest = match kind.as_str() {
                "Elimination" => self.elimination(pool, &trader),
                "Completion" => self.completion(&trader),
                "Exploration" => self.exploration(pool, &trader),
                _ => None,
            };
            match quest {
                Some(quest) => return Some(quest),
                // A type that cannot be made (its template missing, no items in budget) is not tried again.
                None if kind != "Elimination" && kind != "Exploration" => pool.drop_type(&kind),
                None => {}
            }
        }
        None
    }

    /// The whitelisted traders offering quests of `kind` that exist and the player has unlocked.
    fn traders_for(&self, kind: &str) -> Vec<String> {
        let mut out = Vec::new();
        for entry in self.kind["traderWhitelist"].as_array().into_iter().flatten().take(MAX_LIST) {
            let Some(tid) = entry["traderId"].as_str() else { continue };
            if !strings(&entry["questTypes"]).iter().any(|t| t == kind) {
                continue;
            }
            let base = db::path(&["traders", tid, "base"]);
            if !db::exists(&base) {
                continue;
            }
            let unlocked = match self.player.traders[tid]["unlocked"].as_bool() {
                Some(unlocked) => unlocked,
                None => db::get::<bool>(&format!("{base}.unlockedByDefault")).unwrap_or(false),
            };
            if unlocked {
                out.push(tid.to_owned());
            }
        }
        out
    }

    /// The config's entry for the trader in `traderWhitelist`.
    fn whitelist(&self, trader: &str) -> Value {
        self.kind["traderWhitelist"]
            .as_array()
            .into_iter()
            .flatten()
            .take(MAX_LIST)
            .find(|e| e["traderId"] == trader)
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// SPT's `questConfig.<type>` for the player (an Elimination's by level).
    fn type_config(&self, kind: &str) -> Value {
        match kind {
            "Elimination" => elimination(self.kind, self.player.level).cloned().unwrap_or(Value::Null),
            _ => self.kind["questConfig"][kind].clone(),
        }
    }

    fn elimination(&mut self, pool: &mut Pool, trader: &str) -> Option<Value> {
        let config = self.type_config("Elimination");
        let targets: Vec<&Value> = config["targets"].as_array()?.iter().take(MAX_LIST).collect();
        let all_weights: Vec<f64> = targets.iter().map(|t| t["relativeProbability"].as_f64().unwrap_or(0.0)).collect();
        let open: Vec<(usize, &Value)> = targets
            .iter()
            .enumerate()
            .filter(|(_, t)| pool.targets.iter().any(|(k, maps)| t["key"] == k.as_str() && !maps.is_empty()))
            .map(|(n, t)| (n, *t))
            .collect();
        if open.is_empty() || open.iter().all(|(_, t)| t["data"]["isBoss"] == true) {
            pool.drop_type("Elimination");
            return None;
        }
        let weights: Vec<f64> = open.iter().map(|(n, _)| all_weights[*n]).collect();
        let (_, target) = open[draw(&weights)?];
        let key = target["key"].as_str()?.to_owned();
        let is_boss = target["data"]["isBoss"] == true;
        let is_pmc = target["data"]["isPmc"] == true;
        // SPT weighs difficulty by the relative probabilities as written (not normalised).
        let max_weight = all_weights.iter().copied().fold(0.0, f64::max);
        let min_weight = all_weights.iter().copied().filter(|w| *w > 0.0).fold(f64::MAX, f64::min);
        let weight = target["relativeProbability"].as_f64().unwrap_or(1.0);

        // Where: any map, or (with `specificLocationProb`) one of the target's maps left in the pool.
        let at = pool.targets.iter().position(|(k, _)| *k == key)?;
        let maps = pool.targets[at].1.clone();
        let specific: Vec<&String> = maps.iter().filter(|m| *m != "any").collect();
        let location = if maps.iter().any(|m| m == "any")
            && (config["specificLocationProb"].as_f64().unwrap_or(0.0) < ids::unit() || maps.len() <= 1)
        {
            pool.targets.remove(at);
            "any".to_owned()
        } else {
            let chosen = pick(&specific).map(|m| (*m).clone())?;
            pool.targets[at].1.retain(|m| *m != chosen);
            if pool.targets[at].1.is_empty() {
                pool.targets.remove(at);
            }
            chosen
        };

        let body_parts = config["bodyParts"].as_array().cloned().unwrap_or_default();
        let part_weights: Vec<f64> =
            body_parts.iter().take(MAX_LIST).map(|p| p["relativeProbability"].as_f64().unwrap_or(0.0)).collect();
        let mut parts: Vec<Value> = Vec::new();
        let mut part_difficulty = 0.0;
        if config["bodyPartProb"].as_f64().unwrap_or(0.0) > ids::unit() {
            let mut weights = part_weights.clone();
            let mut probability = 0.0;
            for _ in 0..between(1, 2) {
                let Some(n) = draw(&weights) else { break };
                probability += weights[n];
                weights[n] = 0.0;
                parts.extend(body_parts[n]["data"].as_array().cloned().unwrap_or_default());
            }
            if probability > 0.0 {
                part_difficulty = 1.0 / probability;
            }
        }
        let min_part = part_weights.iter().copied().filter(|w| *w > 0.0).fold(f64::MAX, f64::min);

        let (min_kills, max_kills) =
            (config["minKills"].as_u64().unwrap_or(1), config["maxKills"].as_u64().unwrap_or(1));
        let mut distance_difficulty = 0.0;
        let mut distance = None;
        let blacklisted = strings(&config["distLocationBlacklist"]).contains(&location);
        if !blacklisted && config["distProb"].as_f64().unwrap_or(0.0) > ids::unit() {
            let (min, max) = (config["minDist"].as_f64().unwrap_or(0.0), config["maxDist"].as_f64().unwrap_or(0.0));
            let raw = ((ids::unit() - ids::unit()).abs() * (1.0 + max - min) + min).floor() as u64;
            let metres = raw / 5 * 5;
            if max > 0.0 {
                distance_difficulty = (2.0 * metres as f64 / max).floor();
            }
            distance = Some(metres);
        }
        let kills = if is_boss {
            between(config["minBossKills"].as_u64().unwrap_or(1), config["maxBossKills"].as_u64().unwrap_or(1))
        } else if is_pmc {
            between(config["minPmcKills"].as_u64().unwrap_or(1), config["maxPmcKills"].as_u64().unwrap_or(1))
        } else {
            between(min_kills, max_kills)
        };

        // SPT's `DifficultyWeighing`, mapped to 0.5–2.
        let weigh = |target: f64, part: f64, dist: f64, kill: f64| (target.sqrt() + part + dist).sqrt() * kill;
        let max_target = 1.0 / min_weight;
        let max_part = if min_part < f64::MAX && min_part > 0.0 { min_kills as f64 / min_part } else { 1.0 };
        let current = weigh(
            (1.0 / weight) / max_target,
            part_difficulty / max_part,
            distance_difficulty / 2.0,
            kills as f64 / max_kills.max(1) as f64,
        );
        let difficulty = map_to_range(current, 1.0 / max_weight, weigh(1.0, 1.0, 1.0, 1.0), 0.5, 2.0);

        let mut quest = self.template("Elimination", trader)?;
        let mut kill = json!({
            "id": ids::new_id(), "dynamicLocale": true, "target": key, "value": 1, "resetOnSessionEnd": false,
            "enemyHealthEffects": [], "daytime": {"from": 0, "to": 0}, "conditionType": "Kills",
        });
        if key.starts_with("boss") {
            kill["target"] = json!("Savage");
            kill["savageRole"] = json!([key]);
        }
        if !parts.is_empty() {
            kill["bodyPart"] = Value::Array(parts);
        }
        if let Some(metres) = distance {
            kill["distance"] = json!({"compareMethod": ">=", "value": metres});
        }
        let mut counter = Vec::new();
        if location != "any" {
            counter.push(self.location_condition(&location));
        }
        counter.push(kill);
        let finish = &mut quest["conditions"]["AvailableForFinish"][0];
        finish["id"] = json!(ids::new_id());
        finish["value"] = json!(kills);
        finish["counter"] = json!({"id": ids::new_id(), "conditions": counter});
        quest["location"] = self.location_id(&location);
        quest["rewards"] = self.rewards(difficulty.min(1.0), trader, &config, &[]);
        Some(quest)
    }

    /// A `Location` counter condition on the config's maps under `key`.
    fn location_condition(&self, key: &str) -> Value {
        let maps = self.kind["locations"][key].as_array().cloned().unwrap_or_default();
        json!({"id": ids::new_id(), "dynamicLocale": true, "target": maps, "conditionType": "Location"})
    }

    /// The quest's `location`: the map's id (`configs.quest.locationIdMap`), or `any`.
    fn location_id(&self, key: &str) -> Value {
        db::get::<String>(&db::path(&["configs", "quest", "locationIdMap", key])).map_or(json!("any"), Value::String)
    }

    fn completion(&mut self, trader: &str) -> Option<Value> {
        let config = self.type_config("Completion");
        let scaling = &self.kind["rewardScaling"];
        let mut budget = (interp(self.player.level, &scaling["levels"], &scaling["roubles"]) * uniform(0.5, 1.0))
            .floor()
            .max(MIN_COMPLETION_BUDGET);
        let whitelist =
            if config["useWhitelist"] == true { Some(self.completion_list("itemsWhitelist")) } else { None };
        let blacklist =
            if config["useBlacklist"] == true { self.completion_list("itemsBlacklist") } else { Vec::new() };
        let mut selection: Vec<(String, f64, bool, bool)> = self
            .rewardable(trader)
            .into_iter()
            .filter(|c| c.price < budget)
            .filter(|c| whitelist.as_ref().is_none_or(|w| c.lineage.iter().any(|l| w.contains(l))))
            .filter(|c| !c.lineage.iter().any(|l| blacklist.contains(l)))
            .map(|c| {
                let ammo = c.lineage.iter().any(|l| l == AMMO);
                let durable = c.lineage.iter().any(|l| l == WEAPON || l == ARMOR);
                (c.tpl.clone(), c.price, ammo, durable)
            })
            .collect();
        if selection.is_empty() {
            return None;
        }
        let mut quest = self.template("Completion", trader)?;
        let unique = config["uniqueItemCount"].as_u64().unwrap_or(1).max(1);
        let mut chosen: Vec<String> = Vec::new();
        let mut conditions = Vec::new();
        let mut ammo_asked = false;
        for _ in 0..between(1, unique) {
            let open: Vec<usize> = (0..selection.len())
                .filter(|n| !(chosen.contains(&selection[*n].0) || (selection[*n].2 && ammo_asked)))
                .collect();
            let Some(&n) = pick(&open) else { break };
            let (tpl, price, ammo, durable) = selection[n].clone();
            let (mut min, mut max) = (
                config["minRequestedAmount"].as_u64().unwrap_or(1),
                config["maxRequestedAmount"].as_u64().unwrap_or(1),
            );
            if ammo {
                ammo_asked = true;
                min = config["minRequestedBulletAmount"].as_u64().unwrap_or(min);
                max = config["maxRequestedBulletAmount"].as_u64().unwrap_or(max);
            }
            max = max.min((budget / price).floor() as u64);
            let value = if max > min { between(min, max) } else { min };
            budget -= value as f64 * price;
            let durability = if durable {
                let bounds = &config["requiredItemMinDurabilityMinMax"];
                *pick(&[bounds["min"].as_f64().unwrap_or(0.0), bounds["max"].as_f64().unwrap_or(0.0)]).unwrap_or(&0.0)
            } else {
                0.0
            };
            conditions.push(json!({
                "id": ids::new_id(), "index": conditions.len(), "parentId": "", "dynamicLocale": true,
                "visibilityConditions": [], "globalQuestCounterId": "", "target": [tpl], "value": value,
                "minDurability": durability, "maxDurability": 100, "dogtagLevel": 0,
                "onlyFoundInRaid": config["requiredItemsAreFiR"] == true, "isEncoded": false,
                "conditionType": "HandoverItem",
            }));
            chosen.push(tpl);
            selection.retain(|s| s.1 < budget);
            if budget <= 0.0 || selection.is_empty() {
                break;
            }
        }
        quest["conditions"]["AvailableForFinish"] = Value::Array(conditions);
        quest["rewards"] = self.rewards(1.0, trader, &config, &chosen);
        Some(quest)
    }

    /// The templates and categories of `templates.repeatableQuests.data.Completion.<list>` for the
    /// player's level.
    fn completion_list(&self, list: &str) -> Vec<String> {
        let entries: Vec<Value> =
            db::get(&db::path(&["templates", "repeatableQuests", "data", "Completion", list])).unwrap_or_default();
        entries
            .iter()
            .take(MAX_LIST)
            .filter(|e| e["minPlayerLevel"].as_f64().unwrap_or(0.0) <= self.player.level)
            .flat_map(|e| strings(&e["itemIds"]))
            .collect()
    }

    fn exploration(&mut self, pool: &mut Pool, trader: &str) -> Option<Value> {
        let config = self.type_config("Exploration");
        if pool.explore.is_empty() {
            pool.drop_type("Exploration");
            return None;
        }
        let (key, maps) = pool.explore.remove(ids::below(pool.explore.len() as u64) as usize);
        let specific = config["specificExits"]["probability"].as_f64().unwrap_or(0.0) > ids::unit();
        let most = config["maxExtracts"].as_u64().unwrap_or(1).max(1);
        let raids = if specific {
            between(1, config["maxExtractsWithSpecificExit"].as_u64().unwrap_or(2).saturating_sub(1).max(1))
        } else {
            between(1, most)
        };
        let mut quest = self.template("Exploration", trader)?;
        let mut counter = vec![
            json!({"id": ids::new_id(), "dynamicLocale": true, "status": ["Survived"], "conditionType": "ExitStatus"}),
            json!({"id": ids::new_id(), "dynamicLocale": true, "target": maps, "conditionType": "Location"}),
        ];
        if specific {
            let allowed = strings(&config["specificExits"]["passageRequirementWhitelist"]);
            let exits: Vec<Value> =
                db::get(&db::path(&["locations", &key.to_lowercase(), "base", "exits"])).unwrap_or_default();
            let open: Vec<&Value> = exits
                .iter()
                .take(MAX_LIST)
                .filter(|e| e["Chance"].as_f64().unwrap_or(0.0) > 0.0)
                .filter(|e| e["PassageRequirement"].as_str().is_none_or(|p| allowed.iter().any(|a| a == p)))
                .collect();
            if let Some(exit) = pick(&open) {
                counter.push(json!({"id": ids::new_id(), "dynamicLocale": true, "exitName": exit["Name"],
                                    "conditionType": "ExitName"}));
            }
        }
        let finish = &mut quest["conditions"]["AvailableForFinish"][0];
        finish["id"] = json!(ids::new_id());
        finish["value"] = json!(raids);
        finish["counter"] = json!({"id": ids::new_id(), "conditions": counter});
        quest["location"] = self.location_id(&key);
        let difficulty = map_to_range(raids as f64, 1.0, most as f64, 0.2, 1.0);
        quest["rewards"] = self.rewards(difficulty, trader, &config, &[]);
        Some(quest)
    }

    /// The db's template for `kind` with fresh ids, the trader, and SPT's locale keys.
    fn template(&self, kind: &str, trader: &str) -> Option<Value> {
        let mut quest: Value = db::get(&db::path(&["templates", "repeatableQuests", "templates", kind])).ok()?;
        if !quest["conditions"]["AvailableForFinish"].is_array() {
            return None;
        }
        if kind != "Completion" && quest["conditions"]["AvailableForFinish"][0].is_null() {
            return None;
        }
        let side = if self.kind["side"] == "Scav" { "scav" } else { "pmc" };
        let template_id: String =
            db::get(&db::path(&["configs", "quest", "questTemplateIds", side, &kind.to_lowercase()]))
                .unwrap_or_default();
        let id = ids::new_id();
        quest["_id"] = json!(id);
        quest["traderId"] = json!(trader);
        quest["templateId"] = json!(template_id);
        quest["side"] = self.kind["side"].clone();
        // SPT shows Ref's texts as Prapor's (Ref has none of his own).
        let texts_of = if trader == "6617beeaa9cfa777ca915b7c" { "54cb50c76803fa8b248b4571" } else { trader };
        if let Some(fields) = quest.as_object_mut() {
            for (name, text) in fields.iter_mut() {
                if let Value::String(s) = text
                    && s.contains('{')
                {
                    let for_trader = if name == "name" { trader } else { texts_of };
                    *s = s.replace("{traderId}", for_trader).replace("{templateId}", &template_id);
                }
            }
        }
        quest["questStatus"] = json!({"id": ids::new_id(), "uid": self.player.uid, "qid": id, "startTime": 0,
                                      "status": 1, "statusTimers": {}});
        Some(quest)
    }

    /// The handbook-priced templates the trader may give as a reward or ask for (see the module doc).
    fn rewardable(&mut self, trader: &str) -> Vec<&Candidate> {
        let bases = strings(&self.whitelist(trader)["rewardBaseWhitelist"]);
        let banned_bases = strings(&self.kind["rewardBaseTypeBlacklist"]);
        let banned = strings(&self.kind["rewardBlacklist"]);
        self.catalogue
            .candidates()
            .iter()
            .filter(|c| bases.is_empty() || c.lineage.iter().any(|l| bases.contains(l)))
            .filter(|c| !c.lineage.iter().any(|l| banned_bases.contains(l)) && !banned.contains(&c.tpl))
            .filter(|c| c.tpl != ROUBLES && c.tpl != EUROS && c.tpl != GP_COIN)
            .collect()
    }

    /// A quest's `rewards` (see the module doc), `avoid` being the templates it asks for.
    fn rewards(&mut self, difficulty: f64, trader: &str, type_config: &Value, avoid: &[String]) -> Value {
        let scaling = self.kind["rewardScaling"].clone();
        let level = self.player.level;
        let spread = scaling["rewardSpread"].as_f64().unwrap_or(0.0).clamp(0.0, 1.0);
        let scaled = |name: &str| {
            difficulty * interp(level, &scaling["levels"], &scaling[name]) * uniform(1.0 - spread, 1.0 + spread)
        };
        let xp = scaled("experience").floor();
        let roubles = scaled("roubles").floor().max(0.0);
        let gp = scaled("gpCoins").ceil();
        let reputation = (100.0 * scaled("reputation")).round() / 100.0;
        let items = between(1, interp(level, &scaling["levels"], &scaling["items"]).round().max(1.0) as u64);
        let skill_chance = interp(level, &scaling["levels"], &scaling["skillRewardChance"]);
        let skill_points = interp(level, &scaling["levels"], &scaling["skillPointReward"]);

        let mut success = Vec::new();
        let mut push = |mut reward: Value| {
            reward["id"] = json!(ids::new_id());
            reward["index"] = json!(success.len());
            reward["unknown"] = json!(false);
            reward["gameMode"] = json!([]);
            reward["availableInGameEditions"] = json!([]);
            success.push(reward);
        };
        if xp > 0.0 {
            push(json!({"type": "Experience", "value": xp}));
        }
        let (money, amount) = if EURO_TRADERS.contains(&trader) {
            (EUROS, self.catalogue.prices.roubles_to(roubles, EUROS).round().max(1.0))
        } else {
            (ROUBLES, roubles.max(1.0))
        };
        push(item_reward(money, amount as u64, false));
        if gp > 0.0 && db::exists(&db::path(&["templates", "items", GP_COIN])) {
            push(item_reward(GP_COIN, gp as u64, true));
        }

        // Reward items within the money budget: priced from half of it (at most 25000) up, else anything under it.
        let mut budget = roubles;
        let floor = (0.5 * budget).min(25_000.0);
        let pool: Vec<(String, f64)> = self
            .rewardable(trader)
            .into_iter()
            .filter(|c| !avoid.contains(&c.tpl))
            .map(|c| (c.tpl.clone(), c.price))
            .collect();
        let mut open: Vec<(String, f64)> = pool.iter().filter(|(_, p)| *p >= floor && *p <= budget).cloned().collect();
        if open.is_empty() {
            open = pool.into_iter().filter(|(_, p)| *p < budget).collect();
        }
        for _ in 0..items {
            open.retain(|(_, p)| *p <= budget);
            if open.is_empty() {
                break;
            }
            let (tpl, price) = open.remove(ids::below(open.len() as u64) as usize);
            budget -= price;
            push(item_reward(&tpl, 1, true));
        }
        if reputation > 0.0 {
            push(json!({"type": "TraderStanding", "target": trader, "value": reputation}));
        }
        if skill_chance > ids::unit()
            && let Some(skill) = pick(&strings(&type_config["possibleSkillRewards"]))
        {
            push(json!({"type": "Skill", "target": skill, "value": skill_points}));
        }
        json!({"Started": [], "Success": success, "Fail": []})
    }
}

/// An `Item` reward of `count` units of `tpl`.
fn item_reward(tpl: &str, count: u64, found_in_raid: bool) -> Value {
    let id = ids::new_id();
    json!({
        "type": "Item", "target": id, "value": count, "isEncoded": false, "findInRaid": found_in_raid,
        "items": [{"_id": id, "_tpl": tpl, "upd": {"StackObjectsCount": count, "SpawnedInSession": found_in_raid}}],
    })
}

/// A new period of `kind` for the player: up to `numQuests` quests, each with its change requirement.
pub(crate) fn fresh_quests(
    kind: &Value,
    player: Player,
    catalogue: &mut Catalogue,
) -> (Vec<Value>, Map<String, Value>) {
    let level = player.level;
    let mut pool = Pool::new(kind, level, None);
    let mut generator = Generator::new(kind, player, catalogue);
    let mut quests = Vec::new();
    let mut requirements = Map::new();
    for _ in 0..kind["numQuests"].as_u64().unwrap_or(0).min(MAX_LIST as u64) {
        let Some(quest) = generator.quest(&mut pool) else { break };
        requirements.insert(quest["_id"].as_str().unwrap_or_default().to_owned(), requirement(kind, &quest));
        quests.push(quest);
    }
    (quests, requirements)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_is_spts() {
        let (xs, ys) = (json!([1, 10, 20]), json!([1000, 2000, 8000]));
        assert_eq!(interp(0.0, &xs, &ys), 1000.0);
        assert_eq!(interp(5.5, &xs, &ys), 1500.0);
        assert_eq!(interp(15.0, &xs, &ys), 5000.0);
        assert_eq!(interp(99.0, &xs, &ys), 8000.0);
        assert_eq!(interp(3.0, &json!([]), &ys), 0.0);
        assert_eq!(map_to_range(3.0, 1.0, 4.0, 0.2, 1.0), 0.2 + 0.8 * 2.0 / 3.0);
        assert_eq!(map_to_range(-3.0, 1.0, 4.0, 0.5, 2.0), 0.5, "clamped");
        assert_eq!(map_to_range(9.0, 1.0, 4.0, 0.5, 2.0), 2.0, "clamped");
    }
}
