//! What the client reports at a raid's end (`/client/match/local/end`'s body, SPT's
//! `EndLocalRaidRequestData`): the raid's server id, its result, and the whole profile as the client
//! sees it. Only the members the end reads are kept; lists are bounded while they are read. `end.rs`
//! checks and applies the items, `progress.rs` the rest.
//!
//! A full stash is thousands of items (a megabyte, nearly all of the body) that the end only looks
//! through for the raid's few: it needs every item's `_id` and `parentId`, and the rest of an item
//! only for the raid's. So [`parse`] checks the whole body in one validating pass
//! (`input::scan`, `json_scan`) that also notes each item's span, id and parent; serde_json parses
//! the report with the items array left out (a copy of the body with `[]` in its place: a few KB);
//! and `end.rs` deserializes only the raid's items, from their spans ([`Listed::item`]). An item's
//! strings borrow from the body (`Cow`, a copy only when the client escaped something), and its
//! `location` and `upd` stay raw text until the server reads or stores them.

use crate::input;
use crate::json_scan::Member;
use modhost_sdk::{Error, Result};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::ops::Range;

/// Items the report may list (stash included).
const MAX_REPORTED: usize = 60_000;
/// Where the report lists its items.
const ITEMS: [&str; 4] = ["results", "profile", "Inventory", "items"];
const WHAT: &str = "match/local/end";

/// The report, parsed: all but the items, and the items as listed.
pub(super) struct Report<'a> {
    pub(super) request: EndRequest,
    pub(super) listed: Listed<'a>,
}

/// The report's items (`results.profile.Inventory.items`), each known by its id and parent until
/// one is deserialized ([`Listed::item`]).
pub(super) struct Listed<'a> {
    text: &'a str,
    spans: Vec<Range<usize>>,
    /// Each item's `_id`, unescaped, in the report's order.
    pub(super) ids: Vec<Cow<'a, str>>,
    /// Each item's `parentId` (`None` when absent or null, as `input::optional_text` has it).
    pub(super) parents: Vec<Option<Cow<'a, str>>>,
}

impl<'a> Listed<'a> {
    /// Item `at` of the list, deserialized from its text (a 400 when it is not an item).
    pub(super) fn item(&self, at: usize) -> Result<ReportedItem<'a>> {
        let text = self.spans.get(at).and_then(|span| self.text.get(span.clone())).unwrap_or_default();
        serde_json::from_str(text).map_err(|e| Error::Invalid(format!("{WHAT}: json: request body: item {at}: {e}")))
    }
}

/// Parses an end's body (`body`, at most `max` bytes): refused whole (413, or 400 naming the fault)
/// when it is too large or not JSON, and, as serde_json would refuse it, when the report lacks what
/// the end reads or an item's `_id` is not a string or its `parentId` neither a string nor null.
pub(super) fn parse(body: &[u8], max: usize) -> Result<Report<'_>> {
    let scanned = input::scan(body, WHAT, max, &ITEMS, MAX_REPORTED)?;
    let text = scanned.text;
    let refused = |e: serde_json::Error| Error::Invalid(format!("{WHAT}: json: request body: {e}"));
    let request: EndRequest = match &scanned.array {
        Some(array) => {
            let mut rest = String::with_capacity(text.len() - array.len() + 2);
            rest.push_str(text.get(..array.start).unwrap_or_default());
            rest.push_str("[]");
            rest.push_str(text.get(array.end..).unwrap_or_default());
            serde_json::from_str(&rest).map_err(refused)?
        }
        // No array there: the parse refuses the report (the items missing, or not a list).
        None => serde_json::from_str(text).map_err(refused)?,
    };
    if scanned.array.is_none() {
        return Err(Error::Invalid(format!("{WHAT}: json: request body: the report's items are not a list")));
    }
    let n = scanned.elements.len();
    let mut listed =
        Listed { text, spans: Vec::with_capacity(n), ids: Vec::with_capacity(n), parents: Vec::with_capacity(n) };
    for element in scanned.elements {
        let id = element.id.text(text);
        let parent = match &element.parent {
            Member::Absent | Member::Null => Some(None),
            other => other.text(text).map(Some),
        };
        let (true, Some(id), Some(parent)) = (element.object, id, parent) else {
            // Not an object, an id that is not a string, a parent neither string nor null, either
            // given twice, or a string that does not decode: serde_json says which, as the whole
            // parse said before the scan (and should it not refuse the item, this does).
            let at = listed.ids.len();
            listed.spans.push(element.span);
            listed.item(at)?;
            return Err(Error::Invalid(format!("{WHAT}: json: request body: item {at} has no string `_id`")));
        };
        listed.spans.push(element.span);
        listed.ids.push(id);
        listed.parents.push(parent);
    }
    Ok(Report { request, listed })
}

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
    /// Always empty: [`parse`] gives serde_json the body with `[]` for the items ([`Listed`] has
    /// them). Still a list, so that a report without one is refused as before.
    #[serde(rename = "items")]
    _items: Vec<IgnoredAny>,
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
