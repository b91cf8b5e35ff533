//! What the client reports at a raid's end (`/client/match/local/end`'s body, SPT's
//! `EndLocalRaidRequestData`): the raid's server id, its result, and the whole profile as the client
//! sees it. Only the members the end reads are kept; lists are bounded while they are read. `end.rs`
//! checks and applies the items, `progress.rs` the rest.
//!
//! The report is parsed where it lies: an item's strings borrow from the body (`Cow`, a copy only
//! when the client escaped something), and its `location` and `upd` stay raw text until the server
//! reads or stores them. A full stash is thousands of items the end only looks through, so building
//! each as owned strings and `Value`s was most of the end's time.

use crate::input;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// Items the report may list (stash included).
const MAX_REPORTED: usize = 60_000;

#[derive(Deserialize)]
pub(super) struct EndRequest<'a> {
    #[serde(rename = "serverId")]
    pub(super) server_id: String,
    #[serde(borrow)]
    pub(super) results: Results<'a>,
}

#[derive(Deserialize)]
pub(super) struct Results<'a> {
    pub(super) result: String,
    #[serde(borrow)]
    pub(super) profile: Reported<'a>,
}

/// The profile the client reports; what else a raid may change is read by `progress.rs`.
#[derive(Deserialize)]
pub(super) struct Reported<'a> {
    #[serde(rename = "_id")]
    pub(super) id: String,
    #[serde(default, rename = "Info")]
    pub(super) info: ReportedInfo,
    #[serde(borrow, rename = "Inventory")]
    pub(super) inventory: ReportedInventory<'a>,
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
pub(super) struct ReportedInventory<'a> {
    pub(super) equipment: String,
    #[serde(default, rename = "questRaidItems")]
    pub(super) quest_raid_items: Option<String>,
    #[serde(borrow, deserialize_with = "input::at_most::<MAX_REPORTED, _, _>")]
    pub(super) items: Vec<ReportedItem<'a>>,
    #[serde(default, rename = "fastPanel")]
    pub(super) fast_panel: Value,
}

/// An item as reported: the members an item has; anything else is dropped. Its strings borrow from
/// the body; `location` and `upd` are the body's text (checked to be JSON), parsed when read.
#[derive(Deserialize, Serialize, Clone)]
pub(super) struct ReportedItem<'a> {
    #[serde(borrow, rename = "_id")]
    pub(super) id: Cow<'a, str>,
    #[serde(borrow, rename = "_tpl")]
    pub(super) tpl: Cow<'a, str>,
    #[serde(
        borrow,
        default,
        rename = "parentId",
        deserialize_with = "input::optional_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) parent_id: Option<Cow<'a, str>>,
    #[serde(
        borrow,
        default,
        rename = "slotId",
        deserialize_with = "input::optional_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub(super) slot_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    pub(super) location: Option<&'a RawValue>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    pub(super) upd: Option<&'a RawValue>,
}

impl ReportedItem<'_> {
    /// The item's `upd` as a value (`Null` when it has none, or it is not an object's text).
    pub(super) fn upd(&self) -> Value {
        self.upd.and_then(|raw| serde_json::from_str(raw.get()).ok()).unwrap_or(Value::Null)
    }

    /// Units in the stack: 1 when it says none, `None` when what it says is not a whole number.
    pub(super) fn count(&self) -> Option<u64> {
        match &self.upd()["StackObjectsCount"] {
            Value::Null => Some(1),
            n => n.as_u64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0).map(|f| f as u64)),
        }
    }
}
