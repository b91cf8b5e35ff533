//! The hideout over the wire (`plugins/emulator/src/hideout/`): building an area over its construction
//! time, fuel in the generator, a craft taken when done, the scav case, a bigger stash; every refusal a
//! warning that changes nothing; and time passing the same whether the server ran or was off. The
//! game's clock is stopped at chosen moments (`emulator.clock.at`) across restarts, so "six hours
//! later" is exact to the second.

use crate::emulator::{Player, ROUBLES, move_to, put_profile, stored_profile, t0};
use modhost_gamedb::RIFLE;
use modhost_gamedb::hideout::{
    AIR_FILTER, BIG_STASH, BITCOIN_RECIPE, CIRCLE_RECIPE, CIRCLE_STASH, FUEL, GPU, MEDSTATION_RECIPE, PURIFIED_WATER,
    SCAV_RECIPE, WATER_FILTER, WATER_RECIPE, WORKBENCH_IMPROVEMENT, WORKBENCH_RECIPE,
};
use modhost_gamedb::trade::{CRACKERS, REPAIR_KIT};
use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, TestServerBuilder};
use serde_json::{Value, json};

/// The generated db with the game's clock stopped at `at`.
fn db(at: u64) -> String {
    let mut db = modhost_gamedb::database(100);
    db["emulator"]["clock"] = json!({"at": at});
    db.to_string()
}

/// Restarts `server` with the game's clock at `at`, first changing each stored profile with `edit`.
async fn restart(server: TestServer, at: u64, edit: impl FnOnce(&std::path::Path)) -> TestServer {
    let again: TestServerBuilder = server.restart_builder();
    server.stop().await.unwrap();
    edit(again.root());
    again.db_json(&db(at)).start().await.unwrap()
}

/// Gives the stored profile `uid` loose items in its stash from row 20 down, `(id, tpl, w, h, upd)`,
/// and (when `areas` is given) its hideout's areas. The profile's indexes are rebuilt on first touch.
fn give(root: &std::path::Path, uid: &str, items: &[(String, &str, i64, Value)], areas: Option<Value>) {
    let mut profile = stored_profile(root, uid);
    let stash = profile["Inventory"]["stash"].as_str().unwrap().to_owned();
    for (n, (id, tpl, w, upd)) in items.iter().enumerate() {
        let (x, y) = ((n as i64 * 2) % 10, 20 + (n as i64 * 2 / 10) * 2);
        assert!(*w <= 2);
        profile["Inventory"]["items"][id] = json!({"_id": id, "_tpl": tpl, "parentId": stash, "slotId": "hideout",
                                                   "location": {"x": x, "y": y, "r": "Horizontal"}, "upd": upd});
    }
    if let Some(areas) = areas {
        profile["Hideout"]["Areas"] = areas;
    }
    profile["_modhost"].as_object_mut().unwrap().remove("shape");
    put_profile(root, &profile);
}

/// An id for test item `n` of kind `k`.
fn id(k: char, n: u64) -> String {
    format!("{k}{n:023x}")
}

async fn hideout(p: &Player) -> Value {
    p.profile().await["Hideout"].clone()
}

fn area(hideout: &Value, kind: u64) -> Value {
    hideout["Areas"].as_array().unwrap().iter().find(|a| a["type"] == kind).cloned().unwrap_or_default()
}

/// A refused action: its warning says `says`, and the profile is as it was.
async fn refused(p: &Player, action: Value, says: &str) {
    let before = p.profile().await;
    let warning = p.act(action.clone()).await.unwrap_or_else(|| panic!("applied; expected {says:?}: {action}"));
    assert!(warning.contains(says), "{warning} (expected {says:?})");
    assert!(p.profile().await == before, "a refused {action} changed the profile");
}

fn upgrade(kind: u64, items: Value) -> Value {
    json!({"Action": "HideoutUpgrade", "areaType": kind, "items": items, "timestamp": 0})
}

fn complete(kind: u64) -> Value {
    json!({"Action": "HideoutUpgradeComplete", "areaType": kind, "timestamp": 0})
}

fn put(kind: u64, slot: u64, item: &str) -> Value {
    let mut items = serde_json::Map::new();
    items.insert(slot.to_string(), json!({"id": item}));
    json!({"Action": "HideoutPutItemsInAreaSlots", "areaType": kind, "items": items, "timestamp": 0})
}

fn toggle(kind: u64, on: bool) -> Value {
    json!({"Action": "HideoutToggleArea", "areaType": kind, "enabled": on, "timestamp": 0})
}

fn take(recipe: &str) -> Value {
    json!({"Action": "HideoutTakeProduction", "recipeId": recipe, "timestamp": 0})
}

#[tokio::test]
async fn a_player_builds_fuels_crafts_and_collects_over_the_games_hours() {
    let t0 = t0();
    let server = TestServer::builder().db_json(&db(t0)).config(|c| c.builtin_mods = true).start().await.unwrap();
    let p = Player::new(server.addr, "c1c1c1c1c1c1c1c1c1c1c1c1", "Builder").await;
    let (fuel, fuel2, rifle, kit) = (id('f', 1), id('f', 2), id('e', 1), id('e', 2));
    let server = restart(server, t0, |root| {
        let items = [
            (fuel.clone(), FUEL, 1, json!({})),
            (fuel2.clone(), FUEL, 1, json!({"Resource": {"Value": 40}})),
            (rifle.clone(), RIFLE, 2, json!({})),
            (kit.clone(), REPAIR_KIT, 1, json!({})),
            (id('e', 3), GPU, 2, json!({})),
            (id('e', 4), WATER_FILTER, 1, json!({})),
        ];
        give(root, &p.uid, &items, None);
    })
    .await;
    let p = Player { addr: server.addr, ..p };
    let start = hideout(&p).await;
    assert_eq!(area(&start, 4)["level"], 0, "{start}");
    assert_eq!(area(&start, 3)["level"], 1, "the stash starts built");

    // Refusals, each naming why.
    refused(&p, upgrade(4, json!([])), "the payment names 0").await;
    refused(&p, upgrade(6, json!([{"id": p.roubles, "count": 30_000}])), "area 4 must be at level 1").await;
    refused(&p, upgrade(99, json!([])), "area 99 is not in the database").await;
    refused(&p, put(4, 0, &fuel), "area 4 is not built").await;
    refused(&p, toggle(4, true), "area 4 is not built").await;
    refused(&p, complete(4), "is not being built").await;
    refused(&p, upgrade(7, json!([{"id": p.roubles, "count": 20_000}])), "must be finished first").await;

    // The generator: paid, under construction for its 600 seconds, done only after them.
    assert_eq!(p.act(upgrade(4, json!([{"id": p.roubles, "count": 50_000}]))).await, None);
    assert_eq!(p.units(ROUBLES).await, 450_000);
    let building = area(&hideout(&p).await, 4);
    assert_eq!((building["constructing"].clone(), building["completeTime"].clone()), (json!(true), json!(t0 + 600)));
    refused(&p, complete(4), "built in 600 more seconds").await;
    refused(&p, upgrade(4, json!([{"id": p.roubles, "count": 150_000}])), "already being built").await;

    let server = restart(server, t0 + 600, |_| {}).await;
    let p = Player { addr: server.addr, ..p };
    assert_eq!(p.act(complete(4)).await, None);
    let generator = area(&hideout(&p).await, 4);
    assert_eq!(generator["level"], 1);
    assert_eq!(generator["slots"].as_array().unwrap().len(), 6, "{generator}");
    refused(&p, upgrade(4, json!([{"id": p.roubles, "count": 150_000}])), "loyalty must be at level 2").await;

    // Fuel: a full tank starts at its template's 100; a card is not fuel; a slot holds one item.
    refused(&p, toggle(4, true), "the generator has no fuel").await;
    refused(&p, put(4, 0, &id('e', 3)), "does not take").await;
    refused(&p, put(4, 6, &fuel), "has no slot 6").await;
    assert_eq!(p.act(put(4, 0, &fuel)).await, None);
    assert_eq!(p.item(&fuel).await, Value::Null, "the tank left the stash");
    refused(&p, put(4, 0, &fuel2), "slot 0 of area 4 is taken").await;
    assert_eq!(p.act(put(4, 1, &fuel2)).await, None);
    assert_eq!(p.act(toggle(4, true)).await, None);
    let slots = area(&hideout(&p).await, 4)["slots"].clone();
    assert_eq!(slots[0]["item"][0]["upd"]["Resource"]["Value"], 100.0, "{slots}");

    // The water collector (1 800 s) and the workbench (600 s), paid now.
    refused(&p, put(6, 0, &id('e', 4)), "area 6 is not built").await;
    assert_eq!(p.act(upgrade(6, json!([{"id": p.roubles, "count": 30_000}]))).await, None);
    assert_eq!(p.act(upgrade(10, json!([{"id": p.roubles, "count": 10_000}]))).await, None);
    let server = restart(server, t0 + 2400, |_| {}).await;
    let p = Player { addr: server.addr, ..p };
    assert_eq!(p.act(complete(6)).await, None);
    assert_eq!(p.act(complete(10)).await, None);
    refused(&p, put(6, 0, &kit), "does not take").await;
    // The workbench's improvement: paid, done after its 300 seconds.
    let improve = json!({"Action": "HideoutImproveArea", "areaType": 10, "items": [{"id": p.roubles, "count": 5_000}], "timestamp": 0});
    refused(&p, json!({"Action": "HideoutImproveArea", "areaType": 17, "items": []}), "area 17 is not built").await;
    assert_eq!(p.act(improve.clone()).await, None);
    refused(&p, improve, "already under way").await;
    let improvement = hideout(&p).await["Improvements"][WORKBENCH_IMPROVEMENT].clone();
    assert_eq!(improvement, json!({"completed": false, "improveCompleteTimestamp": t0 + 2400 + 300}));
    assert_eq!(p.act(put(6, 0, &id('e', 4))).await, None);
    let water = json!({"Action": "HideoutContinuousProductionStart", "recipeId": WATER_RECIPE, "timestamp": 0});
    assert_eq!(p.act(water.clone()).await, None);
    refused(&p, water, "already running").await;

    // A craft that needs a tool (kept) and a rifle (taken).
    let craft = |tools: Value| {
        json!({"Action": "HideoutSingleProductionStart", "recipeId": WORKBENCH_RECIPE,
               "items": [{"id": rifle, "count": 1}], "tools": tools, "timestamp": 0})
    };
    refused(&p, craft(json!([])), "needs the tool").await;
    let answer = p.moving(vec![craft(json!([{"id": kit, "count": 1}]))]).await;
    assert!(answer["data"]["warnings"].as_array().unwrap().is_empty(), "{answer}");
    assert_eq!(answer["data"]["profileChanges"][&p.uid]["production"][WORKBENCH_RECIPE]["inProgress"], true);
    assert_eq!(p.item(&rifle).await, Value::Null, "the rifle was used");
    assert_ne!(p.item(&kit).await, Value::Null, "the tool is kept");
    refused(&p, take(WORKBENCH_RECIPE), "is not finished").await;
    refused(&p, take(WATER_RECIPE), "is not finished").await;

    // The server is off past both (the craft's hour, the water's 8 000 s): 11 800 s of power burnt
    // 15.34 units from the first tank; both products are taken into the stash.
    let server = restart(server, t0 + 12_400, |_| {}).await;
    let p = Player { addr: server.addr, ..p };
    let slots = area(&hideout(&p).await, 4)["slots"].clone();
    assert_eq!(slots[0]["item"][0]["upd"]["Resource"]["Value"], 84.66, "{slots}");
    assert_eq!(slots[1]["item"][0]["upd"]["Resource"]["Value"].as_f64(), Some(40.0), "{slots}");
    let before = p.units(ROUBLES).await;
    assert_eq!(p.act(take(WORKBENCH_RECIPE)).await, None);
    assert_eq!(p.units(ROUBLES).await, before + 10_000);
    assert!(hideout(&p).await["Production"].get(WORKBENCH_RECIPE).is_none());
    refused(&p, take(WORKBENCH_RECIPE), "no craft of recipe").await;
    assert_eq!(p.act(take(WATER_RECIPE)).await, None);
    assert_eq!(p.of(PURIFIED_WATER).await.len(), 1);
    let restarted = hideout(&p).await["Production"][WATER_RECIPE]["Progress"].as_f64();
    assert_eq!(restarted, Some(0.0), "the collector starts over");

    assert_eq!(hideout(&p).await["Improvements"][WORKBENCH_IMPROVEMENT]["completed"], true);

    // Taking a tank back gives it as time left it.
    let back = json!({"Action": "HideoutTakeItemsFromAreaSlots", "areaType": 4, "slots": [1], "timestamp": 0});
    assert_eq!(p.act(back).await, None);
    assert_eq!(p.item(&fuel2).await["upd"]["Resource"]["Value"].as_f64(), Some(40.0));

    // The scav case: built at once, paid, its rewards taken after its 40 minutes.
    assert_eq!(p.act(upgrade(14, json!([{"id": p.roubles, "count": 25_000}]))).await, None);
    assert_eq!(area(&hideout(&p).await, 14)["level"], 1);
    let scav = json!({"Action": "HideoutScavCaseProductionStart", "recipeId": SCAV_RECIPE,
                      "items": [{"id": p.roubles, "count": 2_500}], "tools": [], "timestamp": 0});
    assert_eq!(p.act(scav.clone()).await, None);
    refused(&p, scav, "already in use").await;
    let drawn = hideout(&p).await["Production"][SCAV_RECIPE]["Products"].as_array().unwrap().clone();
    let products = drawn.len();
    assert!((2..=4).contains(&products), "{products} rewards");
    // Each from the table: a common (at most 20 000 roubles) or a rare (20 001 to 60 000) by handbook price.
    let handbook = modhost_gamedb::database(100)["templates"]["handbook"]["Items"].clone();
    for reward in &drawn {
        let price = handbook.as_array().unwrap().iter().find(|h| h["Id"] == reward["_tpl"]).unwrap()["Price"].as_f64();
        assert!(price.is_some_and(|p| (1.0..=60_000.0).contains(&p)), "{reward} at {price:?}");
    }

    // A bigger stash, built over 1 200 s.
    assert_eq!(p.act(upgrade(3, json!([{"id": p.roubles, "count": 100_000}]))).await, None);

    // The cultist circle: built at once with its container; a graphics card sacrificed for rewards in
    // the circle's grid over the 12 hours of its value's threshold.
    refused(&p, json!({"Action": "HideoutCircleOfCultistProductionStart", "timestamp": 0}), "is not built").await;
    let answer = p.moving(vec![upgrade(27, json!([{"id": p.roubles, "count": 35_000}]))]).await;
    let told = &answer["data"]["profileChanges"][&p.uid]["changedHideoutStashes"]["27"];
    assert_eq!(told["tpl"], CIRCLE_STASH, "{answer}");
    let circle = told["id"].as_str().unwrap().to_owned();
    assert_eq!(p.profile().await["Inventory"]["hideoutAreaStashes"]["27"], circle.as_str());
    refused(&p, move_to(&circle, &p.stash, "hideout", 0, 30), "is a root container").await;
    let sacrifice = json!({"Action": "HideoutCircleOfCultistProductionStart", "timestamp": 0});
    refused(&p, sacrifice.clone(), "nothing lies in the circle").await;
    assert_eq!(p.act(move_to(&id('e', 3), &circle, "CircleOfCultistsGrid1", 0, 0)).await, None);
    assert_eq!(p.act(sacrifice.clone()).await, None);
    assert_eq!(p.item(&id('e', 3)).await, Value::Null, "the card was sacrificed");
    let rewards: Vec<Value> = p.items().await.into_iter().filter(|i| i["parentId"] == circle.as_str()).collect();
    assert!((1..=5).contains(&rewards.len()), "{rewards:?}");
    let ritual = hideout(&p).await["Production"][CIRCLE_RECIPE].clone();
    assert_eq!((ritual["sptIsCultistCircle"].clone(), ritual["ProductionTime"].clone()), (json!(true), json!(43_200)));
    refused(&p, sacrifice, "the circle is busy").await;

    // Twelve hours later: the scav case's rewards, the stash, the circle done and cleared.
    let items_before = p.items().await.len();
    let server = restart(server, t0 + 12_400 + 43_200, |_| {}).await;
    let p = Player { addr: server.addr, ..p };
    assert_eq!(p.act(take(SCAV_RECIPE)).await, None);
    assert_eq!(p.items().await.len(), items_before + products);
    assert_eq!(p.act(complete(3)).await, None);
    assert_eq!(p.item(&p.stash).await["_tpl"], BIG_STASH);
    let ritual = hideout(&p).await["Production"][CIRCLE_RECIPE].clone();
    assert_eq!((ritual["AvailableForFinish"].clone(), ritual["inProgress"].clone()), (json!(true), json!(false)));
    let clear = json!({"Action": "HideoutDeleteProductionCommand", "recipeId": CIRCLE_RECIPE, "timestamp": 0});
    assert_eq!(p.act(clear.clone()).await, None);
    refused(&p, clear, "no craft of recipe").await;
    let generator = area(&hideout(&p).await, 4);
    assert_eq!(generator["active"], true, "{generator}");
    drop(server);
}

/// Areas built as the downtime test starts them: the generator (6 slots), the water collector (1),
/// the medstation, the workbench, the scav case, air filtering (3), the bitcoin farm (10), the gym.
fn built_areas() -> Value {
    let area = |kind: u64, slots: usize| {
        let slots: Vec<Value> = (0..slots).map(|i| json!({"locationIndex": i})).collect();
        json!({"type": kind, "level": 1, "active": true, "passiveBonusesEnabled": true, "completeTime": 0,
               "constructing": false, "slots": slots, "lastRecipe": ""})
    };
    json!([
        area(3, 0),
        area(4, 6),
        area(6, 1),
        area(7, 0),
        area(10, 0),
        area(14, 0),
        area(17, 3),
        area(20, 10),
        area(23, 0)
    ])
}

/// The hideout as compared: without the anchor (when it was last stored), the scav case's draw and
/// the farm's coins by count (their ids are random).
fn comparable(mut hideout: Value) -> Value {
    hideout.as_object_mut().unwrap().remove("sptUpdateLastRunTimestamp");
    if let Some(crafts) = hideout["Production"].as_object_mut() {
        for craft in crafts.values_mut() {
            let n = craft["Products"].as_array().map_or(0, Vec::len);
            craft["Products"] = if craft["sptIsScavCase"] == true { Value::Null } else { json!(n) };
        }
    }
    hideout
}

/// The downtime test's three scenarios, one player each: a generator with four full tanks; one with
/// 2 units of fuel (1 539 seconds); none, with the stash being rebuilt.
const SCENARIOS: [&str; 3] = ["d1d1d1d1d1d1d1d1d1d1d1d1", "d2d2d2d2d2d2d2d2d2d2d2d2", "d3d3d3d3d3d3d3d3d3d3d3d3"];

/// A root where each scenario's player, at `t0`, has fuelled its generator, filled the water
/// collector, air filtering and the bitcoin farm (ten cards), and started the water collector, the
/// farm, a medstation craft that needs power all along, a workbench craft and the scav case.
async fn keepers(t0: u64) -> (TestServer, Vec<Player>) {
    let server = TestServer::builder().db_json(&db(t0)).config(|c| c.builtin_mods = true).start().await.unwrap();
    let mut players = Vec::new();
    for (n, session) in SCENARIOS.iter().enumerate() {
        players.push(Player::new(server.addr, session, &format!("Keeper{n}")).await);
    }
    let fuel = |n: usize| [4, 1, 0][n];
    let items = |n: usize| -> Vec<(String, &str, i64, Value)> {
        let mut items: Vec<(String, &str, i64, Value)> = match fuel(n) {
            1 => vec![(id('f', 1), FUEL, 1, json!({"Resource": {"Value": 2}}))],
            k => (1..=k).map(|n| (id('f', n), FUEL, 1, json!({}))).collect(),
        };
        items.extend((1..=10).map(|n| (id('a', n), GPU, 2, json!({}))));
        items.push((id('b', 1), WATER_FILTER, 1, json!({})));
        items.push((id('b', 2), AIR_FILTER, 2, json!({})));
        items.push((id('b', 3), CRACKERS, 1, json!({})));
        items.push((id('b', 4), RIFLE, 2, json!({})));
        items.push((id('b', 5), REPAIR_KIT, 1, json!({})));
        items
    };
    let server = restart(server, t0, |root| {
        for (n, p) in players.iter().enumerate() {
            give(root, &p.uid, &items(n), Some(built_areas()));
        }
    })
    .await;
    for (n, p) in players.iter_mut().enumerate() {
        p.addr = server.addr;
        let mut actions = Vec::new();
        for tank in 0..fuel(n) {
            actions.push(put(4, tank, &id('f', tank + 1)));
        }
        for card in 0..10 {
            actions.push(put(20, card, &id('a', card + 1)));
        }
        actions.push(put(6, 0, &id('b', 1)));
        actions.push(put(17, 0, &id('b', 2)));
        if fuel(n) > 0 {
            actions.push(toggle(4, true));
        } else {
            actions.push(upgrade(3, json!([{"id": p.roubles, "count": 100_000}])));
        }
        for recipe in [WATER_RECIPE, BITCOIN_RECIPE] {
            actions.push(json!({"Action": "HideoutContinuousProductionStart", "recipeId": recipe, "timestamp": 0}));
        }
        actions.push(json!({"Action": "HideoutSingleProductionStart", "recipeId": MEDSTATION_RECIPE,
                            "items": [{"id": id('b', 3), "count": 1}], "tools": [], "timestamp": 0}));
        actions.push(json!({"Action": "HideoutSingleProductionStart", "recipeId": WORKBENCH_RECIPE,
                            "items": [{"id": id('b', 4), "count": 1}], "tools": [{"id": id('b', 5), "count": 1}], "timestamp": 0}));
        actions.push(json!({"Action": "HideoutScavCaseProductionStart", "recipeId": SCAV_RECIPE,
                            "items": [{"id": p.roubles, "count": 2_500}], "tools": [], "timestamp": 0}));
        let answer = p.moving(actions).await;
        assert!(answer["data"]["warnings"].as_array().unwrap().is_empty(), "{answer}");
    }
    (server, players)
}

#[tokio::test]
async fn the_hideout_after_the_server_was_off_is_the_hideout_of_a_server_that_ran() {
    // Two roots replay the same actions at t0. One server keeps running: every simulated hour its
    // clock moves (db.json rewritten and reloaded, no restart) and each player's hideout is settled
    // (an action that stores it), then at 24, 48 and 72 hours. The other is stopped at t0 and started
    // only to be read, at 6 and at 72 hours.
    let t0 = t0();
    let (ran, on) = keepers(t0).await;
    let (off, mut away) = keepers(t0).await;
    let mut off_builder = off.restart_builder();
    off.stop().await.unwrap();
    for hours in [1u64, 2, 3, 4, 5, 6, 24, 48, 72] {
        let at = t0 + hours * 3600;
        std::fs::write(ran.root().join("db.json.next"), db(at)).unwrap();
        std::fs::rename(ran.root().join("db.json.next"), ran.root().join("db.json")).unwrap();
        let outcome = ran.app.reload().await;
        assert!(outcome.ok, "{outcome:?}");
        for p in &on {
            assert_eq!(p.act(toggle(23, true)).await, None);
        }
        if hours == 6 || hours == 72 {
            let off = off_builder.db_json(&db(at)).start().await.unwrap();
            for (kept, left) in on.iter().zip(away.iter_mut()) {
                left.addr = off.addr;
                let (a, b) = (comparable(hideout(kept).await), comparable(hideout(left).await));
                assert_eq!(a, b, "after {hours} hours, {}", kept.session);
            }
            off_builder = off.restart_builder();
            off.stop().await.unwrap();
        }
        if hours == 24 {
            // SPT's formula: progress += seconds x (1 + (cards - 1) x gpuBoostRate), a coin each 145 000.
            let farm = hideout(&on[0]).await["Production"][BITCOIN_RECIPE].clone();
            assert_eq!(farm["Progress"], 118_456.56, "86 400 s x 1.371025: {farm}");
            assert_eq!(farm["Products"].as_array().map(Vec::len), Some(0), "{farm}");
        }
        if hours == 6 {
            let dry = hideout(&on[1]).await;
            assert_eq!(area(&dry, 4)["active"], false, "the dry generator stopped");
            let crafts = &dry["Production"];
            assert_eq!(crafts[MEDSTATION_RECIPE]["Progress"], 1539.0, "a craft that needs power stops with it");
            assert_eq!(crafts[WORKBENCH_RECIPE]["Progress"], 3600.0, "one that does not goes on slower, and ends");
            let dark = hideout(&on[2]).await;
            assert_eq!(dark["Production"][WORKBENCH_RECIPE]["Progress"], 3240.0, "six hours at 0.15");
            assert_eq!(dark["Production"][MEDSTATION_RECIPE]["Progress"], 0.0);
            assert_eq!(dark["Production"][BITCOIN_RECIPE]["Progress"], 0.0);
            assert_eq!(dark["Production"][SCAV_RECIPE]["Progress"], 2400.0, "the scav case needs no power");
            assert_eq!(area(&dark, 3)["constructing"], true, "built when the player completes it");
        }
    }
    // 72 hours on four tanks: 336.96 units burnt in order; two coins from ten cards; the air filter used up.
    let full = hideout(&on[0]).await;
    let tanks: Vec<Value> = area(&full, 4)["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["item"][0]["upd"]["Resource"]["Value"].clone())
        .collect();
    assert_eq!(&tanks[..4], &[json!(0.0), json!(0.0), json!(0.0), json!(63.04)], "{tanks:?}");
    let farm = &full["Production"][BITCOIN_RECIPE];
    assert_eq!(farm["Products"].as_array().unwrap().len(), 2, "{farm}");
    assert_eq!(farm["Progress"], 65369.68, "{farm}");
    assert!(area(&full, 17)["slots"][0].get("item").is_none(), "the air filter is used up");
    assert_eq!(full["Production"][WATER_RECIPE]["Progress"], 8000.0);
    let filter = area(&full, 6)["slots"][0]["item"][0]["upd"]["Resource"]["Value"].clone();
    assert_eq!(filter, json!(73.36));

    // The coins are taken into the stash; the farm keeps running.
    let p = &on[0];
    assert_eq!(p.act(take(BITCOIN_RECIPE)).await, None);
    assert_eq!(p.of(modhost_gamedb::hideout::BITCOIN).await.len(), 2);
    refused(p, take(BITCOIN_RECIPE), "no coin yet").await;
    ran.stop().await.unwrap();
}

#[tokio::test]
async fn the_hosts_timer_tells_the_mods_when_an_area_is_built() {
    // The game's clock is the host's here: the timer fires on it.
    let builder =
        TestServer::builder().db_json(&modhost_gamedb::database(100).to_string()).config(|c| c.builtin_mods = true);
    let dir = builder.root().join("mods").join("a");
    std::fs::create_dir_all(&dir).unwrap();
    let config =
        json!({"name": "a", "subscriptions": ["emulator.hideout.area.ready", "emulator.hideout.production.ready"]});
    std::fs::write(dir.join("config.default.json"), config.to_string()).unwrap();
    let server = builder.with_mod("a", modhost_tests::guests::PEER, "").start().await.unwrap();
    let session = "e1e1e1e1e1e1e1e1e1e1e1e1";
    let p = Player::new(server.addr, session, "Waiter").await;
    assert_eq!(p.act(upgrade(0, json!([{"id": p.roubles, "count": 5_000}]))).await, None);
    let events = || async {
        let heard = send(server.addr, &Call::get("/peer/a/events").session(session)).await.unwrap().json();
        heard
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["topic"] == "emulator.hideout.area.ready")
            .cloned()
            .collect::<Vec<Value>>()
    };
    // The vents take 2 seconds; the timer fires once, on its own.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while events().await.is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let heard = events().await;
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert_eq!(heard[0]["payload"], json!({"session": session, "uid": p.uid, "area": 0, "level": 1}));
    assert_eq!(p.act(complete(0)).await, None);
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    assert_eq!(events().await.len(), 1, "told once");

    // A craft started and deleted over and over arms one timer, not one per start.
    let pending = || async {
        let mods = send(server.addr, &Call::get("/modhost/mods")).await.unwrap().json();
        let game = mods["loaded"].as_array().unwrap().iter().find(|m| m["id"] == "emulator").cloned().unwrap();
        game["timers_pending"].as_u64().unwrap_or_else(|| panic!("{game}"))
    };
    assert_eq!(p.act(upgrade(14, json!([{"id": p.roubles, "count": 25_000}]))).await, None);
    let before = pending().await;
    let mut actions = Vec::new();
    for _ in 0..10 {
        actions.push(json!({"Action": "HideoutScavCaseProductionStart", "recipeId": SCAV_RECIPE,
                            "items": [{"id": p.roubles, "count": 2_500}], "tools": [], "timestamp": 0}));
        actions.push(json!({"Action": "HideoutDeleteProductionCommand", "recipeId": SCAV_RECIPE, "timestamp": 0}));
    }
    let answer = p.moving(actions).await;
    assert!(answer["data"]["warnings"].as_array().unwrap().is_empty(), "{answer}");
    assert_eq!(pending().await, before + 1, "one pending timer for the scav case");
    server.stop().await.unwrap();
}
