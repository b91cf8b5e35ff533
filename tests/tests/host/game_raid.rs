//! A raid's round trip over the wire, in the client's order: leaving the menu, the raid's settings,
//! weather, `match/local/start` with its location loot, the bots, and `match/local/end` applying the
//! result (survived and killed), kept across a restart; then every refusal of `match/local/end`
//! changing nothing. An item brought into a raid leaves it under its own id (a stack may split into
//! new ones), and a stack brought in does not come out found in raid under a new id; a scav's items
//! alike.

use super::emulator::{A, B, Player, post};
use modhost_tests::TestServer;
use modhost_tests::client::{Call, send};
use modhost_tests::gamedb::{self, RIFLE, TRADER};
use serde_json::{Value, json};
use std::net::SocketAddr;

const MAP: &str = "factory4_day";
const OFFER: &str = "6000000000000000000000a1";
const SECURE: &str = "544a11ac4bdc2d470e8b456a";

/// An achievement the test database adds (the generated one has none).
const ACHIEVEMENT: &str = "6000000000000000000000ac";
/// A kill counter the test database adds to each generated quest's finish conditions.
const KILLS: &str = "6000000000000000000000cc";

/// The generated database, with a base for the raid's map when the generator has none yet, one
/// achievement, and a kill counter among each quest's finish conditions.
fn database() -> Value {
    let mut db = gamedb::database(100);
    db["templates"]["achievements"] = json!([{"id": ACHIEVEMENT, "rarity": "Common", "conditions": {}}]);
    for quest in db["templates"]["quests"].as_object_mut().unwrap().values_mut() {
        let kills = json!({"id": KILLS, "conditionType": "CounterCreator", "value": 5, "parentId": "",
                           "counter": {"id": "6000000000000000000000cd", "conditions": []}});
        quest["conditions"]["AvailableForFinish"].as_array_mut().unwrap().push(kills);
    }
    if db["locations"][MAP]["base"].is_null() {
        db["locations"][MAP]["base"] = json!({"Id": MAP, "Name": "Factory", "EscapeTimeLimit": 20, "Loot": [],
                                              "UnixDateTime": 0, "exits": [], "waves": [], "BossLocationSpawn": []});
    }
    db
}

async fn server() -> TestServer {
    TestServer::builder().db_json(&database().to_string()).config(|c| c.builtin_mods = true).start().await.unwrap()
}

/// A bare answer (no envelope).
async fn bare(addr: SocketAddr, path: &str, session: &str, body: Value) -> Value {
    let reply = send(addr, &Call::post(path, body.to_string().as_bytes()).session(session)).await.unwrap();
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    let value = reply.json();
    assert!(
        value.get("err").is_none() || !value["data"].is_null() && path.contains("difficult"),
        "{path}: enveloped: {value}"
    );
    value
}

/// A player with the rifle bought and equipped, and 1000 roubles split into the pockets' first grid.
async fn armed(addr: SocketAddr, session: &str, name: &str) -> (Player, String, String) {
    let p = Player::new(addr, session, name).await;
    let buy = json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": OFFER,
                     "count": 1, "scheme_id": 0, "scheme_items": [{"id": p.roubles, "count": 25000}]});
    assert_eq!(p.act(buy).await, None);
    let rifle = p.of(RIFLE).await[0]["_id"].as_str().unwrap().to_owned();
    let equipment = p.profile().await["Inventory"]["equipment"].as_str().unwrap().to_owned();
    let equip = json!({"Action": "Move", "item": rifle, "to": {"id": equipment, "container": "FirstPrimaryWeapon"}});
    assert_eq!(p.act(equip).await, None);
    let cash = "c0c0c0c0c0c0c0c0c0c0c0c0".to_owned();
    let split = json!({"Action": "Split", "splitItem": p.roubles, "newItem": cash, "count": 1000,
        "container": {"id": p.pockets, "container": "pocket1", "location": {"x": 0, "y": 0, "r": "Horizontal"}}});
    assert_eq!(p.act(split).await, None);
    (p, rifle, cash)
}

/// Starts a PMC raid; answers its `serverId` and loot.
async fn start(p: &Player) -> (String, Vec<Value>) {
    let started = post(
        p.addr,
        "/client/match/local/start",
        &p.session,
        json!({"location": MAP, "playerSide": "pmc", "timeVariant": "CURR", "mode": "PVE_OFFLINE"}),
    )
    .await;
    assert_eq!(started["err"], 0, "{started}");
    let server_id = started["data"]["serverId"].as_str().unwrap().to_owned();
    (server_id, started["data"]["locationLoot"]["Loot"].as_array().unwrap().clone())
}

/// Loot items that sit loose (a spawn's root item, not a container): `(id, tpl, count)`.
fn loose_items(loot: &[Value]) -> Vec<(String, String, u64)> {
    loot.iter()
        .filter(|s| s["IsContainer"] == false)
        .map(|s| &s["Items"][0])
        .filter(|i| i["_tpl"] != RIFLE)
        .map(|i| {
            (
                i["_id"].as_str().unwrap().to_owned(),
                i["_tpl"].as_str().unwrap().to_owned(),
                i["upd"]["StackObjectsCount"].as_u64().unwrap_or(1),
            )
        })
        .collect()
}

/// The end request for `profile` (as the client reports it, SPT's shape) with `result`.
fn end_body(server_id: &str, result: &str, profile: &Value) -> Value {
    json!({"serverId": server_id, "results": {"result": result, "profile": profile, "exitName": null,
           "killerId": null, "inSession": true, "playTime": 600}, "lostInsuredItems": [], "transferItems": {}})
}

async fn end(p: &Player, body: &Value) -> Value {
    post(p.addr, "/client/match/local/end", &p.session, body.clone()).await
}

/// `profile` with `item` added to its items (replacing one of the same id).
fn with_item(profile: &Value, item: Value) -> Value {
    let mut profile = profile.clone();
    let items = profile["Inventory"]["items"].as_array_mut().unwrap();
    items.retain(|i| i["_id"] != item["_id"]);
    items.push(item);
    profile
}

fn find<'a>(profile: &'a Value, id: &str) -> Option<&'a Value> {
    profile["Inventory"]["items"].as_array().unwrap().iter().find(|i| i["_id"] == id)
}

#[tokio::test]
async fn every_raid_route_answers_in_spt_shape() {
    let server = server().await;
    let addr = server.addr;
    let p = Player::new(addr, A, "Raider").await;
    let s = A;
    for path in [
        "/client/match/group/exit_from_menu",
        "/client/raid/configuration-by-profile",
        "/client/putMetrics",
        "/client/analytics/event-disconnect",
        "/client/location/getLocalloot",
    ] {
        let answer = post(addr, path, s, json!({})).await;
        assert_eq!((answer["err"].clone(), answer["data"].clone()), (json!(0), Value::Null), "{path}: {answer}");
    }
    let config = json!({"location": MAP, "timeVariant": "CURR", "side": "Pmc",
                        "wavesSettings": {"botAmount": "AsOnline", "botDifficulty": "AsOnline"}});
    assert_eq!(post(addr, "/client/raid/configuration", s, config).await["err"], 0);

    let menu = bare(addr, "/singleplayer/settings/raid/menu", s, json!({})).await;
    assert_eq!(menu["aiAmount"], "AsOnline");
    assert_eq!(menu["bossEnabled"], true);
    let weather = post(addr, "/client/localGame/weather", s, json!({})).await;
    assert!(weather["data"]["season"].is_u64(), "{weather}");
    let first = &weather["data"]["weather"][0];
    for key in [
        "pressure",
        "temp",
        "fog",
        "rain_intensity",
        "rain",
        "wind_gustiness",
        "wind_direction",
        "wind_speed",
        "cloud",
        "time",
        "date",
        "timestamp",
        "sptInRaidTimestamp",
    ] {
        assert!(!first[key].is_null(), "weather lacks {key}: {first}");
    }
    let metrics = post(addr, "/client/getMetricsConfig", s, json!({})).await;
    assert!(metrics["data"]["Keys"].is_array() && metrics["data"]["MemoryMeasureInterval"].is_u64(), "{metrics}");
    let time = bare(addr, "/singleplayer/settings/getRaidTime", s, json!({"Side": "Pmc", "Location": MAP})).await;
    assert_eq!(time["raidTimeMinutes"], database()["locations"][MAP]["base"]["EscapeTimeLimit"]);
    assert!(time["newSurviveTimeSeconds"].is_number() && time["exitChanges"] == json!([]), "{time}");

    let all = bare(addr, "/singleplayer/settings/bot/difficulties", s, json!({})).await;
    assert!(all["assault"]["normal"]["Core"].is_object() && all["pmcbear"]["hard"]["Core"].is_object(), "{all}");
    let one = bare(addr, "/singleplayer/settings/bot/difficulty/assault/hard", s, json!({})).await;
    assert_eq!(one, all["assault"]["hard"]);
    let core = bare(addr, "/singleplayer/settings/bot/difficulty/assault/core", s, json!({})).await;
    assert!(core["SAVAGE_KILL_DIST"].is_number(), "{core}");
    assert_eq!(bare(addr, "/singleplayer/settings/bot/maxCap/factory4_day", s, json!({})).await, json!(12));
    assert_eq!(bare(addr, "/singleplayer/settings/bot/limit/assault", s, json!({})).await, json!(20));
    assert!(bare(addr, "/singleplayer/bosstypes", s, json!({})).await.as_array().is_some_and(|b| !b.is_empty()));
    assert_eq!(bare(addr, "/singleplayer/scav/traitorscavhostile", s, json!({})).await, json!(15));

    let started = post(addr, "/client/match/local/start", s, json!({"location": MAP, "playerSide": "pmc"})).await;
    let data = &started["data"];
    assert!(data["serverId"].as_str().unwrap().starts_with("factory4_day.pmc "), "{data}");
    assert!(data["serverSettings"]["TraderServerSettings"].is_object(), "{data}");
    assert_eq!(data["profile"]["insuredItems"], json!([]));
    assert_eq!((data["transitionType"].clone(), data["transition"]["transitionType"].clone()), (json!(0), json!(0)));
    let base = &data["locationLoot"];
    assert_eq!(base["Id"], MAP);
    assert!(base["UnixDateTime"].as_u64().unwrap() > 1_600_000_000);
    let loot = base["Loot"].as_array().unwrap();
    assert!(loot.len() >= 3, "little loot: {base}");
    for spawn in loot {
        let items = spawn["Items"].as_array().unwrap();
        assert_eq!(spawn["Root"], items[0]["_id"], "{spawn}");
        assert!(items[0].get("parentId").is_none() && spawn["Position"].is_object(), "{spawn}");
        for item in &items[1..] {
            assert!(items.iter().any(|p| p["_id"] == item["parentId"]), "an orphan in {spawn}");
        }
    }
    // Each raid's loot has its own ids.
    let again = post(addr, "/client/match/local/start", s, json!({"location": MAP, "playerSide": "pmc"})).await;
    let ids = |loot: &Value| -> Vec<Value> {
        loot.as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["Items"].as_array().unwrap().iter().map(|i| i["_id"].clone()))
            .collect()
    };
    let (first_ids, second_ids) = (ids(&base["Loot"]), ids(&again["data"]["locationLoot"]["Loot"]));
    assert!(first_ids.iter().all(|id| !second_ids.contains(id)));

    let bots = post(
        addr,
        "/client/game/bot/generate",
        s,
        json!({"conditions": [{"Role": "assault", "Limit": 3, "Difficulty": "normal"},
                              {"Role": "pmcBEAR", "Limit": 1, "Difficulty": "hard"}]}),
    )
    .await;
    let bots = bots["data"].as_array().unwrap();
    assert_eq!(bots.len(), 20 + 10, "the preset batches: 20 assault, 10 pmcBEAR");
    for bot in bots {
        assert_eq!(bot["Info"]["Side"], "Savage");
        assert!(bot["Info"]["Settings"]["Role"].is_string() && bot["Inventory"]["equipment"].is_string(), "{bot}");
        assert!(bot["Inventory"]["items"].as_array().unwrap().iter().any(|i| i["slotId"] == "FirstPrimaryWeapon"));
        assert!(bot["Health"]["BodyParts"]["Head"]["Health"]["Maximum"].is_number());
    }
    assert_eq!(bots.iter().filter(|b| b["Info"]["Settings"]["BotDifficulty"] == "hard").count(), 10);

    let quote =
        post(addr, "/client/insurance/items/list/cost", s, json!({"traders": [TRADER], "items": [p.pockets]})).await;
    assert!(quote["data"].is_object(), "{quote}");

    // Without a profile, the raid's player routes say so.
    let none = post(addr, "/client/match/local/start", B, json!({"location": MAP, "playerSide": "pmc"})).await;
    assert_ne!(none["err"], 0);
    let nowhere =
        post(addr, "/client/match/local/start", s, json!({"location": "the_moon", "playerSide": "pmc"})).await;
    assert!(nowhere["errmsg"].as_str().unwrap().contains("no location"), "{nowhere}");
}

#[tokio::test]
async fn a_raid_survived_then_a_raid_killed_and_the_results_outlive_a_restart() {
    let server = server().await;
    let addr = server.addr;
    let (p, rifle, cash) = armed(addr, A, "Survivor").await;
    let stash_roubles = p.item(&p.roubles).await["upd"]["StackObjectsCount"].clone();

    // Survived: a loose item found, kept found-in-raid; a bot's pocket loot taken too.
    let (server_id, loot) = start(&p).await;
    let (found, found_tpl, found_count) = loose_items(&loot).into_iter().next().expect("loose loot");
    // A bot's pocket loot is drawn: in about one batch of five none of its bots has any that fits the
    // pockets' grids, so batches are asked for until one does (twenty at most).
    let mut looted = None;
    for _ in 0..20 {
        let bots = post(
            addr,
            "/client/game/bot/generate",
            A,
            json!({"conditions": [{"Role": "assault", "Limit": 1, "Difficulty": "normal"}]}),
        )
        .await;
        looted = bots["data"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|b| b["Inventory"]["items"].as_array().unwrap().clone())
            .find(|i| i["slotId"].as_str().is_some_and(|s| s.starts_with("pocket")));
        if looted.is_some() {
            break;
        }
    }
    let looted = looted.expect("a bot with pocket loot in twenty batches");
    let before = p.profile().await;
    let reported = with_item(
        &before,
        json!({"_id": found, "_tpl": found_tpl, "parentId": p.pockets, "slotId": "pocket2",
        "location": {"x": 0, "y": 0, "r": "Horizontal"}, "upd": {"StackObjectsCount": found_count, "SpawnedInSession": true}}),
    );
    let reported = with_item(
        &reported,
        json!({"_id": looted["_id"], "_tpl": looted["_tpl"], "parentId": p.pockets,
        "slotId": "pocket3", "location": {"x": 0, "y": 0, "r": "Horizontal"}, "upd": looted["upd"]}),
    );
    let mut reported = reported;
    reported["Info"]["Experience"] = json!(1234);
    let ended = end(&p, &end_body(&server_id, "Survived", &reported)).await;
    assert_eq!((ended["err"].clone(), ended["data"].clone()), (json!(0), Value::Null), "{ended}");
    let after = p.profile().await;
    let kept = find(&after, &found).expect("the found item is in the profile");
    assert_eq!(
        (kept["parentId"].as_str(), kept["upd"]["SpawnedInSession"].clone()),
        (Some(p.pockets.as_str()), json!(true))
    );
    assert!(find(&after, looted["_id"].as_str().unwrap()).is_some(), "the bot's loot was kept");
    assert!(find(&after, &rifle).is_some() && find(&after, &cash).is_some());
    assert_eq!(after["Info"]["Experience"], 1234.0);

    // Across a restart.
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let server = again.start().await.unwrap();
    let p = Player { addr: server.addr, ..p };
    let restarted = p.profile().await;
    assert!(find(&restarted, &found).is_some(), "the raid's result is lost after a restart");
    assert_eq!(restarted["Info"]["Experience"], 1234.0);

    // Killed: the rifle and the pockets' grids are lost, the special slot keeps its item (no longer
    // found in raid), the stash is untouched, the limbs are left at 30 %.
    let (server_id, loot) = start(&p).await;
    let (special, special_tpl, special_count) = loose_items(&loot).into_iter().next().expect("loose loot");
    let reported = with_item(
        &p.profile().await,
        json!({"_id": special, "_tpl": special_tpl, "parentId": p.pockets,
        "slotId": "SpecialSlot1", "upd": {"StackObjectsCount": special_count, "SpawnedInSession": true}}),
    );
    let ended = end(&p, &end_body(&server_id, "Killed", &reported)).await;
    assert_eq!(ended["err"], 0, "{ended}");
    let dead = p.profile().await;
    assert!(find(&dead, &rifle).is_none(), "the rifle outlived its owner");
    assert!(find(&dead, &cash).is_none() && find(&dead, &found).is_none(), "the pockets' grids outlived their owner");
    let kept = find(&dead, &special).expect("the special slot's item is kept");
    assert_eq!(kept["upd"]["SpawnedInSession"], false);
    assert!(find(&dead, &p.pockets).is_some(), "the pockets themselves stay");
    assert_eq!(find(&dead, &p.roubles).unwrap()["upd"]["StackObjectsCount"], stash_roubles);
    let head = &dead["Health"]["BodyParts"]["Head"]["Health"];
    assert_eq!(head["Current"].as_f64().unwrap(), head["Maximum"].as_f64().unwrap() * 0.3);
}

#[tokio::test]
async fn refused_ends_change_nothing() {
    let server = server().await;
    let addr = server.addr;
    let (p, rifle, cash) = armed(addr, A, "Cheater").await;

    // An end without a start.
    let ghost = end(&p, &end_body("factory4_day.pmc 1", "Survived", &p.profile().await)).await;
    assert!(ghost["errmsg"].as_str().unwrap().contains("no raid is open"), "{ghost}");

    let (server_id, loot) = start(&p).await;
    let (found, found_tpl, _) = loose_items(&loot).into_iter().next().expect("loose loot");
    let before = p.profile().await;
    let loose = |id: &str, tpl: &str, count: u64| {
        json!({"_id": id, "_tpl": tpl, "parentId": p.pockets, "slotId": "pocket2",
        "location": {"x": 0, "y": 0, "r": "Horizontal"}, "upd": {"StackObjectsCount": count}})
    };
    let never_issued = gamedb::hex_id(90);
    let other_tpl = if found_tpl == gamedb::hex_id(1) { gamedb::hex_id(2) } else { gamedb::hex_id(1) };
    let mut stolen_stash = p.item(&p.roubles).await;
    stolen_stash["parentId"] = json!(p.pockets);
    stolen_stash["slotId"] = json!("pocket2");
    let mut inflated = p.item(&cash).await;
    inflated["upd"]["StackObjectsCount"] = json!(400_000);
    let mut reskinned = p.item(&rifle).await;
    reskinned["_tpl"] = json!(SECURE);
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "an item never issued",
            with_item(&before, loose("d0d0d0d0d0d0d0d0d0d0d0d0", &never_issued, 1)),
            "never issued",
        ),
        ("an issued item with another template", with_item(&before, loose(&found, &other_tpl, 1)), "was issued as"),
        ("an owned item with another template", with_item(&before, reskinned), "before the raid"),
        ("money created", with_item(&before, inflated), "came in"),
        ("a stash item brought out", with_item(&before, stolen_stash), "outside the raid"),
        (
            "another profile",
            {
                let mut o = before.clone();
                o["_id"] = json!("ffffffffffffffffffffffff");
                o
            },
            "the report is of profile",
        ),
    ];
    for (what, reported, why) in cases {
        let refused = end(&p, &end_body(&server_id, "Survived", &reported)).await;
        assert_ne!(refused["err"], 0, "{what}: accepted");
        assert!(refused["errmsg"].as_str().unwrap().contains(why), "{what}: {refused}");
        assert_eq!(p.profile().await, before, "{what}: the profile changed");
    }
    let wrong_raid = end(&p, &end_body("factory4_day.pmc 1", "Survived", &before)).await;
    assert!(wrong_raid["errmsg"].as_str().unwrap().contains("the open raid is"), "{wrong_raid}");
    let unknown = end(&p, &end_body(&server_id, "Won", &before)).await;
    assert!(unknown["errmsg"].as_str().unwrap().contains("unknown result"), "{unknown}");

    // Malformed bodies are 400s.
    for body in [&b"{"[..], br#"{"serverId": 5}"#, br#"{"serverId": "x", "results": {"result": "Survived"}}"#] {
        let reply = send(addr, &Call::post("/client/match/local/end", body).session(A)).await.unwrap();
        assert_eq!(reply.status, 400, "{}", reply.text());
    }
    assert_eq!(p.profile().await, before);

    // The raid is still open: a valid end applies, and a second one is refused.
    let good = end_body(&server_id, "Survived", &with_item(&before, loose(&found, &found_tpl, 1)));
    let (server, record) = store_value(server, &format!("raid.{}", p.uid), None).await;
    let p = Player { addr: server.addr, ..p };
    assert_eq!(end(&p, &good).await["err"], 0);
    let twice = end(&p, &good).await;
    assert!(twice["errmsg"].as_str().unwrap().contains("no raid is open"), "{twice}");
    let ended = p.profile().await;
    assert!(find(&ended, &found).is_some());

    // A crash between the profile's write and the record's deletion leaves the record: the profile's
    // marker still refuses the second end, and the stale record goes.
    let (server, _) = store_value(server, &format!("raid.{}", p.uid), record).await;
    let p = Player { addr: server.addr, ..p };
    let stale = end(&p, &good).await;
    assert!(stale["errmsg"].as_str().unwrap().contains("already ended"), "{stale}");
    assert_eq!(p.profile().await, ended);
    let gone = end(&p, &good).await;
    assert!(gone["errmsg"].as_str().unwrap().contains("no raid is open"), "{gone}");
}

/// Stops `server`, reads the emulator's store value `key` (writing `put` there first, when given), and
/// starts it again.
async fn store_value(server: TestServer, key: &str, put: Option<Value>) -> (TestServer, Option<Value>) {
    let again = server.restart_builder();
    let root = server.root().to_path_buf();
    server.stop().await.unwrap();
    let store = modhost_store::Store::open(&root.join("store"), false).unwrap();
    if let Some(value) = put {
        store.set("emulator", key, value.to_string().as_bytes()).unwrap();
    }
    let value = store.get("emulator", key).unwrap().map(|bytes| serde_json::from_slice(&bytes).unwrap());
    drop(store);
    (again.start().await.unwrap(), value)
}

#[tokio::test]
async fn a_scav_raid_changes_the_scav_not_the_pmc() {
    let server = server().await;
    let addr = server.addr;
    let p = Player::new(addr, A, "Scavver").await;
    let pmc = p.profile().await;
    let started = post(addr, "/client/match/local/start", A, json!({"location": MAP, "playerSide": "savage"})).await;
    assert_eq!(started["err"], 0, "{started}");
    let server_id = started["data"]["serverId"].as_str().unwrap().to_owned();
    assert!(server_id.starts_with("factory4_day.savage "));
    // The scav as the store holds it (the profile list that shows it is the boot's).
    let (server, scav) = store_value(server, &format!("scav.{}", p.uid), None).await;
    let scav = scav.expect("the scav exists");
    assert_eq!(scav["Info"]["Side"], "Savage");
    assert_ne!(scav["_id"], pmc["_id"]);
    let p = Player { addr: server.addr, ..p };
    let mut reported = scav.clone();
    reported.as_object_mut().unwrap().shift_remove("_modhost");
    let items: Vec<Value> = scav["Inventory"]["items"].as_object().unwrap().values().cloned().collect();
    reported["Inventory"]["items"] = json!(items);
    reported["Info"]["Experience"] = json!(300);
    let ended = end(&p, &end_body(&server_id, "Killed", &reported)).await;
    assert_eq!(ended["err"], 0, "{ended}");
    assert_eq!(p.profile().await, pmc, "a scav raid changed the PMC");
    // The dead scav was replaced: a new id and loadout, its experience kept.
    let (_server, after) = store_value(server, &format!("scav.{}", p.uid), None).await;
    let after = after.unwrap();
    assert_ne!(after["_id"], scav["_id"]);
    assert_eq!(after["Info"]["Experience"], 300.0);
    assert_eq!(after["Info"]["Side"], "Savage");
    // It waits out SPT's cooldown (`globals.config.SavagePlayCooldown`, 1 500 s) on the game's clock.
    let wall = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let lock = after["Info"]["SavageLockTime"].as_u64().unwrap();
    assert!((wall + 1_440..=wall + 1_500).contains(&lock), "{lock} against {wall}");
}

#[tokio::test]
async fn a_raid_carries_its_progress_and_nothing_a_raid_cannot_change() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Progress").await;
    let quests = database()["templates"]["quests"].clone();
    let mut ids = quests.as_object().unwrap().keys().cloned();
    let (active, done, unknown_to_profile) = (ids.next().unwrap(), ids.next().unwrap(), ids.next().unwrap());
    let handover = quests[&active]["conditions"]["AvailableForFinish"][0]["id"].as_str().unwrap().to_owned();
    let condition = KILLS.to_owned();

    // The profile has one quest started and one handed in, and Fence at standing 0.
    let key = format!("profile.{}", p.uid);
    let (server, stored) = store_value(server, &key, None).await;
    let mut stored = stored.unwrap();
    stored["Quests"] = json!([
        {"qid": active, "status": 2, "startTime": 1, "statusTimers": {"2": 1}, "completedConditions": []},
        {"qid": done, "status": 4, "startTime": 1, "statusTimers": {"4": 1}, "completedConditions": []},
    ]);
    stored["TradersInfo"]["579dc571d53a0658a154fbec"] = json!({"loyaltyLevel": 1, "standing": 0.0, "unlocked": true});
    let (server, _) = store_value(server, &key, Some(stored)).await;
    let p = Player { addr: server.addr, ..p };

    let (server_id, _) = start(&p).await;
    let mut reported = p.profile().await;
    reported["Quests"] = json!([
        {"qid": active, "status": "AvailableForFinish", "completedConditions": [condition, handover, "not-a-condition"]},
        {"qid": done, "status": 2, "completedConditions": []},
        {"qid": unknown_to_profile, "status": 3, "completedConditions": []},
    ]);
    reported["TaskConditionCounters"] = json!({
        "c-active": {"id": "c-active", "sourceId": active, "type": "Kills", "value": 5},
        "c-done": {"id": "c-done", "sourceId": done, "type": "Kills", "value": 9},
        "c-achievement": {"id": "c-achievement", "sourceId": ACHIEVEMENT, "type": "Kills", "value": 1},
    });
    reported["Encyclopedia"] = json!({RIFLE: true, "ffffffffffffffffffffffff": true});
    reported["Stats"] = json!({"Eft": {"TotalSessionExperience": 700, "SurvivorClass": "Marauder",
                                       "OverallCounters": {"Items": [{"Key": ["Kills"], "Value": 3}]}}});
    reported["Achievements"] = json!({ACHIEVEMENT: 1_700_000_000u64, "ffffffffffffffffffffffff": 1});
    reported["SurvivorClass"] = json!("Marauder");
    reported["TradersInfo"]["579dc571d53a0658a154fbec"] = json!({"standing": 14.0});
    let ended = end(&p, &end_body(&server_id, "Survived", &reported)).await;
    assert_eq!(ended["err"], 0, "{ended}");

    let after = p.profile().await;
    let states: Vec<&Value> = after["Quests"].as_array().unwrap().iter().collect();
    let of = |qid: &str| states.iter().find(|q| q["qid"] == qid).copied();
    let moved = of(&active).expect("the started quest");
    assert_eq!(moved["status"], 3, "a started quest became ready to hand in: {moved}");
    assert_eq!(moved["completedConditions"], json!([condition]), "only the quest's own, and no handover");
    assert!(moved["statusTimers"]["3"].as_u64().is_some(), "{moved}");
    assert_eq!(of(&done).unwrap()["status"], 4, "a handed-in quest cannot be restarted by a raid");
    assert!(of(&unknown_to_profile).is_none(), "a raid cannot start a quest");
    let counters = after["TaskConditionCounters"].as_object().unwrap();
    assert_eq!(counters["c-active"]["value"], 5.0);
    assert!(counters.contains_key("c-achievement") && !counters.contains_key("c-done"), "{counters:?}");
    assert_eq!(after["Encyclopedia"], json!({RIFLE: true}));
    assert_eq!(after["Stats"]["Eft"]["TotalSessionExperience"], 0);
    assert_eq!(after["Stats"]["Eft"]["OverallCounters"]["Items"][0]["Value"], 3);
    assert_eq!(after["Achievements"], json!({ACHIEVEMENT: 1_700_000_000u64}));
    assert_eq!(after["SurvivorClass"], 2);
    assert_eq!(
        after["TradersInfo"]["579dc571d53a0658a154fbec"]["standing"], 1.0,
        "Fence's standing rose by at most the raid's cap"
    );

    // The kills count, but the handover the report claimed does not: the quest cannot be handed in.
    let warning = p.act(json!({"Action": "QuestComplete", "qid": active})).await.expect("refused");
    assert!(warning.contains(&handover) && warning.contains("HandoverItem"), "{warning}");
}

/// `profile` (as the client reports it) with item `from` named `to`, what is in it following it.
fn renamed(profile: &Value, from: &str, to: &str) -> Value {
    let mut profile = profile.clone();
    for item in profile["Inventory"]["items"].as_array_mut().unwrap() {
        if item["_id"] == from {
            item["_id"] = json!(to);
        }
        if item["parentId"] == from {
            item["parentId"] = json!(to);
        }
    }
    profile
}

/// `profile` with `units` in item `id`'s stack.
fn with_units(profile: &Value, id: &str, units: u64) -> Value {
    let mut item = find(profile, id).unwrap().clone();
    item["upd"]["StackObjectsCount"] = json!(units);
    with_item(profile, item)
}

#[tokio::test]
async fn a_brought_in_item_leaves_a_raid_under_its_own_id_unless_a_stack_splits() {
    let server = server().await;
    let (p, rifle, cash) = armed(server.addr, A, "Renamer").await;
    let (server_id, _) = start(&p).await;
    let before = p.profile().await;
    let fresh = "f0f0f0f0f0f0f0f0f0f0f0f0";
    for result in ["Survived", "Runner", "Transit", "Killed"] {
        let refused = end(&p, &end_body(&server_id, result, &renamed(&before, &rifle, fresh))).await;
        assert_ne!(refused["err"], 0, "{result}: the rifle came out under a new id: {refused}");
        let why = refused["errmsg"].as_str().unwrap();
        assert!(why.contains("does not stack") && why.contains("nothing was changed"), "{result}: {why}");
        assert_eq!(p.profile().await, before, "{result}: the profile changed");
    }
    // A stack splits into a new id: the cash in two.
    let mut split = with_units(&before, &cash, 400);
    let mut part = find(&before, &cash).unwrap().clone();
    part["_id"] = json!(fresh);
    part["slotId"] = json!("pocket2");
    part["upd"]["StackObjectsCount"] = json!(600);
    split = with_item(&split, part);
    let ended = end(&p, &end_body(&server_id, "Survived", &split)).await;
    assert_eq!(ended["err"], 0, "{ended}");
    let after = p.profile().await;
    let units = |id: &str| find(&after, id).map(|i| i["upd"]["StackObjectsCount"].clone());
    assert_eq!((units(&cash), units(fresh)), (Some(json!(400)), Some(json!(600))));
    assert!(find(&after, &rifle).is_some());

    // And merges: both stacks into a new one, their ids gone.
    let (server_id, _) = start(&p).await;
    let one = "f1f1f1f1f1f1f1f1f1f1f1f1";
    let merged = with_units(&renamed(&without_item(&p.profile().await, fresh), &cash, one), one, 1000);
    let ended = end(&p, &end_body(&server_id, "Survived", &merged)).await;
    assert_eq!(ended["err"], 0, "{ended}");
    let after = p.profile().await;
    assert_eq!(find(&after, one).unwrap()["upd"]["StackObjectsCount"], 1000);
    assert!(find(&after, &cash).is_none() && find(&after, fresh).is_none(), "the merged stacks are gone");
}

/// `profile` without item `id`.
fn without_item(profile: &Value, id: &str) -> Value {
    let mut profile = profile.clone();
    profile["Inventory"]["items"].as_array_mut().unwrap().retain(|i| i["_id"] != id);
    profile
}

#[tokio::test]
async fn a_stack_brought_in_does_not_come_out_found_in_raid_under_a_new_id() {
    let server = server().await;
    let addr = server.addr;
    let (p, _, cash) = armed(addr, A, "Launderer").await;
    // A raid that issues roubles (in its loot or on a bot): started again until one does (twenty at most).
    let mut issued = None;
    for _ in 0..20 {
        let (server_id, loot) = start(&p).await;
        let mut items: Vec<Value> = loot.iter().flat_map(|s| s["Items"].as_array().unwrap().clone()).collect();
        let ask = json!({"conditions": [{"Role": "assault", "Limit": 1, "Difficulty": "normal"}]});
        let bots = post(addr, "/client/game/bot/generate", A, ask).await;
        for bot in bots["data"].as_array().unwrap() {
            items.extend(
                bot["Inventory"]["items"].as_array().unwrap().iter().filter(|i| i.get("parentId").is_some()).cloned(),
            );
        }
        let roubles: Vec<&Value> = items.iter().filter(|i| i["_tpl"] == gamedb::ROUBLES).collect();
        if let Some(one) = roubles.first() {
            let units: u64 = roubles.iter().map(|i| i["upd"]["StackObjectsCount"].as_u64().unwrap_or(1)).sum();
            issued = Some((server_id, (*one).clone(), units));
            break;
        }
    }
    let (server_id, looted, units) = issued.expect("a raid issuing roubles in twenty");
    assert!(units < 1000, "the raid issued {units} roubles, as many as the cash");
    let before = p.profile().await;
    // The cash (not found in raid) under a new id, claiming to be found; and the issued roubles, found.
    let laundered = "f2f2f2f2f2f2f2f2f2f2f2f2";
    let mut reported = renamed(&before, &cash, laundered);
    let mut claimed = find(&reported, laundered).unwrap().clone();
    claimed["upd"]["SpawnedInSession"] = json!(true);
    reported = with_item(&reported, claimed);
    let picked = json!({"_id": looted["_id"], "_tpl": gamedb::ROUBLES, "parentId": p.pockets, "slotId": "pocket2",
        "location": {"x": 0, "y": 0, "r": "Horizontal"},
        "upd": {"StackObjectsCount": looted["upd"]["StackObjectsCount"].as_u64().unwrap_or(1), "SpawnedInSession": true}});
    reported = with_item(&reported, picked);
    let ended = end(&p, &end_body(&server_id, "Survived", &reported)).await;
    assert_eq!(ended["err"], 0, "{ended}");
    let after = p.profile().await;
    assert_eq!(find(&after, laundered).unwrap()["upd"]["SpawnedInSession"], false, "the cash became found in raid");
    let picked = find(&after, looted["_id"].as_str().unwrap()).expect("the roubles picked up");
    assert_eq!(picked["upd"]["SpawnedInSession"], true, "roubles the raid issued are found");
}

#[tokio::test]
async fn a_scavs_items_leave_its_raid_under_their_own_ids() {
    let server = server().await;
    let addr = server.addr;
    let p = Player::new(addr, A, "Renamed scav").await;
    let started = post(addr, "/client/match/local/start", A, json!({"location": MAP, "playerSide": "savage"})).await;
    assert_eq!(started["err"], 0, "{started}");
    let server_id = started["data"]["serverId"].as_str().unwrap().to_owned();
    let scav = post(addr, "/client/game/profile/list", A, json!({})).await["data"][1].clone();
    assert_eq!(scav["Info"]["Side"], "Savage", "{scav}");
    let rifle = scav["Inventory"]["items"].as_array().unwrap().iter().find(|i| i["_tpl"] == RIFLE).expect("a rifle");
    let rifle = rifle["_id"].as_str().unwrap().to_owned();
    let refused = end(&p, &end_body(&server_id, "Survived", &renamed(&scav, &rifle, "f3f3f3f3f3f3f3f3f3f3f3f3"))).await;
    assert_ne!(refused["err"], 0, "the scav's rifle came out under a new id: {refused}");
    assert!(refused["errmsg"].as_str().unwrap().contains("does not stack"), "{refused}");
    let ended = end(&p, &end_body(&server_id, "Survived", &scav)).await;
    assert_eq!(ended["err"], 0, "{ended}");
    let after = post(addr, "/client/game/profile/list", A, json!({})).await["data"][1].clone();
    assert!(find(&after, &rifle).is_some(), "the scav keeps its rifle under its id");
}
