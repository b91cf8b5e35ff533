//! `/client/match/local/end`: the raid's result applied to the profile that played it (the PMC's
//! `profile.<uid>`, or the scav's `scav.<uid>` for a scav raid: a scav raid never changes the PMC).
//!
//! The client reports its whole profile; the server keeps its own copy of everything outside the raid
//! (the stash, traders, quests…) and takes from the report only what the raid could change, validated:
//!
//! 1. A raid is open (`raid.<uid>`, written by `match/local/start`) and the report names its
//!    `serverId`; a profile whose last ended raid (`_modhost.raid.last`, the record's `raidId`) is this
//!    one refuses a second end.
//! 2. The report is of this profile (`_id`) and its equipment root is the server's.
//! 3. The raid's items are the report's subtrees of the equipment and quest-raid roots. Each has an id
//!    of at most 64 `[A-Za-z0-9_-]`, a template the database knows, a slot, and a count of at least 1
//!    and at most its template's `StackMaxSize`. An item the profile had in the raid keeps its template;
//!    an item the raid issued keeps the issued template; an id the profile holds outside the raid (the
//!    stash) is refused; any other id is a stack split in the raid: it must be of a template that came
//!    in and that stacks (`StackMaxSize` other than 1). So an item that holds one unit (a rifle, an
//!    armour) leaves the raid only under the id it came in with or was issued with: reported under
//!    another id it is refused, never taken for the item that came in.
//! 4. Per template, the units leaving the raid are at most those that came in: the profile's raid
//!    items before it plus what the raid issued. Money is conserved that way, and so is everything else.
//!
//! Then the end decides once, by id, what became of the raid's items ([`Returned`]): which reported
//! items the profile keeps, whether each is found in raid, and which of the items that came in did not
//! come back, with the units that went missing with each. Every consequence reads that decision and
//! nothing else: the items written back, insurance's lost set (`insurance/returns.rs`), the fast panel,
//! the quest items a death took (`progress.rs`), found-in-raid, and a scav raid's items alike. An item
//! that came in and is not kept is lost, whatever else of its template came out; but the units missing
//! with it are only those of its template the player brought in and did not bring out (stacks split
//! and merge, so a stack reported under a new id, or merged into another, took its units with it; loot
//! kept under its issued id is the raid's, and loot left in the raid is not the player's), and insurance
//! returns what is missing and never more. So one unit is never both kept and returned.
//!
//! As SPT's `InRaidHelper`: the raid's items replace the profile's equipment and quest-raid
//! items. Killed, missing in action or left (dead), only what SPT keeps on death stays (the equipment
//! slots `lostOnDeath.equipment` does not mark lost — the secure container, the pockets, the armband,
//! the compass, the scabbard — minus what sits in the pockets' `pocket*` grids; quest items go when
//! `lostOnDeath.questItems`), and nothing kept is found-in-raid. Runner keeps the equipment without
//! found-in-raid; survived and transit keep it as reported, found-in-raid where the report says so
//! within the template's found units: those that came in found plus those the raid issued (an item
//! that came in keeps its mark; a stack the player brought in cannot come out found under a new id).
//! Experience is the reported value within `[before, before + maxRaidExperience]`, the
//! level follows `globals.config.exp.level.exp_table` when the database has it; limbs, hydration and
//! energy are the reported values within the profile's maxima (a death leaves each limb at
//! `deathHealthMultiplier` of its maximum), the temperature resets; skills are the reported `Common`
//! progress, each within SPT's 0–5100. A dead scav is generated anew, keeping its experience and skills.
//! What else the report carries (statistics, encyclopedia, quest progress, achievements, Fence's
//! standing) is taken, bounded, by `progress.rs`, into the same patch.
//!
//! Every change is one merge patch at the version the checks read (`doc_patch_if_version`), with the
//! raid's marker in it, so a crash leaves the raid either ended or not; the raid record is deleted
//! after. A refusal is an error envelope and changes nothing.

use super::report::{self, EndRequest, Listed, Reported, ReportedItem};
use super::scav;
use super::{player, progress, record_key, setting};
use crate::clock;
use crate::profile;
use crate::profile::doc::Doc;
use crate::profile::inventory::{self, Refused};
use crate::profile::shape::INDEX;
use crate::progression;
use crate::templates::{Templates, tpl};
use modhost_sdk::{Error, Request, Response, Result, envelope, store};
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The largest end body: the client sends its whole profile, stash included.
const MAX_BODY: usize = 16 << 20;
/// Items the raid's subtrees may hold.
const MAX_RAID_ITEMS: usize = 5_000;
/// How deep a parent chain is followed.
const MAX_DEPTH: usize = 64;
/// Entries of the fast panel and skills taken from a report.
const MAX_FAST_PANEL: usize = 64;
const MAX_SKILLS: usize = 256;

/// How the raid ended (SPT's `ExitStatus`).
#[derive(Clone, Copy, PartialEq, Debug)]
enum Exit {
    Survived,
    Runner,
    Transit,
    Dead,
}

fn exit_of(result: &str) -> Option<Exit> {
    Some(match result.to_ascii_lowercase().as_str() {
        "survived" => Exit::Survived,
        "runner" => Exit::Runner,
        "transit" => Exit::Transit,
        "killed" | "missinginaction" | "left" => Exit::Dead,
        _ => return None,
    })
}

fn refuse(why: &str) -> Response {
    envelope::error(1, &format!("match/local/end: {why}; nothing was changed"))
}

fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `/client/match/local/end`.
pub(super) fn end(req: &Request) -> Result<Response> {
    let uid = match player(req, "match/local/end")? {
        Ok(uid) => uid,
        Err(refusal) => return Ok(refusal),
    };
    let report = report::parse(req.body(), MAX_BODY)?;
    let body = &report.request;
    let Some(record) = store::get::<Value>(&record_key(&uid))? else {
        return Ok(refuse("no raid is open for this profile (an end without a start, or a second end)"));
    };
    if record["serverId"] != body.server_id.as_str() {
        return Ok(refuse(&format!("the open raid is {}, not {}", record["serverId"], json!(body.server_id))));
    }
    let Some(exit) = exit_of(&body.results.result) else {
        return Ok(refuse(&format!("unknown result {}", json!(body.results.result))));
    };
    let scav_raid = record["side"] == "savage";
    let key = if scav_raid { scav::key(&uid) } else { format!("profile.{uid}") };
    let mut templates = Templates::default();
    let version = match profile::open(&key, &mut templates) {
        Ok(Some(version)) => version,
        Ok(None) => return Ok(refuse("the raid's profile does not exist")),
        Err(Error::Conflict(_)) => return Ok(envelope::error(1, "match/local/end: the profile changed; try again")),
        Err(other) => return Err(other),
    };
    let mut doc = Doc::at(&key, version);
    let raid_id = record["raidId"].as_str().unwrap_or_default();
    if doc.get(&[INDEX, "raid", "last"])? == raid_id {
        // Ended, and the record outlived it (a crash between the two writes): the record goes now.
        store::delete(&record_key(&uid))?;
        return Ok(refuse("this raid has already ended"));
    }
    let raid = Raid {
        uid: &uid,
        key: &key,
        version,
        record: &record,
        body,
        listed: &report.listed,
        exit,
        scav: scav_raid,
        session: req.session(),
    };
    match apply(&mut doc, &mut templates, &raid) {
        Ok(Ended::Staged) => match doc.commit() {
            Ok(_) => {}
            Err(Error::Conflict(_)) => {
                return Ok(envelope::error(
                    1,
                    "match/local/end: the profile changed meanwhile; nothing was changed, try again",
                ));
            }
            Err(other) => return Err(other),
        },
        Ok(Ended::Written) => {}
        Err(Refused::Reason(why)) => return Ok(refuse(&why)),
        Err(Refused::Store(e)) => return Err(e),
    }
    store::delete(&record_key(&uid))?;
    Ok(envelope::null())
}

/// The raid being ended, as `end` found it.
struct Raid<'a> {
    /// The PMC that played it (a scav raid is its scav's).
    uid: &'a str,
    /// The store key of the profile that played: `profile.<uid>` or `scav.<uid>`.
    key: &'a str,
    /// That profile's version when the checks began: every write is at it.
    version: u64,
    /// The open raid's record (`raid.<uid>`).
    record: &'a Value,
    body: &'a EndRequest,
    /// The report's items, by id and parent.
    listed: &'a Listed<'a>,
    exit: Exit,
    scav: bool,
    /// The session ending it (the insurance return's timer runs under its lock).
    session: Option<&'a str>,
}

/// What applying a raid's end came to (a refusal is the `Err`, [`Refused`]).
enum Ended {
    /// The result is staged in the document: commit it.
    Staged,
    /// The result is written already: a dead scav, replaced whole.
    Written,
}

/// The profile's roots the raid's items hang from: the equipment and, when the report names the
/// same one, the quest-raid items' root.
struct Roots {
    equipment: String,
    quest: Option<String>,
}

impl Roots {
    fn iter(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.equipment.as_str()).chain(self.quest.as_deref())
    }
}

/// The raid's items as reported: by id, and in the order of the roots' subtrees, parents first.
struct RaidItems<'r> {
    by_id: HashMap<&'r str, &'r ReportedItem<'r>>,
    items: Vec<&'r ReportedItem<'r>>,
}

impl<'r> RaidItems<'r> {
    /// `found`: what [`raid_items`] answered.
    fn of(found: &'r [ReportedItem<'r>]) -> Self {
        RaidItems { by_id: found.iter().map(|item| (&*item.id, item)).collect(), items: found.iter().collect() }
    }
}

/// What came into the raid: the profile's raid items before it, what the raid issued, and the units
/// of each template of both together.
struct CameIn<'a> {
    before: HashMap<String, Value>,
    issued: &'a Map<String, Value>,
    units: BTreeMap<String, u64>,
}

/// Checks the report (rules 2-4 of the module doc) and stages its result in `doc`.
fn apply(doc: &mut Doc, templates: &mut Templates, raid: &Raid) -> std::result::Result<Ended, Refused> {
    let reported = &raid.body.results.profile;
    let roots = roots(doc, reported)?;
    let found = raid_items(raid.listed, &roots)?;
    let items = RaidItems::of(&found);
    let came_in = came_in(doc, &roots, raid.record)?;
    check_items(doc, templates, &items, &came_in)?;

    let old_xp = doc.get(&["Info", "Experience"])?.as_f64().unwrap_or(0.0).max(0.0);
    let cap = setting("maxRaidExperience").as_f64().unwrap_or(500_000.0);
    let xp = reported.info.experience.unwrap_or(old_xp).clamp(old_xp, old_xp + cap).floor();
    let marker = json!({"last": raid.record["raidId"], "serverId": raid.body.server_id,
                        "result": raid.body.results.result, "ended": clock::now()});
    if raid.scav && raid.exit == Exit::Dead {
        return replace_dead_scav(doc, raid, xp, marker);
    }
    let returned = Returned::decide(raid.exit, &setting("lostOnDeath"), &roots, &items, &came_in);
    replace_items(doc, templates, &came_in, &returned)?;
    crate::insurance::returns::lost(doc, raid.session, raid.record, &came_in.before, &returned.lost)?;
    stage_player(doc, templates, raid, xp, &returned)?;
    doc.set(&[INDEX, "raid"], marker)?;
    Ok(Ended::Staged)
}

/// Rule 2: the report is of this profile and its equipment root is the server's.
fn roots(doc: &mut Doc, reported: &Reported) -> std::result::Result<Roots, Refused> {
    let own_id = doc.get(&["_id"])?;
    if own_id != reported.id.as_str() {
        return Err(format!("the report is of profile {}, the raid's is {own_id}", json!(reported.id)).into());
    }
    let equipment = doc.get(&["Inventory", "equipment"])?.as_str().unwrap_or_default().to_owned();
    if equipment.is_empty() || reported.inventory.equipment != equipment {
        return Err("the report's equipment is not the profile's".into());
    }
    let quest = doc.get(&["Inventory", "questRaidItems"])?.as_str().map(str::to_owned);
    let quest = quest.filter(|q| reported.inventory.quest_raid_items.as_deref() == Some(q.as_str()));
    Ok(Roots { equipment, quest })
}

/// Rule 3's first half: the raid's items are the report's subtrees of the roots, each id listed once,
/// at most [`MAX_RAID_ITEMS`]; answered deserialized, in the order of the roots' subtrees, parents
/// first.
///
/// A report lists the whole stash (thousands of items) around a raid's few dozen, so the stash is
/// looked at once, by id and parent only: one index of every id (which finds a repeated one), and
/// each item's parent chain walked once (see [`under_roots`]). Only the raid's items are then indexed
/// by parent, walked down from the roots, and deserialized.
///
/// The index is std's `HashMap`: SipHash keyed per instance from the WASI random source, so ids a
/// client chose cannot be made to collide. Sorting (id, position) pairs instead measured 1.33 ms over
/// a 4873-item stash in wasm, against 0.49 ms for the map (0.39 with ids compared as words, [`Id`]).
fn raid_items<'a>(listed: &Listed<'a>, roots: &Roots) -> std::result::Result<Vec<ReportedItem<'a>>, Refused> {
    let mut index: HashMap<Id, usize> = HashMap::with_capacity(listed.ids.len());
    for (at, id) in listed.ids.iter().enumerate() {
        if index.insert(Id(id), at).is_some() {
            return Err(format!("item {} is listed twice", json!(id)).into());
        }
    }
    let inside = under_roots(&listed.parents, &index, roots);
    if inside.iter().filter(|inside| **inside).count() > MAX_RAID_ITEMS {
        return Err(format!("a raid brings out at most {MAX_RAID_ITEMS} items").into());
    }
    let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
    for (at, parent) in listed.parents.iter().enumerate() {
        if let (true, Some(parent)) = (inside[at], parent.as_deref()) {
            children.entry(parent).or_default().push(at);
        }
    }
    let mut items: Vec<ReportedItem> = Vec::new();
    let mut next: Vec<&str> = roots.iter().collect();
    while let Some(parent) = next.pop() {
        for &child in children.get(parent).into_iter().flatten() {
            items.push(listed.item(child)?);
            next.push(&listed.ids[child]);
        }
    }
    // `kept_on_death` walks up from a raid item through raid items only: it stops at a root.
    Ok(items)
}

/// Which of the items whose parents are `parents` hang from one of the roots (a root itself does
/// not); `index` finds an item by id. Each item's parent chain is walked up until it meets a root,
/// an item already judged, or an end (no parent, a parent not listed, a cycle); every item met takes
/// that answer, so no chain is walked twice.
fn under_roots(parents: &[Option<Cow<str>>], index: &HashMap<Id, usize>, roots: &Roots) -> Vec<bool> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Unknown,
        Walking,
        Inside,
        Outside,
    }
    let mut state = vec![State::Unknown; parents.len()];
    for root in roots.iter() {
        if let Some(&at) = index.get(&Id(root)) {
            state[at] = State::Outside;
        }
    }
    let mut chain: Vec<usize> = Vec::new();
    // The last parent looked up, and where it is.
    let mut last: Option<(&str, Option<usize>)> = None;
    for start in 0..parents.len() {
        let mut at = start;
        let answer = loop {
            match state[at] {
                State::Unknown => {}
                // Met again on this walk: a cycle, which no root is above.
                State::Walking => break State::Outside,
                judged => break judged,
            }
            state[at] = State::Walking;
            chain.push(at);
            let Some(parent) = parents[at].as_deref() else { break State::Outside };
            if roots.iter().any(|root| Id(root) == Id(parent)) {
                break State::Inside;
            }
            // Siblings are listed together (two items in three share the one before's parent).
            let up = match last {
                Some((was, up)) if Id(was) == Id(parent) => up,
                _ => {
                    let up = index.get(&Id(parent)).copied();
                    last = Some((parent, up));
                    up
                }
            };
            match up {
                Some(up) => at = up,
                None => break State::Outside,
            }
        };
        for at in chain.drain(..) {
            state[at] = answer;
        }
    }
    state.into_iter().map(|state| state == State::Inside).collect()
}

/// An item's id as the index's key: hashed as a `str` is, compared eight bytes at a time (a `str`'s
/// `==` calls `memcmp`, a byte loop in wasm, and the index compares thousands of ids).
#[derive(Hash, Eq)]
struct Id<'a>(&'a str);

impl PartialEq for Id<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let (mut a, mut b) = (a.chunks_exact(8), b.chunks_exact(8));
        let word = |bytes: &[u8]| bytes.try_into().map(u64::from_ne_bytes).ok();
        a.by_ref().zip(b.by_ref()).all(|(x, y)| word(x) == word(y))
            && a.remainder().iter().zip(b.remainder()).all(|(x, y)| x == y)
    }
}

/// What came in: the profile's raid items before the raid (read through the children index), and
/// what the raid's record says it issued.
fn came_in<'a>(doc: &mut Doc, roots: &Roots, record: &'a Value) -> std::result::Result<CameIn<'a>, Refused> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    let mut before: HashMap<String, Value> = HashMap::new();
    for root in roots.iter() {
        for id in inventory::subtree(doc, root)?.into_iter().skip(1) {
            if let Some(item) = inventory::item(doc, &id)? {
                before.insert(id, item);
            }
        }
    }
    let issued = record["issued"].as_object().unwrap_or_else(|| EMPTY.get_or_init(Map::new));
    Ok(CameIn::of(before, issued))
}

impl<'a> CameIn<'a> {
    /// What came in: the raid's items `before` it (by id) and what it `issued`, counted by template.
    fn of(before: HashMap<String, Value>, issued: &'a Map<String, Value>) -> Self {
        let mut units: BTreeMap<String, u64> = BTreeMap::new();
        for item in before.values() {
            let total = units.entry(tpl(item).to_owned()).or_insert(0);
            *total = total.saturating_add(inventory::count(item));
        }
        for entry in issued.values() {
            let (Some(tpl), Some(n)) = (entry[0].as_str(), entry[1].as_u64()) else { continue };
            let total = units.entry(tpl.to_owned()).or_insert(0);
            *total = total.saturating_add(n);
        }
        CameIn { before, issued, units }
    }
}

/// Rules 3 and 4: each item is valid and came in (kept its template, was issued, or is a split of a
/// stack of a template that came in), and no template leaves with more units than came in.
fn check_items(
    doc: &mut Doc,
    templates: &mut Templates,
    items: &RaidItems,
    came_in: &CameIn,
) -> std::result::Result<(), Refused> {
    let mut out: BTreeMap<&str, u64> = BTreeMap::new();
    for item in &items.items {
        let id: &str = &item.id;
        if !valid_id(id) {
            return Err(format!("item id {} is not an id", json!(id)).into());
        }
        if templates.props(&item.tpl).is_none() {
            return Err(format!("item {id} has template {}, which the database does not know", json!(item.tpl)).into());
        }
        if item.slot_id.as_deref().is_none_or(str::is_empty) {
            return Err(format!("item {id} names no slot").into());
        }
        if let Some(had) = came_in.before.get(id) {
            if tpl(had) != item.tpl {
                return Err(format!("item {id} was {} before the raid, not {}", tpl(had), item.tpl).into());
            }
        } else if let Some(entry) = came_in.issued.get(id) {
            if entry[0] != *item.tpl {
                return Err(format!("item {id} was issued as {}, not {}", entry[0], item.tpl).into());
            }
        } else if inventory::item(doc, id)?.is_some() {
            return Err(format!("item {id} is in the profile outside the raid").into());
        } else if !came_in.units.contains_key(&*item.tpl) {
            return Err(format!(
                "item {id} ({}) was never issued in this raid and the player did not bring one in",
                item.tpl
            )
            .into());
        } else if templates.stack_max(&item.tpl) == Some(1) {
            // Only a stack splits into a new id; anything else that came in leaves under its own id,
            // or an item brought in could come out under a new one while insurance returns the old.
            return Err(format!(
                "item {id} ({}) neither came into the raid nor was issued in it, and it does not stack, so it is \
                 no split: an item leaves a raid under the id it came in with",
                item.tpl
            )
            .into());
        }
        let Some(n) = item.count().filter(|n| *n >= 1) else {
            return Err(format!("item {id} has no valid StackObjectsCount").into());
        };
        if let Some(max) = templates.stack_max(&item.tpl)
            && n > max
        {
            return Err(format!("item {id} holds {n} units; a stack of {} holds at most {max}", item.tpl).into());
        }
        let total = out.entry(&item.tpl).or_insert(0);
        *total = total.saturating_add(n);
    }
    for (tpl, n) in &out {
        let had = came_in.units.get(*tpl).copied().unwrap_or(0);
        if *n > had {
            return Err(format!("{n} units of {tpl} leave the raid, but only {had} came in").into());
        }
    }
    Ok(())
}

/// A dead scav is replaced by a new one, with its experience and skills, written whole at the version
/// the checks read.
fn replace_dead_scav(doc: &mut Doc, raid: &Raid, xp: f64, marker: Value) -> std::result::Result<Ended, Refused> {
    let reported = &raid.body.results.profile;
    let previous = json!({
        "Info": {"Level": progression::level_for(xp).unwrap_or(doc.get(&["Info", "Level"])?), "Experience": xp},
        "Skills": skills(&reported.skills, doc.get(&["Skills"])?),
        "Stats": doc.get(&["Stats"])?,
        "Encyclopedia": doc.get(&["Encyclopedia"])?,
    });
    let aid = doc.get(&["aid"])?;
    let mut fresh = scav::generate(raid.uid, &aid, Some(&previous))?;
    fresh[INDEX]["raid"] = marker;
    match store::set_if_version(raid.key, &fresh, Some(raid.version)) {
        Ok(_) => Ok(Ended::Written),
        Err(Error::Conflict(_)) => Err("the scav changed meanwhile; try again".into()),
        Err(other) => Err(other.into()),
    }
}

/// What became of the raid's items: the end's one decision, made by id from the server's copy of what
/// came in ([`CameIn`]) and the checked report, before anything is written. Every consequence of the
/// raid's items reads it and nothing else (see the module doc).
struct Returned<'r> {
    /// The reported items the profile keeps, parents first, each with whether it is found in raid.
    kept: Vec<(&'r ReportedItem<'r>, bool)>,
    /// Their ids.
    ids: HashSet<&'r str>,
    /// The items that came in and are not kept, by id, each with the units that went missing with it
    /// (see [`missing_units`]): what insurance may return of it.
    lost: BTreeMap<String, u64>,
    /// The templates of the quest items a death took (for the quests' pick-up conditions).
    lost_quest_items: Vec<String>,
}

impl<'r> Returned<'r> {
    /// Decides, for the raid that ended with `exit`: what the profile keeps (everything reported, or
    /// on death what `lost_on_death`, SPT's `lostondeath` config, spares), which of it is found in
    /// raid, and what came in and is lost.
    fn decide(exit: Exit, lost_on_death: &Value, roots: &Roots, items: &RaidItems<'r>, came_in: &CameIn) -> Self {
        let dead = exit == Exit::Dead;
        let quest = roots.quest.as_deref();
        let kept: Vec<&'r ReportedItem<'r>> = if dead {
            let spared = |i: &&ReportedItem| kept_on_death(i, &items.by_id, &roots.equipment, quest, lost_on_death);
            items.items.iter().copied().filter(spared).collect()
        } else {
            items.items.clone()
        };
        let ids: HashSet<&'r str> = kept.iter().map(|i| &*i.id).collect();
        let found = found_in_raid(matches!(exit, Exit::Survived | Exit::Transit), &kept, came_in);
        let lost = missing_units(&kept, &ids, came_in);
        // The quest items a death took: those the report or the server's copy has under the quest
        // root, by id, that are not kept.
        let mut lost_quest_items = Vec::new();
        if let (true, Some(root)) = (dead, quest) {
            let mut seen: HashSet<&str> = HashSet::new();
            let reported = items.items.iter().map(|i| (&*i.id, i.parent_id.as_deref(), &*i.tpl));
            let had = came_in.before.iter().map(|(id, i)| (id.as_str(), i["parentId"].as_str(), tpl(i)));
            for (id, parent, template) in reported.chain(had) {
                if parent == Some(root) && !ids.contains(id) && seen.insert(id) {
                    lost_quest_items.push(template.to_owned());
                }
            }
        }
        Returned { kept: kept.into_iter().zip(found).collect(), ids, lost, lost_quest_items }
    }
}

/// Which of the `kept` items are found in raid (none unless `keeps_found`): an item that came in
/// keeps its mark, an issued item or a stack split in the raid has the one the report gives it; each
/// only while its template's found units last, those that came in found plus those the raid issued,
/// claimed by the items that came in first, then the issued ones, then the splits. So a stack the
/// player brought in does not come out found under a new id.
fn found_in_raid(keeps_found: bool, kept: &[&ReportedItem], came_in: &CameIn) -> Vec<bool> {
    let mut found = vec![false; kept.len()];
    if !keeps_found {
        return found;
    }
    let mut left: HashMap<&str, u64> = HashMap::new();
    for item in came_in.before.values().filter(|i| i["upd"]["SpawnedInSession"] == true) {
        *left.entry(tpl(item)).or_insert(0) += inventory::count(item);
    }
    for entry in came_in.issued.values() {
        let (Some(tpl), Some(n)) = (entry[0].as_str(), entry[1].as_u64()) else { continue };
        let total = left.entry(tpl).or_insert(0);
        *total = total.saturating_add(n);
    }
    // 0: came in, 1: issued, 2: a split.
    let rank = |item: &ReportedItem| match (came_in.before.get(&*item.id), came_in.issued.contains_key(&*item.id)) {
        (Some(had), _) => (0, had["upd"]["SpawnedInSession"] == true),
        (None, true) => (1, item.upd()["SpawnedInSession"] == true),
        (None, false) => (2, item.upd()["SpawnedInSession"] == true),
    };
    for pass in 0..3 {
        for (at, item) in kept.iter().enumerate() {
            let (of, claims) = rank(item);
            if of != pass || !claims {
                continue;
            }
            let units = item.count().unwrap_or(1);
            if let Some(units_left) = left.get_mut(&*item.tpl)
                && *units_left >= units
            {
                *units_left -= units;
                found[at] = true;
            }
        }
    }
    found
}

/// The items that came in and are not kept (`ids`), each with the units that went missing with it.
/// A template's missing units are those the player brought in less those `kept` that are not the
/// raid's own: units kept under an issued id are the raid's (up to what it issued), any other kept
/// unit (under an id that came in, or a split's new one) counts as one the player brought. Which of the
/// template's lost items the missing units were cannot be told (stacks split and merge in a raid), so
/// they are given to its lost items in id order, each at most what it held. So a lost item whose units
/// came out anyway (reported under a new id, merged into another stack) has none missing, loot left
/// in the raid is never counted as missing, and no missing unit is given twice.
fn missing_units(kept: &[&ReportedItem], ids: &HashSet<&str>, came_in: &CameIn) -> BTreeMap<String, u64> {
    let mut brought: HashMap<&str, u64> = HashMap::new();
    for item in came_in.before.values() {
        let units = brought.entry(tpl(item)).or_insert(0);
        *units = units.saturating_add(inventory::count(item));
    }
    let mut issued: HashMap<&str, u64> = HashMap::new();
    for entry in came_in.issued.values() {
        let (Some(tpl), Some(n)) = (entry[0].as_str(), entry[1].as_u64()) else { continue };
        let units = issued.entry(tpl).or_insert(0);
        *units = units.saturating_add(n);
    }
    let mut missing = brought;
    for item in kept {
        let mut units = item.count().unwrap_or(1);
        if came_in.issued.contains_key(&*item.id)
            && let Some(left) = issued.get_mut(&*item.tpl)
        {
            let raids = units.min(*left);
            *left -= raids;
            units -= raids;
        }
        if let Some(left) = missing.get_mut(&*item.tpl) {
            *left = left.saturating_sub(units);
        }
    }
    let mut gone: Vec<&String> = came_in.before.keys().filter(|id| !ids.contains(id.as_str())).collect();
    gone.sort();
    let mut lost = BTreeMap::new();
    for id in gone {
        let Some(item) = came_in.before.get(id) else { continue };
        let left = missing.get_mut(tpl(item));
        let units = left.map_or(0, |left| {
            let units = inventory::count(item).min(*left);
            *left -= units;
            units
        });
        lost.insert(id.clone(), units);
    }
    lost
}

/// The raid's items replace the profile's (children removed first): the kept ones, found in raid as
/// decided.
fn replace_items(
    doc: &mut Doc,
    templates: &mut Templates,
    came_in: &CameIn,
    returned: &Returned,
) -> std::result::Result<(), Refused> {
    let mut order: Vec<&String> = came_in.before.keys().collect();
    order.sort_by_key(|id| std::cmp::Reverse(depth(id, &came_in.before)));
    for id in order {
        inventory::write(doc, templates, id, None)?;
    }
    for (item, found) in &returned.kept {
        let mut value = serde_json::to_value(item).map_err(Error::from)?;
        if value["upd"].is_object() || *found {
            value["upd"]["SpawnedInSession"] = json!(found);
        }
        inventory::write(doc, templates, &item.id, Some(value))?;
    }
    Ok(())
}

/// Everything else the raid changes on the player: the fast panel (kept items only), experience and
/// level, health, skills, and what `progress.rs` takes (statistics, quests, achievements, Fence).
fn stage_player(
    doc: &mut Doc,
    templates: &mut Templates,
    raid: &Raid,
    xp: f64,
    returned: &Returned,
) -> std::result::Result<(), Refused> {
    let reported = &raid.body.results.profile;
    let dead = raid.exit == Exit::Dead;
    let mut panel = Map::new();
    if !dead && let Some(slots) = reported.inventory.fast_panel.as_object() {
        for (slot, id) in slots.iter().take(MAX_FAST_PANEL) {
            if id.as_str().is_some_and(|id| returned.ids.contains(id)) && slot.len() <= 32 {
                panel.insert(slot.clone(), id.clone());
            }
        }
    }
    doc.set(&["Inventory", "fastPanel"], Value::Object(panel))?;
    doc.set(&["Info", "Experience"], json!(xp))?;
    if let Some(level) = progression::level_for(xp) {
        doc.set(&["Info", "Level"], level)?;
    }
    let death = dead.then(|| setting("deathHealthMultiplier").as_f64().unwrap_or(0.3));
    let health = health(doc.get(&["Health"])?, &reported.health, death);
    doc.set(&["Health"], health)?;
    let skills = skills(&reported.skills, doc.get(&["Skills"])?);
    doc.set(&["Skills"], skills)?;
    let outcome = progress::Outcome {
        dead,
        survived: raid.exit == Exit::Survived,
        scav: raid.scav,
        lost_quest_items: &returned.lost_quest_items,
    };
    progress::apply(doc, templates, reported, &outcome)?;
    Ok(())
}

/// How many parents item `id` has among `items` (for removing children before their parents).
fn depth(id: &str, items: &HashMap<String, Value>) -> usize {
    let mut at = id;
    let mut n = 0;
    while n < MAX_DEPTH {
        match items.get(at).and_then(|i| i["parentId"].as_str()) {
            Some(parent) if items.contains_key(parent) => {
                at = parent;
                n += 1;
            }
            _ => break,
        }
    }
    n
}

/// Does `item` stay with a dead player? Its top item (the one in an equipment slot) must be in a slot
/// `lostOnDeath.equipment` does not mark lost, and it must not sit in one of the pockets' `pocket*`
/// grids (when `PocketItems` is lost); quest items stay unless `questItems`.
fn kept_on_death(
    item: &ReportedItem,
    by_id: &HashMap<&str, &ReportedItem>,
    equipment: &str,
    quest: Option<&str>,
    lost: &Value,
) -> bool {
    let mut at = item;
    let mut in_pocket_grid = false;
    for _ in 0..MAX_DEPTH {
        let parent = at.parent_id.as_deref().unwrap_or_default();
        if parent == equipment {
            let slot = at.slot_id.as_deref().unwrap_or_default();
            if lost["equipment"][slot] == true {
                return false;
            }
            let pockets_lost = lost["equipment"]["PocketItems"] != false;
            return !(slot == "Pockets" && in_pocket_grid && pockets_lost);
        }
        if Some(parent) == quest {
            return lost["questItems"] == false;
        }
        let Some(up) = by_id.get(parent) else { return false };
        // A child of the pockets item in a `pocket*` grid: lost with the pockets' contents.
        if up.parent_id.as_deref() == Some(equipment)
            && up.slot_id.as_deref() == Some("Pockets")
            && at.slot_id.as_deref().is_some_and(|s| s.starts_with("pocket"))
        {
            in_pocket_grid = true;
        }
        at = up;
    }
    false
}

/// The profile's health after the raid: limbs and vitals from the report within the maxima, or a
/// death's share of each limb's maximum; the temperature reset.
/// `death` is the share of each limb's maximum a death leaves, `None` when the player lived.
fn health(mut server: Value, reported: &Value, death: Option<f64>) -> Value {
    if let Some(parts) = server["BodyParts"].as_object_mut() {
        for (name, part) in parts.iter_mut().take(32) {
            let max = part["Health"]["Maximum"].as_f64().unwrap_or(0.0).max(0.0);
            let now = match death {
                Some(share) => max * share.clamp(0.0, 1.0),
                None => reported["BodyParts"][name]["Health"]["Current"].as_f64().unwrap_or(max).clamp(0.0, max),
            };
            part["Health"]["Current"] = json!(now);
        }
    }
    for vital in ["Hydration", "Energy"] {
        let max = server[vital]["Maximum"].as_f64().unwrap_or(100.0).max(0.0);
        if let Some(current) = reported[vital]["Current"].as_f64() {
            server[vital]["Current"] = json!(current.clamp(0.0, max));
        }
    }
    if server["Temperature"].is_object() {
        server["Temperature"]["Current"] = json!(36.6);
    }
    if server.is_object() {
        server["UpdateTime"] = json!(clock::now());
    }
    server
}

/// The skills after the raid: the reported `Common` list (id and progress, within 0–5100), the rest
/// of the profile's skills unchanged.
fn skills(reported: &Value, mut server: Value) -> Value {
    let Some(common) = reported["Common"].as_array() else { return server };
    let list: Vec<Value> = common
        .iter()
        .take(MAX_SKILLS)
        .filter_map(|s| {
            let id = s["Id"].as_str().filter(|id| id.len() <= 64)?;
            let progress = s["Progress"].as_f64()?.clamp(0.0, progression::MAX_SKILL_PROGRESS);
            Some(json!({"Id": id, "Progress": progress, "PointsEarnedDuringSession": 0,
                        "LastAccess": s["LastAccess"].as_i64().unwrap_or(0)}))
        })
        .collect();
    if !server.is_object() {
        server = json!({"Mastering": [], "Points": 0});
    }
    server["Common"] = Value::Array(list);
    server
}

#[cfg(test)]
mod tests {
    use super::*;

    fn it<'a>(id: &'a str, parent: &'a str, slot: &'a str) -> ReportedItem<'a> {
        ReportedItem {
            id: id.into(),
            tpl: "t".into(),
            parent_id: Some(parent.into()),
            slot_id: Some(slot.into()),
            location: None,
            upd: None,
        }
    }

    #[test]
    fn death_keeps_what_spt_keeps() {
        let items = [
            it("rifle", "eq", "FirstPrimaryWeapon"),
            it("mag", "rifle", "mod_magazine"),
            it("secure", "eq", "SecuredContainer"),
            it("gold", "secure", "main"),
            it("pockets", "eq", "Pockets"),
            it("coin", "pockets", "pocket1"),
            it("inner", "coin", "main"),
            it("key", "pockets", "SpecialSlot1"),
            it("note", "quest", "hideout"),
        ];
        let by_id: HashMap<&str, &ReportedItem> = items.iter().map(|i| (&*i.id, i)).collect();
        let lost = json!({"equipment": {"FirstPrimaryWeapon": true, "SecuredContainer": false, "PocketItems": true},
                          "questItems": true});
        let kept: Vec<&str> =
            items.iter().filter(|i| kept_on_death(i, &by_id, "eq", Some("quest"), &lost)).map(|i| &*i.id).collect();
        assert_eq!(kept, ["secure", "gold", "pockets", "key"]);
    }

    #[test]
    fn the_raids_items_are_what_hangs_from_a_root() {
        let mut listed = vec![
            it("stash", "", ""),
            it("box", "stash", "hideout"),
            it("rifle", "eq", "FirstPrimaryWeapon"),
            it("mag", "rifle", "mod_magazine"),
            it("in-box", "box", "main"),
            it("a", "b", "main"),
            it("b", "a", "main"),
            it("note", "quest", "hideout"),
            it("eq", "stash", "hideout"),
            it("orphan", "nowhere", "main"),
        ];
        listed[0].parent_id = None;
        // A chain deeper than any walk elsewhere is bounded at: still the raid's.
        let deep: Vec<String> = (0..100).map(|n| format!("d{n}")).collect();
        for n in 0..deep.len() {
            listed.push(it(&deep[n], if n == 0 { "eq" } else { &deep[n - 1] }, "main"));
        }
        let index: HashMap<Id, usize> = listed.iter().enumerate().map(|(at, i)| (Id(&i.id), at)).collect();
        let parents: Vec<Option<Cow<str>>> = listed.iter().map(|i| i.parent_id.clone()).collect();
        let roots = Roots { equipment: "eq".into(), quest: Some("quest".into()) };
        let inside: Vec<&str> =
            listed.iter().zip(under_roots(&parents, &index, &roots)).filter(|(_, i)| *i).map(|(i, _)| &*i.id).collect();
        let mut expected = vec!["rifle", "mag", "note"];
        expected.extend(deep.iter().map(String::as_str));
        assert_eq!(inside, expected, "not the stash, the cycle, the orphan or a root itself");
    }

    /// An end's body reporting `items` (JSON texts), the stash's `stash` items before them.
    fn body(stash: usize, items: &[&str]) -> String {
        let mut listed: Vec<String> = (0..stash)
            .map(|n| {
                format!(r#"{{"_id":"s{n}","_tpl":"t","parentId":"stash","slotId":"hideout","upd":{{"x":[1,"]"]}}}}"#)
            })
            .collect();
        listed.extend(items.iter().map(|item| item.to_string()));
        let inventory = format!(r#"{{"equipment":"eq","items":[{}],"fastPanel":{{}}}}"#, listed.join(","));
        format!(
            r#"{{"serverId":"raid","results":{{"result":"Survived","profile":{{"_id":"p","Inventory":{inventory}}}}}}}"#
        )
    }

    fn ids_of_raid(body: &str) -> std::result::Result<Vec<String>, String> {
        let report = report::parse(body.as_bytes(), MAX_BODY).map_err(|e| e.to_string())?;
        let roots = Roots { equipment: "eq".into(), quest: None };
        let items = match raid_items(&report.listed, &roots) {
            Ok(items) => items,
            Err(Refused::Reason(why)) => return Err(why),
            Err(Refused::Store(e)) => return Err(e.to_string()),
        };
        Ok(items.iter().map(|item| item.id.to_string()).collect())
    }

    #[test]
    fn the_end_reads_only_the_raids_items_of_a_scanned_body() {
        let rifle = r#"{"_id":"rifle","_tpl":"t","parentId":"eq","slotId":"FirstPrimaryWeapon"}"#;
        assert_eq!(ids_of_raid(&body(3000, &[rifle])), Ok(vec!["rifle".to_owned()]));
        // A stash item only looked through may lack what a raid item needs (a template).
        let odd = r#"{"_id":"odd","parentId":"stash"}"#;
        assert_eq!(ids_of_raid(&body(10, &[odd, rifle])), Ok(vec!["rifle".to_owned()]));
        // A raid item does not.
        let bad = r#"{"_id":"bad","parentId":"eq","slotId":"Pockets"}"#;
        let err = ids_of_raid(&body(10, &[bad])).expect_err("no template");
        assert!(err.contains("match/local/end: json: request body: item 10: missing field `_tpl`"), "{err}");
    }

    #[test]
    fn a_stash_item_that_is_not_json_refuses_the_body() {
        let good = body(2000, &[]);
        // Far into the stash: a `\u` escape cut short, then an object left open.
        let at = good.find(r#""s1500""#).expect("an item");
        let broken = format!(r"{}\u12{}", &good[..at + 6], &good[at + 6..]);
        let err = ids_of_raid(&broken).expect_err("bad escape");
        assert!(
            err.contains("match/local/end: json: request body: a \\u escape needs four hex digits at byte"),
            "{err}"
        );
        let at = good.find(r#""s1700""#).expect("an item");
        let close = at + good[at..].find("]}}").expect("its end");
        let broken = format!("{}]}}{}", &good[..close], &good[close + 3..]);
        let err = ids_of_raid(&broken).expect_err("unclosed");
        assert!(
            err.contains(&format!("json: request body: expected a member name (a string) at byte {}", close + 3)),
            "{err}"
        );
        // An item with no string `_id` is refused as the whole parse refused it.
        let err = ids_of_raid(&body(10, &[r#"{"_id":5,"_tpl":"t"}"#])).expect_err("a number");
        assert!(err.contains("item 10: invalid type: integer `5`, expected a string"), "{err}");
        let err = ids_of_raid(&body(10, &[r#"{"_tpl":"t"}"#])).expect_err("no id");
        assert!(err.contains("item 10: missing field `_id`"), "{err}");
        let err = ids_of_raid(&body(10, &[r#"{"_id":"x","_tpl":"t","parentId":7}"#])).expect_err("a number");
        assert!(err.contains("item 10: invalid type: integer `7`"), "{err}");
        let err = ids_of_raid(&body(10, &["[]"])).expect_err("not an object");
        assert!(err.contains("item 10: invalid length 0, expected struct ReportedItem"), "{err}");
        // serde_json would fill an item from a list of its six members; the scan, which reads ids by
        // name, refuses that.
        let listed = r#"["x","t","eq","Pockets",null,null]"#;
        let err = ids_of_raid(&body(10, &[listed])).expect_err("not an object");
        assert!(err.contains("item 10 has no string `_id`"), "{err}");
        // A report without its items (or not a list) is refused by the parse of the rest, as before.
        let err = ids_of_raid(&good.replace(r#""items":"#, r#""things":"#)).expect_err("no items");
        assert!(err.contains("missing field `items`"), "{err}");
        let err = ids_of_raid(&body(0, &[]).replace(r#""items":[]"#, r#""items":{}"#)).expect_err("an object");
        assert!(err.contains("invalid type: map, expected a sequence"), "{err}");
    }

    #[test]
    fn an_id_listed_twice_far_in_the_stash_is_refused() {
        let twice = r#"{"_id":"s1234","_tpl":"t","parentId":"eq","slotId":"Pockets"}"#;
        assert_eq!(ids_of_raid(&body(3000, &[twice])), Err(r#"item "s1234" is listed twice"#.to_owned()));
        // Written with an escape, it is the same id.
        let escaped = r#"{"_id":"s1234","_tpl":"t","parentId":"stash"}"#;
        assert_eq!(ids_of_raid(&body(3000, &[escaped])), Err(r#"item "s1234" is listed twice"#.to_owned()));
    }

    #[test]
    fn a_raid_item_with_an_escaped_id_is_its_unescaped_id() {
        let rifle = r#"{"_id":"rifle","_tpl":"t","parentId":"eq","slotId":"FirstPrimaryWeapon"}"#;
        let mag = r#"{"_id":"mag","_tpl":"t","parentId":"rifle","slotId":"mod_magazine"}"#;
        let body = body(100, &[mag, rifle]);
        assert_eq!(ids_of_raid(&body), Ok(vec!["rifle".to_owned(), "mag".to_owned()]));
        let report = report::parse(body.as_bytes(), MAX_BODY).expect("parses");
        assert_eq!(report.request.results.profile.inventory.equipment, "eq");
        // A body over the bound is refused whole, unread.
        let err = report::parse(body.as_bytes(), 100).err().expect("too large");
        assert!(matches!(err, Error::TooLarge(_)), "{err}");
    }

    #[test]
    fn ids_compare_by_every_byte() {
        let id = "0123456789abcdef01234567x";
        assert!(Id(id) == Id(id), "equal to itself");
        for at in 0..id.len() {
            let mut other = id.as_bytes().to_vec();
            other[at] ^= 1;
            let other = String::from_utf8(other).expect("ASCII");
            assert!(Id(id) != Id(&other), "byte {at}");
        }
        assert!(Id(id) != Id(&id[1..]));
    }

    /// An item's text: `id` of `tpl` holding `units`, in `slot` of `parent`, found in raid or not.
    fn text(id: &str, tpl: &str, parent: &str, slot: &str, units: u64, found: bool) -> String {
        json!({"_id": id, "_tpl": tpl, "parentId": parent, "slotId": slot,
               "upd": {"StackObjectsCount": units, "SpawnedInSession": found}})
        .to_string()
    }

    fn parsed(texts: &[String]) -> Vec<ReportedItem<'_>> {
        texts.iter().map(|text| serde_json::from_str(text).expect("an item")).collect()
    }

    /// What came in: the items of `before` (texts) and `issued`.
    fn came<'a>(before: &[String], issued: &'a Map<String, Value>) -> CameIn<'a> {
        let before = before
            .iter()
            .map(|text| serde_json::from_str::<Value>(text).expect("an item"))
            .map(|item| (item["_id"].as_str().unwrap_or_default().to_owned(), item))
            .collect();
        CameIn::of(before, issued)
    }

    fn roots() -> Roots {
        Roots { equipment: "eq".into(), quest: Some("q".into()) }
    }

    fn lost_on_death() -> Value {
        json!({"equipment": {"FirstPrimaryWeapon": true, "Backpack": true, "SecuredContainer": false,
                             "PocketItems": true}, "questItems": true})
    }

    /// The end's decision on `reported` (texts) after a raid that ended with `exit`.
    fn decided(exit: Exit, reported: &[String], came_in: &CameIn) -> (Vec<(String, bool)>, BTreeMap<String, u64>) {
        let items = parsed(reported);
        let returned = Returned::decide(exit, &lost_on_death(), &roots(), &RaidItems::of(&items), came_in);
        let kept = returned.kept.iter().map(|(item, found)| (item.id.to_string(), *found)).collect();
        (kept, returned.lost)
    }

    #[test]
    fn a_stack_under_a_new_id_is_lost_with_none_of_its_units_missing() {
        let issued = Map::new();
        let before = [
            text("rifle", "ak", "eq", "FirstPrimaryWeapon", 1, false),
            text("cash", "rub", "eq", "Backpack", 1000, false),
        ];
        let came_in = came(&before, &issued);
        let renamed = [before[0].clone(), text("new", "rub", "eq", "Backpack", 1000, false)];
        let (kept, lost) = decided(Exit::Survived, &renamed, &came_in);
        assert_eq!(kept, [("rifle".to_owned(), false), ("new".to_owned(), false)]);
        assert_eq!(lost, BTreeMap::from([("cash".to_owned(), 0)]), "lost by id, nothing of it missing");
        for exit in [Exit::Runner, Exit::Transit] {
            assert_eq!(decided(exit, &renamed, &came_in).1, BTreeMap::from([("cash".to_owned(), 0)]));
        }
        // Part of it spent: what is missing is what did not come out.
        let spent = [before[0].clone(), text("new", "rub", "eq", "Backpack", 400, false)];
        assert_eq!(decided(Exit::Survived, &spent, &came_in).1, BTreeMap::from([("cash".to_owned(), 600)]));
        // A death takes both slots: everything is missing.
        let (kept, lost) = decided(Exit::Dead, &renamed, &came_in);
        assert!(kept.is_empty(), "{kept:?}");
        assert_eq!(lost, BTreeMap::from([("cash".to_owned(), 1000), ("rifle".to_owned(), 1)]));
    }

    #[test]
    fn missing_units_go_to_the_lost_items_once_in_id_order() {
        let issued = Map::new();
        let before = [text("b", "ammo", "eq", "Backpack", 60, false), text("a", "ammo", "eq", "Backpack", 60, false)];
        let came_in = came(&before, &issued);
        // Both merged into one new stack of 90: 30 are missing, given once.
        let merged = [text("n", "ammo", "eq", "Backpack", 90, false)];
        let (_, lost) = decided(Exit::Survived, &merged, &came_in);
        assert_eq!(lost, BTreeMap::from([("a".to_owned(), 30), ("b".to_owned(), 0)]));
    }

    #[test]
    fn loot_left_in_the_raid_is_never_missing_and_loot_taken_is_the_raids() {
        let issued: Map<String, Value> = [("loot".to_owned(), json!(["rub", 92]))].into_iter().collect();
        let before = [text("cash", "rub", "eq", "Backpack", 1000, false)];
        let came_in = came(&before, &issued);
        // The cash under a new id, the loot left where it lay: nothing of the cash is missing.
        let renamed = [text("new", "rub", "eq", "Backpack", 1000, false)];
        assert_eq!(decided(Exit::Runner, &renamed, &came_in).1, BTreeMap::from([("cash".to_owned(), 0)]));
        // The cash left in the raid and the loot taken (under its issued id): all of the cash is missing.
        let looted = [text("loot", "rub", "eq", "Backpack", 92, false)];
        assert_eq!(decided(Exit::Survived, &looted, &came_in).1, BTreeMap::from([("cash".to_owned(), 1000)]));
        // Loot merged with some of the cash: what is under the loot's id beyond what was issued is the cash's.
        let merged = [text("loot", "rub", "eq", "Backpack", 592, false)];
        assert_eq!(decided(Exit::Transit, &merged, &came_in).1, BTreeMap::from([("cash".to_owned(), 500)]));
    }

    #[test]
    fn found_in_raid_is_bounded_by_the_found_units_that_came_in_or_were_issued() {
        let issued: Map<String, Value> = [("loot".to_owned(), json!(["rub", 50]))].into_iter().collect();
        let before =
            [text("cash", "rub", "eq", "Backpack", 1000, false), text("found", "ammo", "eq", "Backpack", 30, true)];
        let came_in = came(&before, &issued);
        let reported = [
            // The cash under a new id, claiming to be found: 50 found roubles are all there are.
            text("laundered", "rub", "eq", "Backpack", 1000, true),
            text("loot", "rub", "eq", "Backpack", 50, true),
            // A found stack that came in keeps its mark, and a split of it has it too.
            text("found", "ammo", "eq", "Backpack", 20, false),
            text("split", "ammo", "eq", "Backpack", 10, true),
        ];
        let (kept, _) = decided(Exit::Survived, &reported, &came_in);
        let found: Vec<bool> = kept.iter().map(|(_, found)| *found).collect();
        assert_eq!(found, [false, true, true, true], "{kept:?}");
        // The loot first: the issued units go to the issued id, never to a split.
        let reported =
            [text("split", "rub", "eq", "Backpack", 30, true), text("loot", "rub", "eq", "Backpack", 50, true)];
        let (kept, _) = decided(Exit::Transit, &reported, &came_in);
        assert_eq!(kept, [("split".to_owned(), false), ("loot".to_owned(), true)]);
        let (kept, _) = decided(Exit::Runner, &reported, &came_in);
        assert!(kept.iter().all(|(_, found)| !found), "a runner finds nothing: {kept:?}");
    }

    #[test]
    fn a_death_loses_the_quest_items_that_came_in_reported_or_not() {
        let issued = Map::new();
        let before = [text("qa", "A", "q", "hideout", 1, true), text("qb", "B", "q", "hideout", 1, true)];
        let came_in = came(&before, &issued);
        let items_texts = [before[0].clone()];
        let items = parsed(&items_texts);
        let raid = RaidItems::of(&items);
        let dead = Returned::decide(Exit::Dead, &lost_on_death(), &roots(), &raid, &came_in);
        let mut lost = dead.lost_quest_items.clone();
        lost.sort();
        assert_eq!(lost, ["A", "B"]);
        let lived = Returned::decide(Exit::Survived, &lost_on_death(), &roots(), &raid, &came_in);
        assert!(lived.lost_quest_items.is_empty());
        assert_eq!(lived.lost, BTreeMap::from([("qb".to_owned(), 1)]), "qb did not come back");
    }

    #[test]
    fn results_are_spt_exit_statuses() {
        assert_eq!(exit_of("Survived"), Some(Exit::Survived));
        assert_eq!(exit_of("MissingInAction"), Some(Exit::Dead));
        assert_eq!(exit_of("Killed"), Some(Exit::Dead));
        assert_eq!(exit_of("Runner"), Some(Exit::Runner));
        assert_eq!(exit_of("Won"), None);
    }

    #[test]
    fn health_is_bounded_and_death_takes_its_share() {
        let server = json!({"BodyParts": {"Head": {"Health": {"Current": 35, "Maximum": 35}}},
                            "Hydration": {"Current": 100, "Maximum": 100}, "Temperature": {"Current": 40}});
        let reported = json!({"BodyParts": {"Head": {"Health": {"Current": 999}}}, "Hydration": {"Current": -5}});
        let alive = health(server.clone(), &reported, None);
        assert_eq!(alive["BodyParts"]["Head"]["Health"]["Current"], 35.0);
        assert_eq!(alive["Hydration"]["Current"], 0.0);
        assert_eq!(alive["Temperature"]["Current"], 36.6);
        let dead = health(server, &reported, Some(0.3));
        assert_eq!(dead["BodyParts"]["Head"]["Health"]["Current"], 35.0 * 0.3);
    }
}
