//! An airdrop's loot (SPT's `LocationStaticRouter` → `LocationCallbacks.GetAirdropLoot` →
//! `LocationController.GetAirDropLoot`, `AirdropService`): `/client/airdrop/loot` `{containerId?}` →
//! `{icon, container}`, the crate and the items in it.
//!
//! As SPT: the drop's type is drawn by `configs.airdrop.airdropTypeWeightings` (or named by
//! `configs.airdrop.customAirdropMapping.<containerId>` when the client names a container), and its
//! loot by `configs.airdrop.loot.<type>`: `icon`, `itemCount` (min, max) items of the item types in
//! `itemTypeWhitelist`, none of `itemBlacklist`. Simplified: the items are drawn from the handbook's
//! items (each one of a whitelisted parent), one unit each, and no weapon or armour presets.
//!
//! The items are recorded as issued by the open raid (`raid/mod.rs`), so a player may take them out:
//! without an open raid the crate is answered all the same, and nothing of it can leave a raid.
//! Bounded: at most [`MAX_ITEMS`] items, drawn in at most [`MAX_DRAWS`] tries.

use super::loot::{Issued, Rng};
use super::{record_issued, scav};
use crate::ids::{is_id, new_id};
use crate::input;
use crate::profile::player;
use modhost_sdk::{Request, Response, Result, Router, db, envelope};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// The largest body read: one id.
const MAX_BODY: usize = 4 << 10;
/// The most items one crate holds (SPT's largest `itemCount` max is 35).
const MAX_ITEMS: u64 = 60;
/// The most candidates drawn from the handbook for one crate.
const MAX_DRAWS: usize = 2000;
/// The most handbook entries read.
const MAX_HANDBOOK: usize = 100_000;
/// SPT's common airdrop crate, when the config names none.
const COMMON_CRATE: &str = "6223349b3136504a544d1608";

/// Adds the airdrop route to `router`.
pub(crate) fn routes(router: Router) -> Router {
    router.route("/client/airdrop/loot", airdrop_loot)
}

#[derive(Deserialize, Default)]
struct Ask {
    #[serde(default, rename = "containerId")]
    container_id: Option<String>,
}

#[derive(Deserialize, Default)]
struct LootConfig {
    #[serde(default)]
    icon: Option<String>,
    #[serde(default, rename = "itemCount")]
    item_count: Option<Range>,
    #[serde(default, rename = "itemTypeWhitelist")]
    whitelist: Vec<String>,
    #[serde(default, rename = "itemBlacklist")]
    blacklist: Vec<String>,
}

#[derive(Deserialize, Clone, Copy)]
struct Range {
    min: u64,
    max: u64,
}

/// `/client/airdrop/loot`: see the module's header.
fn airdrop_loot(req: &Request) -> Result<Response> {
    let uid = match player(req, "an airdrop")? {
        Ok(uid) => uid,
        Err(answer) => return Ok(answer),
    };
    let ask: Ask = if req.body().iter().all(u8::is_ascii_whitespace) {
        Ask::default()
    } else {
        input::parse(req, "airdrop/loot", MAX_BODY)?
    };
    let mut rng = Rng::new(scav::seed());
    let custom = ask.container_id.as_deref().filter(|id| is_id(id)).and_then(|id| {
        db::get::<String>(&db::path(&["configs", "airdrop", "customAirdropMapping", id])).ok().map(|t| (id, t))
    });
    let (kind, crate_tpl) = match custom {
        Some((id, kind)) => (kind, id.to_owned()),
        None => {
            let weights: Map<String, Value> = db::get("configs.airdrop.airdropTypeWeightings").unwrap_or_default();
            let names: Vec<&String> = weights.keys().collect();
            let w: Vec<f64> = weights.values().map(|v| v.as_f64().unwrap_or(0.0)).collect();
            let kind = rng.weighted(&w).map_or("mixed".to_owned(), |n| names[n].clone());
            let tpl = db::get::<String>(&db::path(&["configs", "airdrop", "containerIds", &kind]))
                .unwrap_or_else(|_| COMMON_CRATE.to_owned());
            (kind, tpl)
        }
    };
    let config: LootConfig = db::get(&db::path(&["configs", "airdrop", "loot", &kind])).unwrap_or_default();
    let range = config.item_count.unwrap_or(Range { min: 0, max: 0 });
    let (min, max) = (range.min.min(MAX_ITEMS), range.max.min(MAX_ITEMS));
    let wanted = if max > min { min + rng.below(max - min + 1) } else { min };
    let crate_id = new_id();
    let mut container = vec![json!({ "_id": crate_id, "_tpl": crate_tpl, "upd": { "SpawnedInSession": true } })];
    #[derive(Deserialize)]
    struct Entry {
        #[serde(rename = "Id")]
        id: String,
    }
    let handbook: Vec<Entry> =
        if wanted > 0 { db::get("templates.handbook.Items").unwrap_or_default() } else { Vec::new() };
    let handbook = &handbook[..handbook.len().min(MAX_HANDBOOK)];
    let mut issued = Vec::new();
    for _ in 0..MAX_DRAWS {
        if issued.len() as u64 >= wanted || handbook.is_empty() {
            break;
        }
        let tpl = &handbook[rng.below(handbook.len() as u64) as usize].id;
        if config.blacklist.contains(tpl) {
            continue;
        }
        let parent: String = db::get(&db::path(&["templates", "items", tpl, "_parent"])).unwrap_or_default();
        if !config.whitelist.is_empty() && !config.whitelist.contains(&parent) {
            continue;
        }
        let item = json!({
            "_id": new_id(), "_tpl": tpl, "parentId": crate_id, "slotId": "main",
            "upd": { "StackObjectsCount": 1, "SpawnedInSession": true },
        });
        issued.push(Issued::of(&item));
        container.push(item);
    }
    issued.push(Issued::of(&container[0]));
    record_issued(&uid, &issued)?;
    Ok(envelope::ok(&json!({ "icon": config.icon.unwrap_or_else(|| "Common".to_owned()), "container": container })))
}
