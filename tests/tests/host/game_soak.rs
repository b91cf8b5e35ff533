//! A randomized play test of the item actions: [`SESSIONS`] players, each on its own session and all
//! at once, send batches mixing valid actions with lying ones (other players' items, places outside a
//! grid, containers a template does not have, huge and negative numbers, underpaid purchases), and the
//! server is killed and started again halfway. After every batch the player's profile is checked as a
//! whole ([`check`]): no duplicate ids, no orphans, every item in a grid or slot its parent's template
//! has and inside the grid, no overlap, one item a slot, stacks from 1 to the template's limit, money
//! changed only by what accepted purchases cost; and a batch that applied nothing changed nothing.
//!
//! The dice are seeded: the seed is printed, `SOAK_SEED` replays one, `SOAK_ROUNDS` sets the rounds.
//! To add an action, add a generator to [`GENERATORS`] (and, if it may move money, account for it in
//! [`spent`]).

use crate::emulator::Player;
use modhost_gamedb::inventory::{SUIT_OFFER, SUIT_PRICE};
use modhost_gamedb::{RIFLE, ROUBLES, TRADER};
use modhost_tests::TestServer;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Players playing at once.
const SESSIONS: usize = 6;
/// Rounds (each player sends one batch a round) by default; the restart is halfway.
const ROUNDS: usize = 200;
/// The most actions one batch holds.
const MAX_BATCH: u64 = 5;
/// The wall time the rounds may take before the test stops early (it says so).
const BUDGET: Duration = Duration::from_secs(45);
/// The seed when `SOAK_SEED` does not name one.
const DEFAULT_SEED: u64 = 0x5eed_0030;

const OFFER: &str = "6000000000000000000000a1";
const PRICE: u64 = 25_000;
const START_MONEY: u64 = 500_000;
/// The equipment's slots (`host/gamedb/src/inventory.rs`), and names no template has.
const SLOTS: [&str; 6] = ["FirstPrimaryWeapon", "Pockets", "Backpack", "SecuredContainer", "Holster", "Trunk"];
const BOGUS: [&str; 5] = ["bogus", "Hideout", "main", "", "pocket1"];

/// splitmix64 dice.
struct Dice(u64);

impl Dice {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, from: &'a [T]) -> Option<&'a T> {
        (!from.is_empty()).then(|| &from[self.below(from.len() as u64) as usize])
    }
    fn id(&mut self) -> String {
        format!("{:024x}", u128::from(self.next()) << 32 | u128::from(self.next() >> 32))
    }
    /// A number a client might lie with.
    fn huge(&mut self) -> Value {
        let lies = [json!(0), json!(-1), json!(u64::MAX), json!(i64::MAX), json!(i64::MIN), json!(1e300), json!("7")];
        self.pick(&lies).cloned().unwrap_or_default()
    }
}

/// What a generator sees of the player: its profile now and the other players' item ids.
struct View<'a> {
    profile: &'a Value,
    items: &'a [Value],
    roots: &'a [String],
    others: &'a [String],
}

impl View<'_> {
    fn root(&self, name: &str) -> String {
        self.profile["Inventory"][name].as_str().unwrap_or_default().to_owned()
    }
    fn movable(&self) -> Vec<&Value> {
        self.items.iter().filter(|i| !self.roots.iter().any(|r| i["_id"] == r.as_str())).collect()
    }
    fn any_item(&self, dice: &mut Dice) -> Option<String> {
        dice.pick(&self.movable()).map(|i| i["_id"].as_str().unwrap_or_default().to_owned())
    }
    /// Any id: mostly the player's movable items, sometimes a root, another player's, or made up.
    fn any_id(&self, dice: &mut Dice) -> String {
        match dice.below(10) {
            0 => dice.pick(self.others).cloned().unwrap_or_else(|| dice.id()),
            1 => dice.pick(self.roots).cloned().unwrap_or_default(),
            2 => dice.id(),
            _ => self.any_item(dice).unwrap_or_else(|| dice.id()),
        }
    }
    fn stacks(&self) -> Vec<&Value> {
        self.movable().into_iter().filter(|i| count(i) > 1).collect()
    }
    fn money(&self) -> Vec<&Value> {
        self.movable().into_iter().filter(|i| i["_tpl"] == ROUBLES).collect()
    }
    /// Items the test may remove: never money, nor what holds money (the accounting would lose it).
    fn removable(&self) -> Vec<&Value> {
        let by_id: HashMap<&str, &Value> = self.items.iter().filter_map(|i| Some((i["_id"].as_str()?, i))).collect();
        let holds_money: HashSet<String> = self
            .money()
            .iter()
            .flat_map(|m| {
                let mut chain = Vec::new();
                let mut at = m["parentId"].as_str();
                while let Some(parent) = at.filter(|_| chain.len() < 64) {
                    chain.push(parent.to_owned());
                    at = by_id.get(parent).and_then(|p| p["parentId"].as_str());
                }
                chain
            })
            .collect();
        self.movable()
            .into_iter()
            .filter(|i| i["_tpl"] != ROUBLES && !holds_money.contains(i["_id"].as_str().unwrap_or_default()))
            .collect()
    }
}

/// A place in a grid: mostly the stash's, sometimes the sorting table's, a pocket, or out of bounds.
fn grid_place(dice: &mut Dice, view: &View) -> Value {
    let r = if dice.chance(30) { "Vertical" } else { "Horizontal" };
    let (id, container, x, y) = match dice.below(10) {
        0 => (view.root("sortingTable"), "hideout", dice.below(10), dice.below(45)),
        1 => {
            let pockets = view.items.iter().find(|i| i["_tpl"] == "627a4e6b255f7527fb05a0f6");
            let id = pockets.and_then(|p| p["_id"].as_str()).unwrap_or_default().to_owned();
            (id, *dice.pick(&["pocket1", "pocket2", "pocket3", "pocket4"]).unwrap_or(&"pocket1"), 0, 0)
        }
        2 => (view.root("stash"), "hideout", dice.below(12), dice.below(70)),
        _ => (view.root("stash"), "hideout", dice.below(10), dice.below(12)),
    };
    json!({"id": id, "container": container, "location": {"x": x, "y": y, "r": r}})
}

/// An action generator: what it makes from the dice and the player's view (`None`: nothing to do).
type Generator = fn(&mut Dice, &View) -> Option<Value>;

/// Every action the soak sends, by name. Valid and lying ones side by side; the dice pick one per slot
/// of a batch.
const GENERATORS: &[(&str, Generator)] = &[
    ("move", |d, v| Some(json!({"Action": "Move", "item": v.any_item(d)?, "to": grid_place(d, v)}))),
    ("move into a slot", |d, v| {
        let to = json!({"id": v.root("equipment"), "container": d.pick(&SLOTS)?});
        Some(json!({"Action": "Move", "item": v.any_item(d)?, "to": to}))
    }),
    ("move into a bogus container", |d, v| {
        let to = json!({"id": v.root("stash"), "container": d.pick(&BOGUS)?, "location": {"x": 1, "y": 1}});
        Some(json!({"Action": "Move", "item": v.any_item(d)?, "to": to}))
    }),
    ("move to a huge place", |d, v| {
        let to = json!({"id": v.root("stash"), "container": "hideout", "location": {"x": d.huge(), "y": d.huge()}});
        Some(json!({"Action": "Move", "item": v.any_item(d)?, "to": to}))
    }),
    ("move of any id anywhere", |d, v| {
        let to = json!({"id": v.any_id(d), "container": "hideout", "location": {"x": 0, "y": d.below(68)}});
        Some(json!({"Action": "Move", "item": v.any_id(d), "to": to}))
    }),
    ("split", |d, v| {
        let from = d.pick(&v.stacks())?["_id"].clone();
        let n = if d.chance(80) { json!(1 + d.below(3)) } else { d.huge() };
        let new = if d.chance(85) { d.id() } else { v.any_id(d) };
        Some(json!({"Action": "Split", "splitItem": from, "newItem": new, "count": n, "container": grid_place(d, v)}))
    }),
    ("merge", |d, v| Some(json!({"Action": "Merge", "item": v.any_id(d), "with": v.any_id(d)}))),
    ("merge money", |d, v| {
        let money = v.money();
        Some(json!({"Action": "Merge", "item": d.pick(&money)?["_id"], "with": d.pick(&money)?["_id"]}))
    }),
    ("transfer", |d, v| {
        let money = v.money();
        let n = if d.chance(80) { json!(1 + d.below(1000)) } else { d.huge() };
        Some(json!({"Action": "Transfer", "item": d.pick(&money)?["_id"], "with": v.any_id(d), "count": n}))
    }),
    ("remove", |d, v| Some(json!({"Action": "Remove", "item": d.pick(&v.removable())?["_id"]}))),
    ("remove a root or another's", |d, v| {
        let id = if d.chance(50) { d.pick(v.roots)?.clone() } else { d.pick(v.others)?.clone() };
        Some(json!({"Action": "Remove", "item": id}))
    }),
    ("buy", |d, v| {
        let n = 1 + d.below(2);
        let payer = v.money().into_iter().find(|m| count(m) >= n * PRICE)?["_id"].clone();
        Some(json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": OFFER,
                    "count": n, "scheme_id": 0, "scheme_items": [{"id": payer, "count": n * PRICE}]}))
    }),
    ("buy, lying", |d, v| {
        let payer =
            if d.chance(50) { d.pick(v.others)?.clone() } else { d.pick(&v.money())?["_id"].as_str()?.to_owned() };
        let (n, paid) = match d.below(3) {
            0 => (json!(1), json!(PRICE - 1)),
            1 => (d.huge(), json!(PRICE)),
            _ => (json!(1), d.huge()),
        };
        Some(json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": OFFER,
                    "count": n, "scheme_id": 0, "scheme_items": [{"id": payer, "count": paid}]}))
    }),
    ("swap", |d, v| {
        Some(
            json!({"Action": "Swap", "item": v.any_item(d)?, "to": grid_place(d, v), "item2": v.any_id(d), "to2": grid_place(d, v)}),
        )
    }),
    ("sort", |d, v| {
        let changed: Vec<Value> = (0..1 + d.below(3))
            .map(|_| {
                let to = grid_place(d, v);
                json!({"_id": v.any_id(d), "parentId": to["id"], "slotId": to["container"], "location": to["location"]})
            })
            .collect();
        Some(json!({"Action": "ApplyInventoryChanges", "changedItems": changed}))
    }),
    ("buy a suit", |d, v| {
        let payer = d.pick(&v.money())?["_id"].clone();
        let paid = if d.chance(70) { json!(SUIT_PRICE) } else { d.huge() };
        Some(
            json!({"Action": "CustomizationBuy", "offer": SUIT_OFFER, "items": [{"id": payer, "count": paid, "del": false}]}),
        )
    }),
    ("tag, pin or bind", |d, v| {
        let id = v.any_id(d);
        Some(match d.below(3) {
            0 => json!({"Action": "Tag", "item": id, "TagName": "t", "TagColor": d.below(300)}),
            1 => json!({"Action": "PinLock", "Item": id, "State": *d.pick(&["Pinned", "Locked", "Free", "Stuck"])?}),
            _ => json!({"Action": "Bind", "item": id, "index": format!("Item{}", d.below(12))}),
        })
    }),
];

/// Units in a stack.
fn count(item: &Value) -> u64 {
    item["upd"]["StackObjectsCount"].as_u64().unwrap_or(1)
}

/// The roubles a profile holds.
fn money(items: &[Value]) -> u64 {
    items.iter().filter(|i| i["_tpl"] == ROUBLES).map(count).sum()
}

/// What an accepted action cost in roubles (only purchases spend; the soak removes no money).
fn spent(action: &Value) -> u64 {
    match action["Action"].as_str() {
        Some("TradingConfirm") if action["item_id"] == OFFER => {
            action["count"].as_u64().unwrap_or(0).saturating_mul(PRICE)
        }
        Some("CustomizationBuy") => SUIT_PRICE,
        _ => 0,
    }
}

/// Everything wrong with a profile's items, against the database's templates.
fn check(profile: &Value, db: &Value) -> Vec<String> {
    let mut wrong = Vec::new();
    let items = profile["Inventory"]["items"].as_array().cloned().unwrap_or_default();
    let roots: Vec<&str> =
        ["equipment", "stash", "questRaidItems", "questStashItems", "sortingTable", "hideoutCustomizationStashId"]
            .iter()
            .filter_map(|r| profile["Inventory"][r].as_str())
            .collect();
    let mut by_id: HashMap<&str, &Value> = HashMap::new();
    for item in &items {
        let id = item["_id"].as_str().unwrap_or_default();
        if by_id.insert(id, item).is_some() {
            wrong.push(format!("duplicate id {id}"));
        }
    }
    let props = |tpl: &str| &db["templates"]["items"][tpl]["_props"];
    let mut cells: HashMap<(String, String, i64, i64), String> = HashMap::new();
    let mut slots: HashMap<(String, String), String> = HashMap::new();
    for item in &items {
        let id = item["_id"].as_str().unwrap_or_default();
        let tpl = item["_tpl"].as_str().unwrap_or_default();
        let n = item["upd"]["StackObjectsCount"].as_u64().unwrap_or(1);
        let max = props(tpl)["StackMaxSize"].as_u64().filter(|m| *m > 0).unwrap_or(u64::MAX);
        if !item["upd"]["StackObjectsCount"].is_null() && !item["upd"]["StackObjectsCount"].is_u64() || n < 1 || n > max
        {
            wrong.push(format!("item {id} holds {} units; {tpl} stacks to {max}", item["upd"]["StackObjectsCount"]));
        }
        if roots.contains(&id) {
            continue;
        }
        // Its chain of parents ends at a root.
        let (mut at, mut depth) = (item["parentId"].as_str(), 0);
        while let Some(parent) = at {
            if roots.contains(&parent) {
                break;
            }
            depth += 1;
            at = by_id.get(parent).and_then(|p| p["parentId"].as_str());
            if at.is_none() || depth > 64 {
                wrong.push(format!("item {id} is an orphan (its chain of parents stops at {parent})"));
                break;
            }
        }
        let (Some(parent), Some(slot)) = (item["parentId"].as_str(), item["slotId"].as_str()) else {
            wrong.push(format!("item {id} has no parentId or slotId"));
            continue;
        };
        let Some(parent_item) = by_id.get(parent) else {
            wrong.push(format!("item {id}'s parent {parent} is not in the profile"));
            continue;
        };
        let parent_props = props(parent_item["_tpl"].as_str().unwrap_or_default());
        let named = |kind: &str| parent_props[kind].as_array().and_then(|l| l.iter().find(|c| c["_name"] == slot));
        if let Some(grid) = named("Grids") {
            let (gw, gh) =
                (grid["_props"]["cellsH"].as_i64().unwrap_or(0), grid["_props"]["cellsV"].as_i64().unwrap_or(0));
            let location = &item["location"];
            let (Some(x), Some(y)) = (location["x"].as_i64(), location["y"].as_i64()) else {
                wrong.push(format!("item {id} lies in grid {slot} of {parent} without a location"));
                continue;
            };
            let side = |k: &str| props(tpl)[k].as_i64().filter(|v| *v > 0).unwrap_or(1);
            let rotated = location["r"] == "Vertical" || location["r"] == 1;
            let (w, h) = if rotated { (side("Height"), side("Width")) } else { (side("Width"), side("Height")) };
            if x < 0 || y < 0 || x + w > gw || y + h > gh {
                wrong
                    .push(format!("item {id} ({w}x{h} at {x},{y}) lies outside the {gw}x{gh} grid {slot} of {parent}"));
                continue;
            }
            for cx in x..x + w {
                for cy in y..y + h {
                    if let Some(other) = cells.insert((parent.to_owned(), slot.to_owned(), cx, cy), id.to_owned()) {
                        wrong.push(format!("items {id} and {other} overlap at ({cx},{cy}) in {slot} of {parent}"));
                    }
                }
            }
        } else if named("Slots").is_some() || named("StackSlots").is_some() {
            if let Some(other) = slots.insert((parent.to_owned(), slot.to_owned()), id.to_owned()) {
                wrong.push(format!("items {id} and {other} share slot {slot} of {parent}"));
            }
        } else {
            wrong.push(format!("item {id} lies in {slot:?}, which {parent}'s template does not have"));
        }
    }
    wrong
}

/// One player's state between batches.
struct Soaker {
    player: Player,
    dice: Dice,
    /// The profile as last seen, and the money it must hold.
    profile: Value,
    money: u64,
}

/// Counts of what happened, by generator name: (applied, refused).
type Tally = BTreeMap<&'static str, (u64, u64)>;

/// One batch of `soaker`'s, checked. Answers what each generator's actions did.
async fn play(
    mut soaker: Soaker,
    others: Arc<Vec<String>>,
    db: Arc<Value>,
    round: usize,
    seed: u64,
) -> (Soaker, Tally) {
    let mut tally = Tally::new();
    let items = soaker.profile["Inventory"]["items"].as_array().cloned().unwrap_or_default();
    let roots: Vec<String> =
        ["equipment", "stash", "questRaidItems", "questStashItems", "sortingTable", "hideoutCustomizationStashId"]
            .iter()
            .filter_map(|r| soaker.profile["Inventory"][r].as_str().map(str::to_owned))
            .collect();
    let view = View { profile: &soaker.profile, items: &items, roots: &roots, others: &others };
    let mut batch: Vec<(&'static str, Value)> = Vec::new();
    let size = 1 + soaker.dice.below(MAX_BATCH);
    for _ in 0..size * 4 {
        if batch.len() as u64 >= size {
            break;
        }
        let (name, generate) = GENERATORS[soaker.dice.below(GENERATORS.len() as u64) as usize];
        if let Some(action) = generate(&mut soaker.dice, &view) {
            batch.push((name, action));
        }
    }
    if batch.is_empty() {
        return (soaker, tally);
    }
    let answer = soaker.player.moving(batch.iter().map(|(_, a)| a.clone()).collect()).await;
    let context =
        || format!("seed {seed:#x}, round {round}, player {}: batch {batch:?}\nanswer {answer}", soaker.player.uid);
    assert_eq!(answer["err"], 0, "{}", context());
    let refused: HashSet<u64> =
        answer["data"]["warnings"].as_array().unwrap().iter().filter_map(|w| w["index"].as_u64()).collect();
    let mut cost = 0;
    for (index, (name, action)) in batch.iter().enumerate() {
        let entry = tally.entry(name).or_default();
        if refused.contains(&(index as u64)) {
            entry.1 += 1;
        } else {
            entry.0 += 1;
            cost += spent(action);
        }
    }
    let after = soaker.player.profile().await;
    let items = after["Inventory"]["items"].as_array().cloned().unwrap_or_default();
    let wrong = check(&after, &db);
    assert!(wrong.is_empty(), "{}\nthe profile is wrong:\n{}", context(), wrong.join("\n"));
    soaker.money = soaker.money.checked_sub(cost).unwrap_or_else(|| panic!("{}\nspent more than it had", context()));
    assert_eq!(money(&items), soaker.money, "{}\nmoney made or lost", context());
    if refused.len() == batch.len() {
        assert_eq!(after, soaker.profile, "{}\na batch that applied nothing changed the profile", context());
    }
    soaker.profile = after;
    (soaker, tally)
}

/// Every player's item ids but `me`'s.
fn others_of(soakers: &[Soaker], me: usize) -> Vec<String> {
    soakers
        .iter()
        .enumerate()
        .filter(|(n, _)| *n != me)
        .flat_map(|(_, s)| s.profile["Inventory"]["items"].as_array().cloned().unwrap_or_default())
        .filter_map(|i| i["_id"].as_str().map(str::to_owned))
        .collect()
}

/// Runs `rounds` rounds: each player's batch of a round runs beside the others'.
async fn rounds(
    soakers: Vec<Soaker>,
    range: std::ops::Range<usize>,
    db: &Arc<Value>,
    seed: u64,
    started: Instant,
    tally: &mut Tally,
) -> (Vec<Soaker>, usize) {
    let mut soakers = soakers;
    let mut done = 0;
    for round in range {
        if started.elapsed() > BUDGET {
            eprintln!("soak: the wall-time budget ({BUDGET:?}) ran out at round {round}");
            break;
        }
        let tasks: Vec<_> = soakers
            .iter()
            .enumerate()
            .map(|(n, _)| Arc::new(others_of(&soakers, n)))
            .collect::<Vec<_>>()
            .into_iter()
            .zip(std::mem::take(&mut soakers))
            .map(|(others, soaker)| tokio::spawn(play(soaker, others, db.clone(), round, seed)))
            .collect();
        for task in tasks {
            let (soaker, counts) = task.await.unwrap();
            soakers.push(soaker);
            for (name, (a, r)) in counts {
                let entry = tally.entry(name).or_default();
                entry.0 += a;
                entry.1 += r;
            }
        }
        done += 1;
    }
    (soakers, done)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_players_play_valid_and_lying_batches_across_a_restart_and_every_profile_stays_whole() {
    let seed = std::env::var("SOAK_SEED")
        .ok()
        .and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok())
        .unwrap_or(DEFAULT_SEED);
    let total: usize = std::env::var("SOAK_ROUNDS").ok().and_then(|s| s.parse().ok()).unwrap_or(ROUNDS);
    eprintln!("soak: seed {seed:#x} (SOAK_SEED=<hex> replays it), {SESSIONS} players, {total} rounds");
    let db = Arc::new(modhost_gamedb::database(10));
    let server =
        TestServer::builder().db_json(&db.to_string()).config(|c| c.builtin_mods = true).start().await.unwrap();
    let started = Instant::now();
    let mut soakers = Vec::new();
    for n in 0..SESSIONS {
        let session = format!("5000000000000000000000{n:02x}");
        let player = Player::new(server.addr, &session, &format!("Soaker{n}")).await;
        let profile = player.profile().await;
        assert_eq!(money(profile["Inventory"]["items"].as_array().unwrap()), START_MONEY);
        let dice = Dice(seed ^ (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        soakers.push(Soaker { player, dice, profile, money: START_MONEY });
    }
    let mut tally = Tally::new();
    let (soakers, first) = rounds(soakers, 0..total / 2, &db, seed, started, &mut tally).await;

    // Killed and started again: every profile is as last seen.
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let server = again.start().await.unwrap();
    let mut restarted = Vec::new();
    for mut soaker in soakers {
        soaker.player = Player { addr: server.addr, ..soaker.player };
        assert_eq!(soaker.player.profile().await, soaker.profile, "the restart changed a profile");
        restarted.push(soaker);
    }
    let (soakers, second) = rounds(restarted, total / 2..total, &db, seed, started, &mut tally).await;

    let (applied, refused) = tally.values().fold((0, 0), |(a, r), (x, y)| (a + x, r + y));
    eprintln!(
        "soak: {} rounds ({first} before the restart) in {:.1} s: {applied} actions applied, {refused} refused",
        first + second,
        started.elapsed().as_secs_f64()
    );
    for (name, (a, r)) in &tally {
        eprintln!("soak:   {name:<28} {a:>5} applied {r:>5} refused");
    }
    let rifles: usize = soakers
        .iter()
        .map(|s| s.profile["Inventory"]["items"].as_array().unwrap().iter().filter(|i| i["_tpl"] == RIFLE).count())
        .sum();
    eprintln!("soak: the players hold {rifles} rifles at the end");
    assert!(first + second >= total.min(10), "the soak ran too few rounds to test anything");
    assert!(applied > 50 && refused > 50, "the soak did too little: {applied} applied, {refused} refused");
}
