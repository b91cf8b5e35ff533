//! What the client reports at a raid's end (`/client/match/local/end`'s body, SPT's
//! `EndLocalRaidRequestData`): the raid's server id, its result, and the whole profile as the client
//! sees it. Only the members the end reads are kept; lists are bounded while they are read. `end.rs`
//! checks and applies the items, `progress.rs` the rest.

use crate::input;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Items the report may list (stash included).
const MAX_REPORTED: usize = 60_000;

#[derive(Deserialize)]
pub(super) struct EndRequest {
    #[serde(rename = "serverId")]
    pub(super) server_id: String,
    pub(super) results: Results,
}

#[derive(Deserialize)]
pub(super) struct Results {
    pub(super) result: String,
    pub(super) profile: Reported,
}

/// The profile the client reports; what else a raid may change is read by `progress.rs`.
#[derive(Deserialize)]
pub(super) struct Reported {
    #[serde(rename = "_id")]
    pub(super) id: String,
    #[serde(default, rename = "Info")]
    pub(super) info: ReportedInfo,
    #[serde(rename = "Inventory")]
    pub(super) inventory: ReportedInventory,
    #[serde(default, rename = "Health")]
    pub(super) health: Value,
    #[serde(default, rename = "Skills")]
    pub(super) skills: Value,
    #[serde(default, rename = "Stats")]
    pub(super) stats: Value,
    #[serde(default, rename = "Encyclopedia")]
    pub(super) encyclopedia: Value,
    #[serde(default, rename = "Quests")]
    pub(super) quests: Value,
    #[serde(default, rename = "TaskConditionCounters")]
    pub(super) counters: Value,
    #[serde(default, rename = "Achievements")]
    pub(super) achievements: Value,
    #[serde(default, rename = "SurvivorClass")]
    pub(super) survivor_class: Value,
    #[serde(default, rename = "TradersInfo")]
    pub(super) traders_info: Value,
}

#[derive(Deserialize, Default)]
pub(super) struct ReportedInfo {
    #[serde(default, rename = "Experience")]
    pub(super) experience: Option<f64>,
}

#[derive(Deserialize)]
pub(super) struct ReportedInventory {
    pub(super) equipment: String,
    #[serde(default, rename = "questRaidItems")]
    pub(super) quest_raid_items: Option<String>,
    #[serde(deserialize_with = "input::at_most::<MAX_REPORTED, _, _>")]
    pub(super) items: Vec<ReportedItem>,
    #[serde(default, rename = "fastPanel")]
    pub(super) fast_panel: Value,
}

/// An item as reported: the members an item has; anything else is dropped.
#[derive(Deserialize, Serialize, Clone)]
pub(super) struct ReportedItem {
    #[serde(rename = "_id")]
    pub(super) id: String,
    #[serde(rename = "_tpl")]
    pub(super) tpl: String,
    #[serde(default, rename = "parentId", skip_serializing_if = "Option::is_none")]
    pub(super) parent_id: Option<String>,
    #[serde(default, rename = "slotId", skip_serializing_if = "Option::is_none")]
    pub(super) slot_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) location: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) upd: Option<Value>,
}

impl ReportedItem {
    /// Units in the stack: 1 when it says none, `None` when what it says is not a whole number.
    pub(super) fn count(&self) -> Option<u64> {
        match self.upd.as_ref().map(|u| &u["StackObjectsCount"]) {
            None | Some(Value::Null) => Some(1),
            Some(n) => n.as_u64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64)),
        }
    }
}
