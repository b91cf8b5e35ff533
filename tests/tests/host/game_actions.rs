//! Every inventory action outside the hideout over the wire (`items/moving`), as a player meets them:
//! each applied once as the client sends it, and each of its refusals a warning that changes nothing in
//! the profile. The first two tests are the placement holes of issue 30, which `main` applied.

use crate::emulator::{A, B, Player, ROUBLES, move_to};
use modhost_gamedb::inventory::{
    LOOT_BOX, LOOT_BOX_REWARDS, MAP, SUIT_LOWER, SUIT_OFFER, SUIT_OFFER_LOCKED, SUIT_PRICE, SUIT_UPPER,
};
use modhost_gamedb::{RIFLE, TRADER, hex_id};
use modhost_tests::TestServer;
use serde_json::{Value, json};

const OFFER: &str = "6000000000000000000000a1";
const PRICE: u64 = 25000;
/// SPT's system sender (the dialogue of system messages).
const SYSTEM: &str = "59e7125688a45068a6249071";

/// The emulator on the generated database, changed by `edit` first.
async fn server_with(edit: impl FnOnce(&mut Value)) -> TestServer {
    let mut db = modhost_gamedb::database(10);
    edit(&mut db);
    TestServer::builder().db_json(&db.to_string()).config(|c| c.builtin_mods = true).start().await.unwrap()
}

async fn server() -> TestServer {
    server_with(|_| {}).await
}

/// Asserts `action` is refused with a reason and changes nothing in the profile.
async fn refused(p: &Player, what: &str, action: Value) -> String {
    let before = p.profile().await;
    let reason = p.act(action).await;
    assert!(reason.as_deref().is_some_and(|r| !r.is_empty()), "{what}: applied, not refused");
    assert_eq!(p.profile().await, before, "{what}: refused ({reason:?}) but changed the profile");
    reason.unwrap()
}

/// Asserts `action` applies; answers the batch's answer for this player (`profileChanges.<uid>`).
async fn applied(p: &Player, what: &str, action: Value) -> Value {
    let answer = p.moving(vec![action]).await;
    assert_eq!(answer["data"]["warnings"], json!([]), "{what}: {answer}");
    answer["data"]["profileChanges"][&p.uid].clone()
}

/// Writes `extra` items and `members` into the player's stored profile, as a tool would: the profile
/// goes back in SPT's shape (the items a list, the indexes dropped but its owner), and the game
/// converts it on its next touch, indexes rebuilt.
fn give(server: &TestServer, p: &Player, extra: Vec<Value>, members: Value) {
    let key = format!("profile.{}", p.uid);
    let bytes = server.app.store.get("emulator", &key).unwrap().unwrap();
    let mut profile: Value = serde_json::from_slice(&bytes).unwrap();
    let mut items: Vec<Value> = profile["Inventory"]["items"].as_object().unwrap().values().cloned().collect();
    items.extend(extra);
    profile["Inventory"]["items"] = json!(items);
    let owner = profile["_modhost"]["owner"].clone();
    profile["_modhost"] = if owner.is_null() { json!({}) } else { json!({"owner": owner}) };
    for (member, value) in members.as_object().unwrap() {
        profile[member] = value.clone();
    }
    server.app.store.set("emulator", &key, profile.to_string().as_bytes()).unwrap();
}

/// An item of `tpl` loose in the stash at `(x, y)`.
fn loose(id: &str, tpl: &str, stash: &str, x: i64, y: i64) -> Value {
    json!({"_id": id, "_tpl": tpl, "parentId": stash, "slotId": "hideout",
           "location": {"x": x, "y": y, "r": "Horizontal"}, "upd": {"StackObjectsCount": 1}})
}

fn buy(count: u64, roubles: &str) -> Value {
    json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": OFFER,
           "count": count, "scheme_id": 0, "scheme_items": [{"id": roubles, "count": count * PRICE}]})
}

/// `location.y = 9223372036854775807` used to overflow the grid check (`y + h` wrapped negative) and the
/// item was placed far outside the 10x68 stash.
#[tokio::test]
async fn a_move_or_split_to_the_largest_coordinates_is_refused() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Huge").await;
    let (roubles, stash) = (p.roubles.as_str(), p.stash.as_str());
    for (x, y) in [(0, i64::MAX), (i64::MAX, 0), (i64::MAX, i64::MAX), (i64::MIN, 0), (9, i64::MAX - 1)] {
        refused(&p, &format!("a move to ({x},{y})"), move_to(roubles, stash, "hideout", x, y)).await;
        let split = json!({"Action": "Split", "splitItem": roubles, "count": 1,
            "container": {"id": stash, "container": "hideout", "location": {"x": x, "y": y, "r": "Horizontal"}}});
        refused(&p, &format!("a split to ({x},{y})"), split).await;
    }
    let vertical = json!({"Action": "Move", "item": roubles,
        "to": {"id": stash, "container": "hideout", "location": {"x": 0, "y": i64::MAX, "r": "Vertical"}}});
    refused(&p, "a rotated move to the last row", vertical).await;
    // A number past i64 is no location at all.
    let past = json!({"Action": "Move", "item": roubles,
        "to": {"id": stash, "container": "hideout", "location": {"x": 0, "y": 18446744073709551615u64}}});
    refused(&p, "a move to y = u64::MAX", past).await;
    assert_eq!(p.act(move_to(roubles, stash, "hideout", 9, 67)).await, None, "the last cell is still a place");
}

/// A `Move` into a container its parent's template does not have (`bogus`, `Hideout` for `hideout`)
/// used to apply: the item then lay in no grid the client could show.
#[tokio::test]
async fn a_move_into_a_container_the_parent_does_not_have_is_refused() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Bogus").await;
    let (roubles, stash, pockets) = (p.roubles.as_str(), p.stash.as_str(), p.pockets.as_str());
    let equipment = p.profile().await["Inventory"]["equipment"].as_str().unwrap().to_owned();
    let reason = refused(&p, "a bogus grid", move_to(roubles, stash, "bogus", 1, 1)).await;
    assert!(reason.contains("no grid or slot named \"bogus\""), "{reason}");
    refused(&p, "the grid's name in another case", move_to(roubles, stash, "Hideout", 1, 1)).await;
    refused(&p, "a slot of the equipment that does not exist", move_to(roubles, &equipment, "Trunk", 0, 0)).await;
    let slot =
        |item: &str, slot: &str| json!({"Action": "Move", "item": item, "to": {"id": equipment, "container": slot}});
    let reason = refused(&p, "roubles into the weapon slot", slot(roubles, "FirstPrimaryWeapon")).await;
    assert!(reason.contains("does not take"), "{reason}");
    refused(&p, "roubles into the taken pockets slot", slot(roubles, "Pockets")).await;
    refused(
        &p,
        "a grid place without a location",
        json!({"Action": "Move", "item": roubles, "to": {"id": stash, "container": "hideout"}}),
    )
    .await;
    refused(&p, "a grid the pockets do not have", move_to(roubles, pockets, "main", 0, 0)).await;

    // What the templates do have: the pockets' grids, the weapon slot for a rifle (one a slot, with no
    // grid location kept), the sorting table's grid.
    assert_eq!(p.act(move_to(roubles, pockets, "pocket2", 0, 0)).await, None);
    assert_eq!(p.act(buy(2, roubles)).await, None);
    let rifles: Vec<String> = p.of(RIFLE).await.iter().map(|r| r["_id"].as_str().unwrap().to_owned()).collect();
    let answer = applied(
        &p,
        "a rifle into the weapon slot",
        json!({"Action": "Move", "item": rifles[0],
        "to": {"id": equipment, "container": "FirstPrimaryWeapon", "location": {"x": 0, "y": 0, "r": "Horizontal"}}}),
    )
    .await;
    let moved = &answer["items"]["change"][0];
    assert_eq!(moved["slotId"], "FirstPrimaryWeapon", "{answer}");
    assert!(moved.get("location").is_none(), "a slot's item keeps no grid location: {moved}");
    let reason = refused(&p, "a second rifle into the taken slot", slot(&rifles[1], "FirstPrimaryWeapon")).await;
    assert!(reason.contains("is taken by"), "{reason}");
    let table = p.profile().await["Inventory"]["sortingTable"].as_str().unwrap().to_owned();
    assert_eq!(
        p.act(move_to(&rifles[1], &table, "hideout", 6, 44)).await,
        Some("a 4x2 item at (6,44) does not fit the 10x45 grid".into())
    );
    assert_eq!(p.act(move_to(&rifles[1], &table, "hideout", 6, 43)).await, None);
}

#[tokio::test]
async fn swap_and_apply_inventory_changes_trade_places_checked() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Swapper").await;
    let other = Player::new(server.addr, B, "Other").await;
    let (roubles, stash) = (p.roubles.as_str(), p.stash.as_str());
    assert_eq!(p.act(buy(1, roubles)).await, None);
    let rifle = p.of(RIFLE).await[0]["_id"].as_str().unwrap().to_owned();
    // Roubles at (0,0) 1x1, the rifle at (1,0) 4x2: they trade places.
    let swap = |to: (i64, i64), to2: (i64, i64)| {
        json!({"Action": "Swap", "item": roubles, "item2": rifle,
               "to": {"id": stash, "container": "hideout", "location": {"x": to.0, "y": to.1, "r": "Horizontal"}},
               "to2": {"id": stash, "container": "hideout", "location": {"x": to2.0, "y": to2.1, "r": "Horizontal"}}})
    };
    refused(&p, "a swap whose places overlap", swap((1, 0), (0, 0))).await;
    refused(&p, "a swap out of the grid", swap((1, 0), (7, 0))).await;
    refused(
        &p,
        "a swap with itself",
        json!({"Action": "Swap", "item": roubles, "item2": roubles, "to": {}, "to2": {}}),
    )
    .await;
    refused(&p, "a swap with another player's item", json!({"Action": "Swap", "item": roubles, "item2": other.roubles,
        "to": {"id": stash, "container": "hideout", "location": {"x": 5, "y": 5}}, "to2": {"id": stash, "container": "hideout", "location": {"x": 0, "y": 0}}})).await;
    let answer = applied(&p, "a swap", swap((1, 0), (2, 0))).await;
    assert_eq!(answer["items"]["change"].as_array().unwrap().len(), 2, "{answer}");
    assert_eq!(p.item(roubles).await["location"], json!({"x": 1, "y": 0, "r": "Horizontal"}));
    assert_eq!(p.item(&rifle).await["location"], json!({"x": 2, "y": 0, "r": "Horizontal"}));

    let change = |id: &str, x: i64, y: i64| json!({"_id": id, "parentId": stash, "slotId": "hideout", "location": {"x": x, "y": y, "r": "Horizontal"}});
    let sort = |changed: Vec<Value>| json!({"Action": "ApplyInventoryChanges", "changedItems": changed});
    refused(&p, "a sort that overlaps", sort(vec![change(roubles, 0, 0), change(&rifle, 0, 0)])).await;
    refused(&p, "a sort naming an item twice", sort(vec![change(roubles, 0, 0), change(roubles, 0, 5)])).await;
    refused(&p, "a sort naming a new item", sort(vec![change("0000000000000000000000c1", 0, 9)])).await;
    refused(&p, "a sort naming another player's item", sort(vec![change(&other.roubles, 0, 9)])).await;
    refused(&p, "a sort out of the grid", sort(vec![change(roubles, 0, i64::MAX)])).await;
    refused(
        &p,
        "a sort into a bogus container",
        sort(vec![json!({"_id": roubles, "parentId": stash, "slotId": "bogus"})]),
    )
    .await;
    refused(&p, "a sort moving the stash", sort(vec![change(stash, 0, 0)])).await;
    let answer = applied(&p, "a sort", sort(vec![change(&rifle, 0, 0), change(roubles, 0, 2)])).await;
    assert_eq!(answer["items"]["change"].as_array().unwrap().len(), 2, "{answer}");
    assert_eq!(p.item(roubles).await["location"], json!({"x": 0, "y": 2, "r": "Horizontal"}));
    assert_eq!(p.units(ROUBLES).await, 500_000 - PRICE, "a sort changes no count");
}

#[tokio::test]
async fn bind_unbind_favorites_and_pin_lock() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Binder").await;
    let other = Player::new(server.addr, B, "Other").await;
    let roubles = p.roubles.as_str();
    refused(&p, "binding another player's item", json!({"Action": "Bind", "item": other.roubles, "index": "Item4"}))
        .await;
    refused(&p, "binding a root container", json!({"Action": "Bind", "item": p.stash, "index": "Item4"})).await;
    refused(&p, "binding to a long slot name", json!({"Action": "Bind", "item": roubles, "index": "x".repeat(40)}))
        .await;
    applied(&p, "a bind", json!({"Action": "Bind", "item": roubles, "index": "Item4"})).await;
    applied(&p, "the same item bound elsewhere", json!({"Action": "Bind", "item": roubles, "index": "Item5"})).await;
    assert_eq!(p.profile().await["Inventory"]["fastPanel"], json!({"Item5": roubles}));
    refused(
        &p,
        "unbinding a slot that holds another item",
        json!({"Action": "Unbind", "item": p.pockets, "index": "Item5"}),
    )
    .await;
    applied(&p, "an unbind", json!({"Action": "Unbind", "item": roubles, "index": "Item5"})).await;
    assert_eq!(p.profile().await["Inventory"]["fastPanel"], json!({}));

    refused(
        &p,
        "a favourite that is not the player's",
        json!({"Action": "SetFavoriteItems", "items": [other.roubles]}),
    )
    .await;
    refused(&p, "a favourite named twice", json!({"Action": "SetFavoriteItems", "items": [roubles, roubles]})).await;
    let many: Vec<&str> = vec![roubles; 65];
    refused(&p, "65 favourites", json!({"Action": "SetFavoriteItems", "items": many})).await;
    applied(&p, "favourites", json!({"Action": "SetFavoriteItems", "items": [roubles, p.pockets], "timestamp": 1}))
        .await;
    assert_eq!(p.profile().await["Inventory"]["favoriteItems"], json!([roubles, p.pockets]));

    refused(&p, "an unknown pin state", json!({"Action": "PinLock", "Item": roubles, "State": "Glued"})).await;
    refused(
        &p,
        "pinning another player's item",
        json!({"Action": "PinLock", "Item": other.roubles, "State": "Pinned"}),
    )
    .await;
    let answer = applied(&p, "a lock", json!({"Action": "PinLock", "Item": roubles, "State": "Locked"})).await;
    assert_eq!(answer["items"]["change"][0]["upd"]["PinLockState"], "Locked", "{answer}");
}

#[tokio::test]
async fn examine_earns_experience_once_and_read_encyclopedia_marks_entries() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Examiner").await;
    refused(
        &p,
        "examining what neither the db nor the profile has",
        json!({"Action": "Examine", "item": "0000000000000000000000e1"}),
    )
    .await;
    refused(
        &p,
        "examining a trader's item that is not offered",
        json!({"Action": "Examine", "item": "0000000000000000000000e1", "fromOwner": {"id": TRADER, "type": "Trader"}}),
    )
    .await;
    let answer = applied(&p, "examining a map", json!({"Action": "Examine", "item": MAP})).await;
    assert_eq!(answer["experience"], 4, "the map's ExamineExperience: {answer}");
    applied(&p, "examining it again", json!({"Action": "Examine", "item": MAP})).await;
    applied(
        &p,
        "examining the trader's rifle",
        json!({"Action": "Examine", "item": OFFER, "fromOwner": {"id": TRADER, "type": "Trader"}}),
    )
    .await;
    let profile = p.profile().await;
    assert_eq!(profile["Info"]["Experience"], 4, "once per template");
    assert_eq!(profile["Encyclopedia"][MAP], false);
    assert_eq!(profile["Encyclopedia"][RIFLE], false);

    refused(
        &p,
        "reading an unknown template",
        json!({"Action": "ReadEncyclopedia", "ids": [MAP, "0000000000000000000000e1"]}),
    )
    .await;
    applied(&p, "reading", json!({"Action": "ReadEncyclopedia", "ids": [MAP]})).await;
    assert_eq!(p.profile().await["Encyclopedia"][MAP], true);
}

#[tokio::test]
async fn map_markers_are_created_edited_and_deleted_on_a_map_the_player_owns() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Marker").await;
    let map = "0000000000000000000000d1";
    give(&server, &p, vec![loose(map, MAP, &p.stash, 0, 5)], json!({}));
    let create = |item: &str, marker: Value| json!({"Action": "CreateMapMarker", "item": item, "mapMarker": marker});
    refused(&p, "a marker on roubles", create(&p.roubles, json!({"Type": "Point", "X": 1, "Y": 2, "Note": "x"}))).await;
    refused(&p, "a marker without coordinates", create(map, json!({"Type": "Point", "Note": "x"}))).await;
    refused(
        &p,
        "a marker with a long note",
        create(map, json!({"Type": "Point", "X": 1, "Y": 2, "Note": "n".repeat(300)})),
    )
    .await;
    let answer =
        applied(&p, "a marker", create(map, json!({"Type": "Point", "X": 10, "Y": 20, "Note": "loot <here>!"}))).await;
    assert_eq!(
        answer["items"]["change"][0]["upd"]["Map"]["Markers"],
        json!([{"Type": "Point", "X": 10, "Y": 20, "Note": "loot here"}]),
        "the note is cleaned as SPT cleans it: {answer}"
    );
    let edit = json!({"Action": "EditMapMarker", "item": map, "X": 10, "Y": 20, "mapMarker": {"Type": "Key", "X": 11, "Y": 21, "Note": "door"}});
    refused(
        &p,
        "editing a marker that is not there",
        json!({"Action": "EditMapMarker", "item": map, "X": 1, "Y": 1, "mapMarker": {"Type": "Key", "X": 1, "Y": 1}}),
    )
    .await;
    applied(&p, "an edit", edit).await;
    refused(
        &p,
        "deleting a marker that is not there",
        json!({"Action": "DeleteMapMarker", "item": map, "X": 10, "Y": 20}),
    )
    .await;
    applied(&p, "a delete", json!({"Action": "DeleteMapMarker", "item": map, "X": 11, "Y": 21})).await;
    assert_eq!(p.item(map).await["upd"]["Map"]["Markers"], json!([]));
    for n in 0..128 {
        assert_eq!(p.act(create(map, json!({"Type": "Point", "X": n, "Y": 0}))).await, None);
    }
    refused(&p, "a map's 129th marker", create(map, json!({"Type": "Point", "X": 500, "Y": 0}))).await;
}

#[tokio::test]
async fn a_random_loot_container_is_opened_into_its_rewards_once() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Opener").await;
    let boxed = "0000000000000000000000d2";
    give(&server, &p, vec![loose(boxed, LOOT_BOX, &p.stash, 0, 5)], json!({}));
    refused(&p, "opening roubles", json!({"Action": "OpenRandomLootContainer", "item": p.roubles})).await;
    refused(
        &p,
        "opening what is not there",
        json!({"Action": "OpenRandomLootContainer", "item": "0000000000000000000000d9"}),
    )
    .await;
    let before = p.items().await.len();
    let answer =
        applied(&p, "opening the box", json!({"Action": "OpenRandomLootContainer", "item": boxed, "to": []})).await;
    assert_eq!(answer["items"]["del"], json!([{"_id": boxed}]), "{answer}");
    let new = answer["items"]["new"].as_array().unwrap();
    assert_eq!(new.len() as u64, LOOT_BOX_REWARDS, "{answer}");
    let pool = [RIFLE.to_owned(), hex_id(0), hex_id(1), hex_id(2)];
    for reward in new {
        assert!(pool.contains(&reward["_tpl"].as_str().unwrap().to_owned()), "{reward}");
        assert_eq!(reward["upd"]["SpawnedInSession"], true, "the config says found in raid");
        assert_eq!(reward["parentId"], p.stash.as_str());
    }
    assert_eq!(p.items().await.len(), before - 1 + LOOT_BOX_REWARDS as usize);
    refused(&p, "opening it again", json!({"Action": "OpenRandomLootContainer", "item": boxed})).await;
}

#[tokio::test]
async fn a_profile_reward_from_a_system_message_is_redeemed_once() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Redeemer").await;
    let message = "0000000000000000000000f1";
    let events = json!([
        {"_id": "0000000000000000000000f2", "Type": "TraderStanding", "value": 0.5, "entity": TRADER},
        {"_id": "0000000000000000000000f3", "Type": "ProfileLevel", "value": 5000, "entity": null},
        {"_id": "0000000000000000000000f4", "Type": "HideoutAreaLevel", "value": 2, "entity": "Generator"},
        {"_id": "0000000000000000000000f5", "Type": "TraderStanding", "value": 1, "entity": "ffffffffffffffffffffffff"},
    ]);
    let mail = json!({SYSTEM: {"_id": SYSTEM, "type": 7, "messages": {message: {"_id": message, "profileChangeEvents": events}}}});
    give(&server, &p, vec![], json!({"_mail": mail}));
    let redeem =
        |event: &str| json!({"Action": "RedeemProfileReward", "events": [{"MessageId": message, "EventId": event}]});
    refused(&p, "an event of another message", json!({"Action": "RedeemProfileReward", "events": [{"MessageId": "0000000000000000000000f9", "EventId": "0000000000000000000000f2"}]})).await;
    refused(&p, "an event not applied here", redeem("0000000000000000000000f4")).await;
    refused(&p, "an event naming no trader of the db", redeem("0000000000000000000000f5")).await;
    let answer = applied(&p, "a standing", redeem("0000000000000000000000f2")).await;
    assert_eq!(answer["traderRelations"][TRADER]["standing"], 0.5, "{answer}");
    let answer = applied(&p, "an experience", redeem("0000000000000000000000f3")).await;
    assert_eq!(answer["experience"], 5000, "{answer}");
    refused(&p, "the standing again", redeem("0000000000000000000000f2")).await;
}

/// "Rival" (from level 1) fails when "Debut" succeeds; failing it costs standing.
const RIVAL: &str = "6000000000000000000000f1";

#[tokio::test]
async fn quest_fail_needs_a_started_quest_that_can_fail_and_repeatables_are_refused() {
    let debut = hex_id(1 << 50 | 1);
    let server = server_with(|db| {
        let mut rival = db["templates"]["quests"][&debut].clone();
        rival["_id"] = json!(RIVAL);
        rival["conditions"]["Fail"] =
            json!([{"id": "6000000000000000000000f2", "conditionType": "Quest", "target": debut, "status": [4]}]);
        rival["rewards"]["Fail"] = json!([{"id": "6000000000000000000000f3", "index": 0, "type": "TraderStanding",
            "target": TRADER, "value": -0.25, "unknown": false, "availableInGameEditions": [], "notAvailableInGameEditions": []}]);
        db["templates"]["quests"][RIVAL] = rival;
    })
    .await;
    let p = Player::new(server.addr, A, "Failer").await;
    refused(&p, "failing a quest not started", json!({"Action": "QuestFail", "qid": RIVAL, "removeExcessItems": true}))
        .await;
    applied(&p, "accepting Debut", json!({"Action": "QuestAccept", "qid": debut, "type": ""})).await;
    let reason =
        refused(&p, "failing a quest with no fail conditions", json!({"Action": "QuestFail", "qid": debut})).await;
    assert!(reason.contains("no condition"), "{reason}");
    applied(&p, "accepting Rival", json!({"Action": "QuestAccept", "qid": RIVAL, "type": ""})).await;
    let answer =
        applied(&p, "failing Rival", json!({"Action": "QuestFail", "qid": RIVAL, "removeExcessItems": true})).await;
    let status = answer["questsStatus"].as_array().unwrap().iter().find(|q| q["qid"] == RIVAL).cloned().unwrap();
    assert_eq!(status["status"], 5, "Fail: {answer}");
    assert_eq!(answer["traderRelations"][TRADER]["standing"], -0.25, "the fail reward: {answer}");
    refused(&p, "failing it twice", json!({"Action": "QuestFail", "qid": RIVAL})).await;
    let reason = refused(&p, "changing a repeatable", json!({"Action": "RepeatableQuestChange", "qid": debut})).await;
    assert!(reason.contains("not an active repeatable"), "{reason}");
}

#[tokio::test]
async fn notes_and_the_wish_list() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Writer").await;
    let note = |text: &str| json!({"Time": 1700000000, "Text": text});
    refused(&p, "a note without text", json!({"Action": "AddNote", "note": {"Time": 1}})).await;
    refused(&p, "a long note", json!({"Action": "AddNote", "note": note(&"n".repeat(5000))})).await;
    applied(&p, "a note", json!({"Action": "AddNote", "note": note("first")})).await;
    applied(&p, "another", json!({"Action": "AddNote", "note": note("second")})).await;
    refused(&p, "editing a note past the end", json!({"Action": "EditNote", "index": 2, "note": note("x")})).await;
    applied(&p, "an edit", json!({"Action": "EditNote", "index": 0, "note": note("changed")})).await;
    refused(&p, "deleting a note past the end", json!({"Action": "DeleteNote", "index": 9})).await;
    applied(&p, "a delete", json!({"Action": "DeleteNote", "index": 1})).await;
    assert_eq!(p.profile().await["Notes"]["Notes"], json!([note("changed")]));

    refused(
        &p,
        "wishing for what is not in the db",
        json!({"Action": "AddToWishList", "items": {"0000000000000000000000e1": 0}}),
    )
    .await;
    refused(&p, "a wild category", json!({"Action": "AddToWishList", "items": {RIFLE: 1000}})).await;
    applied(&p, "wishes", json!({"Action": "AddToWishList", "items": {RIFLE: 1, MAP: 2}})).await;
    refused(
        &p,
        "re-categorising what is not on the list",
        json!({"Action": "ChangeWishlistItemCategory", "item": ROUBLES, "category": 3}),
    )
    .await;
    applied(&p, "re-categorising", json!({"Action": "ChangeWishlistItemCategory", "item": RIFLE, "category": 3})).await;
    refused(&p, "removing what is not on the list", json!({"Action": "RemoveFromWishList", "items": [RIFLE, ROUBLES]}))
        .await;
    applied(&p, "removing", json!({"Action": "RemoveFromWishList", "items": [MAP]})).await;
    assert_eq!(p.profile().await["WishList"], json!({RIFLE: 3}));
}

#[tokio::test]
async fn a_suit_is_bought_for_its_price_and_worn() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Dresser").await;
    let other = Player::new(server.addr, B, "Other").await;
    let pay = |offer: &str, id: &str, count: u64| json!({"Action": "CustomizationBuy", "offer": offer, "items": [{"del": false, "id": id, "count": count}]});
    refused(&p, "an offer no trader has", pay("0000000000000000000000e1", &p.roubles, SUIT_PRICE)).await;
    refused(&p, "an offer from level 10", pay(SUIT_OFFER_LOCKED, &p.roubles, 30_000)).await;
    refused(&p, "paying less", pay(SUIT_OFFER, &p.roubles, SUIT_PRICE - 1)).await;
    refused(&p, "paying with another player's money", pay(SUIT_OFFER, &other.roubles, SUIT_PRICE)).await;
    refused(&p, "paying with the pockets", pay(SUIT_OFFER, &p.pockets, 1)).await;
    refused(&p, "paying more than the stack", pay(SUIT_OFFER, &p.roubles, 600_000)).await;
    refused(&p, "wearing a suit not bought", json!({"Action": "CustomizationSet", "customizations": [{"id": SUIT_UPPER, "type": "suite", "source": "unlockedInGame"}]})).await;
    let answer = applied(&p, "buying, naming more than the price", pay(SUIT_OFFER, &p.roubles, SUIT_PRICE + 500)).await;
    assert_eq!(
        answer["items"]["change"][0]["upd"]["StackObjectsCount"],
        500_000 - SUIT_PRICE,
        "exactly the price: {answer}"
    );
    assert_eq!(p.units(ROUBLES).await, 500_000 - SUIT_PRICE);
    assert_eq!(other.units(ROUBLES).await, 500_000);
    refused(&p, "buying it again", pay(SUIT_OFFER, &p.roubles, SUIT_PRICE)).await;
    let storage = crate::emulator::post(p.addr, "/client/trading/customization/storage", &p.session, json!({})).await;
    assert_eq!(storage["data"], json!([{"id": SUIT_UPPER, "source": "unlockedInGame", "type": "suite"}]), "{storage}");
    assert!(p.profile().await.get("_unlocks").is_none(), "the unlocks are not part of the character");

    applied(&p, "wearing it", json!({"Action": "CustomizationSet", "customizations": [{"id": SUIT_UPPER, "type": "suite", "source": "unlockedInGame"}]})).await;
    let dressed = p.profile().await["Customization"].clone();
    assert_eq!(dressed["Body"], "5cc0858d14c02e000c6bea66", "{dressed}");
    refused(
        &p,
        "wearing the legs not bought",
        json!({"Action": "CustomizationSet", "customizations": [{"id": SUIT_LOWER, "type": "suite"}]}),
    )
    .await;
    refused(
        &p,
        "an unknown kind",
        json!({"Action": "CustomizationSet", "customizations": [{"id": SUIT_UPPER, "type": "voice"}]}),
    )
    .await;
    let tag = hex_id(1 << 50 | 560);
    applied(
        &p,
        "a dog tag of the storage",
        json!({"Action": "CustomizationSet", "customizations": [{"id": tag, "type": "dogTag"}]}),
    )
    .await;
    assert_eq!(p.profile().await["Customization"]["DogTag"], tag.as_str());
}
