//! The emulator's other inventory actions and trading, over the wire: counts are conserved exactly,
//! every refusal is a warning that changes nothing, a purchase is all or nothing, and the per-session
//! lock keeps 50 concurrent buys from losing an update while other sessions run alongside.

use super::emulator::{A, B, Player, ROUBLES, emulator, move_to, stored_profile};
use modhost_tests::client::{Call, send};
use modhost_tests::gamedb::{self, RIFLE, STASH, TRADER};
use modhost_tests::{TestServer, guests};
use serde_json::{Value, json};

const OFFER: &str = "6000000000000000000000a1";
const PRICE: u64 = 25000;

/// The emulator on the generated database, changed by `edit` first.
async fn emulator_on(edit: impl FnOnce(&mut Value)) -> TestServer {
    let mut db = gamedb::database(10);
    edit(&mut db);
    TestServer::builder().db_json(&db.to_string()).config(|c| c.builtin_mods = true).start().await.unwrap()
}

fn split(item: &str, new: Option<&str>, to: (&str, i64, i64), count: Value) -> Value {
    let mut action = json!({"Action": "Split", "splitItem": item, "count": count,
        "container": {"id": to.0, "container": "hideout", "location": {"x": to.1, "y": to.2, "r": "Horizontal"}}});
    if let Some(new) = new {
        action["newItem"] = json!(new);
    }
    action
}

fn buy(offer: &str, count: u64, payment: &[(&str, u64)]) -> Value {
    let scheme: Vec<Value> = payment.iter().map(|(id, n)| json!({"id": id, "count": n})).collect();
    json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": offer,
           "count": count, "scheme_id": 0, "scheme_items": scheme})
}

/// Asserts `action` is refused with a reason and changes nothing the player owns.
async fn refused(p: &Player, what: &str, action: Value) {
    let before = p.items().await;
    let reason = p.act(action).await;
    assert!(reason.as_deref().is_some_and(|r| !r.is_empty()), "{what}: applied, not refused");
    assert_eq!(p.items().await, before, "{what}: refused ({reason:?}) but changed the inventory");
}

#[tokio::test]
async fn split_transfer_merge_and_remove_conserve_counts_within_stack_limits() {
    // Roubles stack to 450000 here, so merging back what was split can overflow.
    let server = emulator_on(|db| db["templates"]["items"][ROUBLES]["_props"]["StackMaxSize"] = json!(450000)).await;
    let p = Player::new(server.addr, A, "Stacker").await;
    let (roubles, stash) = (p.roubles.as_str(), p.stash.as_str());
    let new = "0000000000000000000000b1";

    refused(&p, "split of 0", split(roubles, Some(new), (stash, 1, 0), json!(0))).await;
    refused(&p, "negative split", split(roubles, Some(new), (stash, 1, 0), json!(-5))).await;
    refused(&p, "split of the whole stack", split(roubles, Some(new), (stash, 1, 0), json!(500000))).await;
    refused(&p, "oversized split", split(roubles, Some(new), (stash, 1, 0), json!(900000))).await;
    refused(&p, "split onto a taken place", split(roubles, Some(new), (stash, 0, 0), json!(10))).await;
    refused(&p, "split to an existing id", split(roubles, Some(&p.pockets), (stash, 1, 0), json!(10))).await;
    refused(&p, "split out of the grid", split(roubles, Some(new), (stash, 10, 0), json!(10))).await;

    let answer = p.moving(vec![split(roubles, Some(new), (stash, 1, 0), json!(100000))]).await;
    let items = &answer["data"]["profileChanges"][&p.uid]["items"];
    assert_eq!(items["new"][0]["_id"], new, "{answer}");
    assert_eq!(items["new"][0]["upd"]["StackObjectsCount"], 100000);
    assert_eq!(items["change"][0]["upd"]["StackObjectsCount"], 400000);
    assert_eq!(p.units(ROUBLES).await, 500000);

    let transfer = |from: &str, to: &str, n: u64| json!({"Action": "Transfer", "item": from, "with": to, "count": n});
    let merge = |from: &str, to: &str| json!({"Action": "Merge", "item": from, "with": to});
    assert_eq!(p.act(transfer(new, roubles, 50000)).await, None);
    assert_eq!(p.item(roubles).await["upd"]["StackObjectsCount"], 450000);
    refused(&p, "transfer past StackMaxSize", transfer(new, roubles, 1)).await;
    refused(&p, "merge past StackMaxSize", merge(new, roubles)).await;
    refused(&p, "transfer of more than the stack", transfer(new, roubles, 50001)).await;
    refused(&p, "merge into itself", merge(new, new)).await;
    refused(&p, "merge of different templates", merge(&p.pockets, roubles)).await;
    assert_eq!(p.act(transfer(roubles, new, 10000)).await, None);
    assert_eq!(
        p.act(merge(new, roubles)).await,
        Some("the stack would hold 500000; a stack of 5449016a4bdc2d6f028b456f holds at most 450000".into())
    );
    assert_eq!(p.units(ROUBLES).await, 500000, "every refusal and transfer conserved the money");

    let answer = p.moving(vec![json!({"Action": "Remove", "item": new})]).await;
    assert_eq!(answer["data"]["profileChanges"][&p.uid]["items"]["del"], json!([{"_id": new}]), "{answer}");
    assert_eq!(p.units(ROUBLES).await, 440000);
    refused(&p, "removing a root container", json!({"Action": "Remove", "item": stash})).await;
    refused(&p, "removing what is not there", json!({"Action": "Remove", "item": new})).await;
}

#[tokio::test]
async fn fold_toggle_tag_and_unknown_actions() {
    let server = emulator().await;
    let p = Player::new(server.addr, A, "Tagger").await;
    refused(&p, "folding roubles", json!({"Action": "Fold", "item": p.roubles, "value": true})).await;
    refused(&p, "a toggle without a value", json!({"Action": "Toggle", "item": p.roubles})).await;
    refused(
        &p,
        "a 40-character tag",
        json!({"Action": "Tag", "item": p.stash, "TagName": "x".repeat(40), "TagColor": 1}),
    )
    .await;
    refused(&p, "an unknown action", json!({"Action": "Juggle", "item": p.roubles})).await;
    refused(&p, "no action", json!({"item": p.roubles})).await;

    let answer = p
        .moving(vec![
            json!({"Action": "Tag", "item": p.pockets, "TagName": "loot", "TagColor": 3}),
            json!({"Action": "Fold", "item": p.roubles, "value": true}),
            json!({"Action": "Toggle", "item": p.pockets, "value": true}),
        ])
        .await;
    let warnings = answer["data"]["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{answer}");
    assert_eq!(warnings[0]["index"], 1, "the fold is the refused one: {answer}");
    let pockets = p.item(&p.pockets).await;
    assert_eq!(pockets["upd"]["Tag"], json!({"Name": "loot", "Color": 3}));
    assert_eq!(pockets["upd"]["Togglable"], json!({"On": true}));
}

#[tokio::test]
async fn buying_takes_the_exact_price_and_places_first_fit() {
    let server = emulator().await;
    let p = Player::new(server.addr, A, "Buyer").await;
    let roubles = p.roubles.as_str();
    let answer = p.moving(vec![buy(OFFER, 3, &[(roubles, 3 * PRICE)])]).await;
    assert_eq!(answer["data"]["warnings"], json!([]), "{answer}");
    let changes = &answer["data"]["profileChanges"][&p.uid];
    assert_eq!(changes["items"]["new"].as_array().unwrap().len(), 3, "{answer}");
    assert_eq!(changes["items"]["change"][0]["upd"]["StackObjectsCount"], 500000 - 3 * PRICE);
    assert_eq!(changes["traderRelations"][TRADER]["salesSum"], 3 * PRICE);

    assert_eq!(p.units(ROUBLES).await, 500000 - 3 * PRICE);
    let rifles = p.of(RIFLE).await;
    let places: Vec<&Value> = rifles.iter().map(|r| &r["location"]).collect();
    // 4x2 rifles beside the 1x1 roubles at (0,0) in a 10-column stash, row by row.
    let at = |x: i64, y: i64| json!({"x": x, "y": y, "r": "Horizontal"});
    assert_eq!(places, [&at(1, 0), &at(5, 0), &at(0, 2)]);
    assert!(rifles.iter().all(|r| r["parentId"] == p.stash.as_str() && r["slotId"] == "hideout"));

    let sent = [
        ("an unknown offer", buy("ffffffffffffffffffffffff", 1, &[(roubles, PRICE)])),
        ("a count of 0", buy(OFFER, 0, &[(roubles, PRICE)])),
        ("a short payment", buy(OFFER, 1, &[(roubles, PRICE - 1)])),
        ("a payment short for the count", buy(OFFER, 2, &[(roubles, PRICE)])),
        ("no payment", buy(OFFER, 1, &[])),
        ("a payment from a missing stack", buy(OFFER, 1, &[("eeeeeeeeeeeeeeeeeeeeeeee", PRICE)])),
        ("a payment larger than the stack", buy(OFFER, 1, &[(roubles, 500000)])),
        ("a stack named twice", buy(OFFER, 1, &[(roubles, PRICE / 2), (roubles, PRICE / 2)])),
        ("a payment of the wrong template", buy(OFFER, 1, &[(roubles, PRICE), (&p.pockets, 1)])),
        ("more than the stock", buy(OFFER, 98, &[(roubles, 98 * PRICE)])),
    ];
    for (what, action) in sent {
        refused(&p, what, action).await;
    }
    let mut unknown_trader = buy(OFFER, 1, &[(roubles, PRICE)]);
    unknown_trader["tid"] = json!("ffffffffffffffffffffffff");
    refused(&p, "an unknown trader", unknown_trader).await;
}

#[tokio::test]
async fn stock_and_loyalty_are_respected() {
    let server = emulator_on(|db| {
        let assort = &mut db["traders"][TRADER]["assort"];
        assort["items"][0]["upd"]["StackObjectsCount"] = json!(2);
        let gated = "6000000000000000000000a2";
        let items = assort["items"].as_array_mut().unwrap();
        items.push(json!({"_id": gated, "_tpl": RIFLE, "parentId": "hideout", "slotId": "hideout"}));
        assort["barter_scheme"][gated] = json!([[{"count": 1, "_tpl": ROUBLES}]]);
        assort["loyal_level_items"][gated] = json!(2);
    })
    .await;
    let p = Player::new(server.addr, A, "Regular").await;
    let roubles = p.roubles.as_str();
    refused(&p, "3 of a stock of 2", buy(OFFER, 3, &[(roubles, 3 * PRICE)])).await;
    assert_eq!(p.act(buy(OFFER, 2, &[(roubles, 2 * PRICE)])).await, None);
    refused(&p, "one more once sold out", buy(OFFER, 1, &[(roubles, PRICE)])).await;
    refused(&p, "an offer above the player's loyalty", buy("6000000000000000000000a2", 1, &[(roubles, 1)])).await;
    assert_eq!(p.of(RIFLE).await.len(), 2);
    assert_eq!(p.units(ROUBLES).await, 500000 - 2 * PRICE);
}

#[tokio::test]
async fn no_room_in_the_stash_refuses_the_whole_purchase() {
    // A 3x5 stash: a 4x2 rifle only fits turned (2x4), beside the roubles at (0,0), and only once.
    let server = emulator_on(|db| {
        db["templates"]["items"][STASH]["_props"]["Grids"][0]["_props"] = json!({"cellsH": 3, "cellsV": 5});
    })
    .await;
    let p = Player::new(server.addr, A, "Hoarder").await;
    let roubles = p.roubles.as_str();
    refused(&p, "two rifles with room for one", buy(OFFER, 2, &[(roubles, 2 * PRICE)])).await;
    assert_eq!(p.act(buy(OFFER, 1, &[(roubles, PRICE)])).await, None);
    let rifle = &p.of(RIFLE).await[0];
    assert_eq!(rifle["location"], json!({"x": 1, "y": 0, "r": "Vertical"}));
    refused(&p, "a rifle with no room left", buy(OFFER, 1, &[(roubles, PRICE)])).await;
    assert_eq!(p.units(ROUBLES).await, 500000 - PRICE);
    // The placed rifle's turned footprint is what later moves are checked against.
    refused(&p, "a move onto the turned rifle", move_to(roubles, &p.stash, "hideout", 2, 3)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_buys_on_one_session_lose_no_update() {
    let server = emulator().await;
    let p = Player::new(server.addr, A, "Rush").await;
    let action = buy(OFFER, 1, &[(&p.roubles, PRICE)]);
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let (addr, action) = (p.addr, action.clone());
            tokio::spawn(async move {
                let body = json!({"data": [action], "tm": 1}).to_string();
                send(addr, &Call::post("/client/game/profile/items/moving", body.as_bytes()).session(A)).await
            })
        })
        .collect();
    let mut applied = 0;
    for task in tasks {
        let answer = task.await.unwrap().unwrap().json();
        assert_eq!(answer["err"], 0, "{answer}");
        if answer["data"]["warnings"] == json!([]) {
            applied += 1;
        }
    }
    // 500000 roubles pay for exactly 20; every other buy is refused, and nothing is lost or made.
    assert_eq!(applied, 20);
    assert_eq!(p.of(RIFLE).await.len(), applied);
    assert_eq!(p.units(ROUBLES).await, 500000 - PRICE * applied as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moves_on_two_sessions_run_in_parallel() {
    let server = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "")
        .config(|c| c.builtin_mods = true)
        .start()
        .await
        .unwrap();
    let (a, b) = (Player::new(server.addr, A, "Left").await, Player::new(server.addr, B, "Right").await);
    // Session A is busy for 3 s (within the 5 s call deadline); B's moves must all finish meanwhile, and then A's own.
    let addr = server.addr;
    let busy = tokio::spawn(async move { send(addr, &Call::get("/fx/sleep/3000").session(A)).await });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    for x in 1..=10 {
        assert_eq!(b.act(move_to(&b.roubles, &b.stash, "hideout", x % 10, x)).await, None);
    }
    assert!(!busy.is_finished(), "B's moves waited for session A's request");
    let both = [&a, &b].map(|p| async move {
        for x in 1..=10 {
            assert_eq!(p.act(move_to(&p.roubles, &p.stash, "hideout", x % 10, 20 + x)).await, None);
        }
    });
    let [left, right] = both;
    tokio::join!(left, right);
    assert_eq!(busy.await.unwrap().unwrap().status, 200);
    for p in [&a, &b] {
        assert_eq!(p.item(&p.roubles).await["location"], json!({"x": 0, "y": 30, "r": "Horizontal"}));
        assert_eq!(p.units(ROUBLES).await, 500000);
    }
}

/// An offer of a stacking template, added to the trader by the random-sequence test.
const BOXES: &str = "6000000000000000000000a3";

/// A small deterministic generator (xorshift64*), so a failing sequence can be replayed.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }

    fn pick<'a>(&mut self, from: &'a [Value]) -> &'a Value {
        &from[self.below(from.len() as u64) as usize]
    }

    fn id(&mut self) -> String {
        format!("{:012x}{:012x}", self.below(1 << 48), self.below(1 << 48))
    }
}

/// The emulator's indexes as they must be, rebuilt here from the items alone with the rules its
/// `shape.rs` documents (and independent of its code): children by parent, the rows a placed item
/// covers, and stacks by template. Empty maps are dropped (they mean nothing).
fn rebuilt_indexes(items: &serde_json::Map<String, Value>, db: &Value) -> Value {
    let props = |tpl: &str| &db["templates"]["items"][tpl]["_props"];
    let mut index = json!({"children": {}, "rows": {}, "stacks": {}});
    for (id, item) in items {
        let tpl = item["_tpl"].as_str().unwrap();
        if let Some(parent) = item["parentId"].as_str() {
            let slot = item["slotId"].as_str().unwrap_or_default();
            index["children"][parent][id] = json!(slot);
            let location = &item["location"];
            if let (Some(slot), Some(x), Some(y)) =
                (item["slotId"].as_str(), location["x"].as_i64(), location["y"].as_i64())
            {
                let side = |k: &str| props(tpl)[k].as_i64().filter(|v| *v > 0).unwrap_or(1).min(64);
                let turned = location["r"] == "Vertical" || location["r"] == 1;
                let (w, h) = if turned { (side("Height"), side("Width")) } else { (side("Width"), side("Height")) };
                for row in y..y + h {
                    index["rows"][parent][slot][row.to_string()][id] = json!([x, w]);
                }
            }
        }
        if props(tpl)["StackMaxSize"].as_u64() != Some(1) {
            index["stacks"][tpl][id] = json!(1);
        }
    }
    without_empty_maps(index)
}

fn without_empty_maps(value: Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .into_iter()
                .map(|(k, v)| (k, without_empty_maps(v)))
                .filter(|(_, v)| v.as_object().is_none_or(|m| !m.is_empty()))
                .collect(),
        ),
        other => other,
    }
}

#[tokio::test]
async fn the_indexes_stay_consistent_over_a_random_sequence_of_actions() {
    let mut db = gamedb::database(10);
    // A short stash, so places collide often and buying runs out of room; and an offer of boxes that
    // stack by 4 (generated template 3, 4x1).
    db["templates"]["items"][STASH]["_props"]["Grids"][0]["_props"]["cellsV"] = json!(8);
    let assort = &mut db["traders"][TRADER]["assort"];
    assort["items"].as_array_mut().unwrap().push(
        json!({"_id": BOXES, "_tpl": gamedb::hex_id(3), "parentId": "hideout", "slotId": "hideout", "upd": {"UnlimitedCount": true}}),
    );
    assort["barter_scheme"][BOXES] = json!([[{"count": 10, "_tpl": ROUBLES}]]);
    assort["loyal_level_items"][BOXES] = json!(1);
    let server =
        TestServer::builder().db_json(&db.to_string()).config(|c| c.builtin_mods = true).start().await.unwrap();
    let p = Player::new(server.addr, A, "Shuffler").await;
    let roots: Vec<Value> = {
        let profile = p.profile().await;
        ["equipment", "stash", "questRaidItems", "questStashItems", "sortingTable"]
            .map(|k| profile["Inventory"][k].clone())
            .to_vec()
    };
    let mut dice = Dice(0x9e37_79b9_7f4a_7c15);
    let (mut applied, mut refused) = (0, 0);
    for _ in 0..60 {
        let items = p.items().await;
        let movable: Vec<Value> = items.iter().filter(|i| !roots.contains(&i["_id"])).cloned().collect();
        // Stacks to split, and what may be removed: never the last of the money, so buying goes on.
        let stacks: Vec<Value> =
            movable.iter().filter(|i| i["upd"]["StackObjectsCount"].as_u64() > Some(1)).cloned().collect();
        let junk: Vec<Value> = movable.iter().filter(|i| i["_tpl"] != ROUBLES).cloned().collect();
        let place = |dice: &mut Dice| {
            let r = if dice.below(3) == 0 { "Vertical" } else { "Horizontal" };
            json!({"id": p.stash, "container": "hideout",
                   "location": {"x": dice.below(10), "y": dice.below(8), "r": r}})
        };
        let mut batch = Vec::new();
        for _ in 0..1 + dice.below(4) {
            // Everything may be gone (removed, merged away): then only buying remains.
            let Some(item) = (!movable.is_empty()).then(|| dice.pick(&movable)["_id"].clone()) else {
                batch.push(buy(OFFER, 1, &[(&p.roubles, PRICE)]));
                continue;
            };
            let other = dice.pick(&items)["_id"].clone();
            let action = match dice.below(11) {
                0..=2 => json!({"Action": "Move", "item": item, "to": place(&mut dice)}),
                3 => json!({"Action": "Move", "item": item, "to": {"id": other, "container": "main"}}),
                4 | 5 if !stacks.is_empty() => {
                    json!({"Action": "Split", "splitItem": dice.pick(&stacks)["_id"], "newItem": dice.id(),
                                "container": place(&mut dice), "count": 1 + dice.below(3)})
                }
                6 => json!({"Action": "Merge", "item": item, "with": other}),
                7 => json!({"Action": "Transfer", "item": item, "with": other, "count": 1 + dice.below(2)}),
                8 if !junk.is_empty() && dice.below(3) == 0 => {
                    json!({"Action": "Remove", "item": dice.pick(&junk)["_id"]})
                }
                4 | 5 | 8 | 9 => json!({"Action": "Tag", "item": item, "TagName": "t", "TagColor": dice.below(5)}),
                _ => {
                    // A rifle, or a few of a stacking template (topping up the loose stacks first).
                    let (offer, each, count) =
                        if dice.below(2) == 0 { (OFFER, PRICE, 1) } else { (BOXES, 10, 1 + dice.below(5)) };
                    let payer = items
                        .iter()
                        .find(|i| i["_tpl"] == ROUBLES && i["upd"]["StackObjectsCount"].as_u64() >= Some(each * count))
                        .map_or(p.roubles.clone(), |i| i["_id"].as_str().unwrap().to_owned());
                    buy(offer, count, &[(&payer, each * count)])
                }
            };
            batch.push(action);
        }
        let sent = batch.len();
        let answer = p.moving(batch).await;
        assert_eq!(answer["err"], 0, "{answer}");
        let warned = answer["data"]["warnings"].as_array().unwrap().len();
        refused += warned;
        applied += sent - warned;
    }
    eprintln!("random sequence: {applied} actions applied, {refused} refused");
    assert!(applied > 40 && refused > 20, "the sequence did too little to test: {applied} applied, {refused} refused");

    let listed = p.items().await;
    let root = server.root().to_owned();
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let stored = stored_profile(&root, &p.uid);
    let items = stored["Inventory"]["items"].as_object().unwrap();
    assert_eq!(items.values().cloned().collect::<Vec<_>>(), listed, "profile/list is not the stored items");
    let mut index = stored["_modhost"].clone();
    assert_eq!(index["shape"], 1);
    index.as_object_mut().unwrap().shift_remove("shape");
    // Who owns the profile (`boot/profiles.rs`) is no function of its items.
    index.as_object_mut().unwrap().shift_remove("owner");
    assert_eq!(without_empty_maps(index), rebuilt_indexes(items, &db), "the indexes drifted from the items");
    drop(again);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batches_on_one_profile_from_two_sessions_apply_whole_or_conflict_whole() {
    // Two sessions play one profile, so their batches run at once (the lock is per session). Each
    // batch splits one rouble off into a new stack: a batch that was applied over another's change
    // would make money (both take 1 from the same count), a half-applied one would lose it. No route
    // binds a second session to a profile (`ownership.rs`), so the binding is written into the store
    // as a tool could: the profile's compare-and-set must hold whoever writes beside the player.
    let server = emulator().await;
    let p = Player::new(server.addr, A, "Twins").await;
    let binding = json!({"uid": p.uid}).to_string();
    server.app.store.set("emulator", &format!("session.{B}"), binding.as_bytes()).unwrap();
    let tasks: Vec<_> = [(A, 10), (B, 40)]
        .into_iter()
        .map(|(session, first_row)| {
            let (addr, roubles, stash) = (p.addr, p.roubles.clone(), p.stash.clone());
            tokio::spawn(async move {
                let (mut applied, mut conflicts) = (0u64, 0u64);
                // At least 60 batches, and on until one met the other's change (28 rows of places
                // each, so at most 280).
                for n in 0..280i64 {
                    if n >= 60 && conflicts > 0 {
                        break;
                    }
                    let to = (stash.as_str(), n % 10, first_row + n / 10);
                    let body = json!({"data": [split(&roubles, None, to, json!(1))], "tm": 1}).to_string();
                    let call = Call::post("/client/game/profile/items/moving", body.as_bytes()).session(session);
                    let answer = send(addr, &call).await.unwrap().json();
                    match answer["err"].as_i64() {
                        Some(0) if answer["data"]["warnings"] == json!([]) => applied += 1,
                        Some(1) => {
                            assert!(answer["errmsg"].as_str().unwrap().contains("nothing was applied"), "{answer}");
                            conflicts += 1;
                        }
                        _ => panic!("neither applied nor a conflict: {answer}"),
                    }
                }
                (applied, conflicts)
            })
        })
        .collect();
    let (mut applied, mut conflicts) = (0, 0);
    for task in tasks {
        let (a, c) = task.await.unwrap();
        applied += a;
        conflicts += c;
    }
    eprintln!("two sessions on one profile: {applied} batches applied, {conflicts} conflicts");
    assert!(conflicts > 0, "the batches never overlapped: the test proved nothing");
    let stacks = p.of(ROUBLES).await;
    assert_eq!(stacks.len() as u64, 1 + applied, "a stack per applied batch, and only those");
    assert_eq!(p.units(ROUBLES).await, 500000, "money made or lost");
    assert_eq!(p.item(&p.roubles).await["upd"]["StackObjectsCount"], 500000 - applied);
}
