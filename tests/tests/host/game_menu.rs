//! The client's main menu over the wire: each route answers in the shape SPT's client reads (keys,
//! kinds, enveloped), the per-player answers (quests, the assort, builds, friends, mail, customization,
//! repeatable quests, the achievement statistic) follow the profile, and unknown traders and malformed
//! bodies get clear errors. The profile is changed between runs the way a player's progress would
//! leave it, by writing the store of a stopped server.

use crate::emulator::{A, B, emulator, post};
use modhost_gamedb::{RIFLE, TRADER, hex_id};
use modhost_tests::TestServer;
use modhost_tests::client::{Call, send};
use serde_json::{Value, json};
use std::net::SocketAddr;

/// The generated menu record `n` (`host/gamedb/src/menu.rs`): quests 1-7, achievements 500-502.
fn record(n: u64) -> String {
    hex_id(1 << 50 | n)
}

/// Prapor's offers: open to all, from loyalty level 2 (with a part), unlocked by "Debut"'s success.
const OPEN: &str = "6000000000000000000000a1";
const GATED: &str = "6000000000000000000000b1";
const PART: &str = "6000000000000000000000b2";
const QUESTED: &str = "6000000000000000000000b3";

async fn create(addr: SocketAddr, session: &str, nickname: &str, side: &str) -> String {
    let created = post(addr, "/client/game/profile/create", session, json!({"nickname": nickname, "side": side})).await;
    created["data"]["uid"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned()
}

/// The data of a successful answer to `path`.
async fn data(addr: SocketAddr, path: &str, session: &str) -> Value {
    let answer = post(addr, path, session, json!({})).await;
    assert_eq!(answer["err"], 0, "{path}: {answer}");
    answer["data"].clone()
}

/// The member names of an object, sorted (the client reads members by name, in any order).
fn keys(value: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = value.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    names.sort_unstable();
    names
}

/// The quest names in a quest list, sorted.
async fn quest_names(addr: SocketAddr, session: &str) -> Vec<String> {
    let list = data(addr, "/client/quest/list", session).await;
    let mut names: Vec<String> =
        list.as_array().unwrap().iter().map(|q| q["QuestName"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

fn offer_ids(assort: &Value) -> Vec<&str> {
    assort["items"].as_array().unwrap().iter().map(|i| i["_id"].as_str().unwrap()).collect()
}

/// Stops `server`, lets `change` edit the emulator's store (`profile.<uid>`, `userdata.<uid>`…) as
/// JSON documents, and starts it again on the same root.
async fn with_store(
    server: TestServer,
    change: impl FnOnce(&dyn Fn(&str) -> Value, &dyn Fn(&str, &Value)),
) -> TestServer {
    let again = server.restart_builder();
    let stopped = server.stop_and_open_store().await.unwrap();
    {
        let store = &stopped.store;
        let get = |key: &str| -> Value {
            store.get("emulator", key).unwrap().map(|b| serde_json::from_slice(&b).unwrap()).unwrap_or(Value::Null)
        };
        let set = |key: &str, value: &Value| {
            store.set("emulator", key, value.to_string().as_bytes()).unwrap();
        };
        change(&get, &set);
    }
    drop(stopped);
    again.start().await.unwrap()
}

#[tokio::test]
async fn every_menu_route_answers_in_the_clients_shape() {
    let server = emulator().await;
    let addr = server.addr;
    create(addr, A, "Menu", "Usec").await;

    let weather = data(addr, "/client/weather", A).await;
    assert_eq!(keys(&weather), ["acceleration", "date", "season", "time", "weather"], "{weather}");
    assert_eq!(weather["acceleration"], 7.0);
    let time = weather["time"].as_str().unwrap();
    assert!(time.len() == 8 && time.as_bytes()[2] == b':' && time.as_bytes()[5] == b':', "{time}");
    assert!(weather["season"].as_u64().is_some_and(|s| s <= 6));
    let w = &weather["weather"];
    for key in ["pressure", "temp", "fog", "rain_intensity", "rain", "wind_gustiness", "wind_speed", "cloud"] {
        assert!(w[key].is_number(), "{key}: {w}");
    }
    assert!((760.0..=780.0).contains(&w["pressure"].as_f64().unwrap()), "{w}");
    assert!((1..=8).contains(&w["wind_direction"].as_u64().unwrap()), "{w}");
    assert_eq!(w["time"].as_str().unwrap(), format!("{} {time}", weather["date"].as_str().unwrap()));
    assert!(w["timestamp"].as_u64().is_some() && w["sptInRaidTimestamp"] == w["timestamp"]);

    let locations = data(addr, "/client/locations", A).await;
    assert_eq!(keys(&locations), ["locations", "paths"]);
    let customs = &locations["locations"]["56f40101d2720b2a4d8b45d6"];
    assert_eq!(
        (&customs["Id"], &customs["Name"], &customs["Enabled"]),
        (&json!("bigmap"), &json!("Customs"), &json!(true))
    );
    for key in ["exits", "waves", "BossLocationSpawn", "SpawnPointParams", "AirdropParameters"] {
        assert!(customs[key].as_array().is_some_and(|a| !a.is_empty()), "{key}");
    }
    assert_eq!(locations["locations"].as_object().unwrap().len(), 3);
    assert!(locations["paths"].as_array().unwrap()[0]["Source"].is_string());

    let areas = data(addr, "/client/hideout/areas", A).await;
    assert!(
        areas
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["_id"].is_string() && a["type"].is_u64() && a["stages"]["0"].is_object())
    );
    assert!(data(addr, "/client/hideout/qte/list", A).await[0]["quickTimeEvents"].is_array());
    assert!(data(addr, "/client/hideout/settings", A).await["generatorFuelFlowRate"].is_number());
    let recipes = data(addr, "/client/hideout/production/recipes", A).await;
    assert_eq!(keys(&recipes), ["cultistRecipes", "recipes", "scavRecipes"]);
    assert!(recipes["recipes"][0]["requirements"].is_array());
    assert_eq!(keys(&data(addr, "/client/hideout/customization/offer/list", A).await), ["globals", "slots"]);

    let builds = data(addr, "/client/builds/list", A).await;
    assert_eq!(keys(&builds), ["equipmentBuilds", "magazineBuilds", "weaponBuilds"]);
    assert_eq!(builds["equipmentBuilds"][0]["Name"], "Generated default", "the default presets follow the player's");

    let friends = data(addr, "/client/friend/list", A).await;
    assert_eq!(keys(&friends), ["Friends", "Ignore", "InIgnoreList"]);
    let bots: Vec<&Value> = friends["Friends"].as_array().unwrap().iter().map(|f| &f["Info"]["Nickname"]).collect();
    assert_eq!(bots, [&json!("Commando"), &json!("SPT")]);
    for path in ["/client/friend/request/list/inbox", "/client/friend/request/list/outbox", "/client/mail/dialog/list"]
    {
        assert_eq!(data(addr, path, A).await, json!([]), "{path}");
    }
    let chat = data(addr, "/client/chatServer/list", A).await;
    assert_eq!((&chat[0]["RegistrationId"], &chat[0]["Chats"][0]["_id"]), (&json!(20), &json!("0")));

    let storage = data(addr, "/client/customization/storage", A).await;
    assert!(storage.as_array().unwrap().iter().all(|s| keys(s) == ["id", "source", "type"]), "{storage}");
    assert_eq!(storage.as_array().unwrap().len(), 3);
    assert_eq!(data(addr, "/client/trading/customization/storage", A).await, json!([]));

    assert_eq!(data(addr, "/client/server/list", A).await, json!([{"ip": "127.0.0.1", "port": 80}]));
    assert_eq!(data(addr, "/client/match/group/current", A).await, json!({"squad": []}));
    assert_eq!(data(addr, "/client/checkVersion", A).await, json!({"isvalid": true, "latestVersion": "0.16.0.36625"}));
    let achievements = data(addr, "/client/achievement/list", A).await;
    assert_eq!(achievements["elements"].as_array().unwrap().len(), 3);
    let statistic = data(addr, "/client/achievement/statistic", A).await;
    assert_eq!(statistic["elements"][record(500)], 0);
    assert!(data(addr, "/client/prestige/list", A).await["elements"][0]["conditions"].is_array());
    let survey = data(addr, "/client/survey", A).await;
    assert_eq!(keys(&survey), ["locale", "survey"]);
    assert!(survey["survey"]["questions"][0]["answers"].is_array());

    let prapor = data(addr, &format!("/client/trading/api/getTrader/{TRADER}"), A).await;
    assert_eq!(prapor["_id"], TRADER);
    assert_eq!(data(addr, "/client/trading/api/getTrader/ragfair", A).await, json!({"currency": "RUB"}));
    let prices = data(addr, &format!("/client/items/prices/{TRADER}"), A).await;
    assert_eq!(keys(&prices), ["currencyCourses", "prices", "supplyNextTime"]);
    assert_eq!(prices["prices"][RIFLE], 22000.0, "the handbook's price");
    assert_eq!(prices["currencyCourses"]["5449016a4bdc2d6f028b456f"].as_f64(), Some(1.0));
    let flea = data(addr, "/client/items/prices", A).await;
    assert_eq!(flea[RIFLE], 31000, "the flea's price wins over the handbook's");
    assert_eq!(flea[hex_id(0)], 100.0, "the handbook's price fills the gaps");
    assert_eq!(data(addr, "/client/repeatalbeQuests/activityPeriods", A).await, json!([]), "level 1 unlocks none");
}

#[tokio::test]
async fn quests_assort_and_repeatables_follow_the_profile() {
    let server = emulator().await;
    let addr = server.addr;
    let usec = create(addr, A, "Lefty", "Usec").await;
    let bear = create(addr, B, "Righty", "Bear").await;

    // Level 1: the open quests of the player's side, and the edition-gated one without its roubles.
    assert_eq!(quest_names(addr, A).await, ["Collector's cut", "Debut", "Usec business"]);
    assert_eq!(quest_names(addr, B).await, ["Bear business", "Collector's cut", "Debut"]);
    let list = data(addr, "/client/quest/list", A).await;
    let cut = list.as_array().unwrap().iter().find(|q| q["_id"] == record(7).as_str()).unwrap();
    assert_eq!(cut["rewards"]["Success"].as_array().unwrap().len(), 1, "the standard edition does not get the roubles");
    let assort = data(addr, &format!("/client/trading/api/getTraderAssort/{TRADER}"), A).await;
    assert_eq!(keys(&assort), ["barter_scheme", "items", "loyal_level_items", "nextResupply"]);
    assert_eq!(offer_ids(&assort), [OPEN]);
    assert_eq!(keys(&assort["barter_scheme"]), [OPEN]);
    assert_eq!(keys(&assort["loyal_level_items"]), [OPEN]);

    // The USEC player grows: level 15, "Debut" done, loyalty 2, three rifles bought, an achievement,
    // a friend, a build, a message and a suit of their own, another edition.
    let server = with_store(server, |get, set| {
        let key = format!("profile.{usec}");
        let mut profile = get(&key);
        profile["Info"]["Level"] = json!(15);
        profile["Info"]["GameVersion"] = json!("edge_of_darkness");
        profile["Quests"] = json!([{"qid": record(1), "status": "Success", "statusTimers": {}}]);
        profile["TradersInfo"] = json!({TRADER: {"loyaltyLevel": 2, "standing": 0.2, "salesSum": 0}});
        // Bought now: a purchase before the trader's last resupply would count nothing.
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        profile["TraderPurchases"] = json!({TRADER: {OPEN: {"count": 3, "purchaseTimestamp": now}}});
        profile["Achievements"] = json!({record(500): 1_700_000_000});
        // The mailbox is in the profile (`mail/mailbox.rs`): a dialogue's header with its newest message.
        profile["_mail"] = json!({
            "dialogues": {TRADER: {"_id": TRADER, "type": 2, "new": 1, "pinned": false, "attachmentsNew": 0,
                                   "last": {"dt": 2, "type": 2, "uid": TRADER, "text": "newest", "templateId": "t"}}},
            "messages": {TRADER: {
                "m1": {"_id": "m1", "uid": TRADER, "type": 2, "dt": 1, "text": "first"},
                "m2": {"_id": "m2", "uid": TRADER, "type": 2, "dt": 2, "text": "newest", "templateId": "t"},
            }},
        });
        set(&key, &profile);
        set(&format!("userdata.{usec}"), &json!({
            "friends": [bear],
            "customisationUnlocks": [{"id": "suit0000000000000000000a", "source": "unlockedInGame", "type": "suite"}],
            "userbuilds": {"weaponBuilds": [{"Id": "w1", "Name": "Mine", "Root": "r", "Items": []}]},
        }));
    })
    .await;
    let addr = server.addr;

    assert_eq!(
        quest_names(addr, A).await,
        ["Collector's cut", "Debut", "Delivery from the past", "Loyal customer", "Shootout picnic", "Usec business"]
    );
    assert_eq!(
        quest_names(addr, B).await,
        ["Bear business", "Collector's cut", "Debut"],
        "the other player is unchanged"
    );
    let list = data(addr, "/client/quest/list", A).await;
    let cut = list.as_array().unwrap().iter().find(|q| q["_id"] == record(7).as_str()).unwrap();
    assert_eq!(cut["rewards"]["Success"].as_array().unwrap().len(), 2, "this edition gets the roubles");

    let assort = data(addr, &format!("/client/trading/api/getTraderAssort/{TRADER}"), A).await;
    assert_eq!(offer_ids(&assort), [OPEN, GATED, PART, QUESTED]);
    let open = &assort["items"][0]["upd"];
    assert_eq!((&open["StackObjectsCount"], &open["BuyRestrictionCurrent"]), (&json!(97), &json!(3)));
    assert_eq!(offer_ids(&data(addr, &format!("/client/trading/api/getTraderAssort/{TRADER}"), B).await), [OPEN]);

    let friends = data(addr, "/client/friend/list", A).await;
    let last = friends["Friends"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (&last["_id"], &last["Info"]["Nickname"], &last["Info"]["Side"]),
        (&json!(bear), &json!("Righty"), &json!("Bear"))
    );
    assert_eq!(data(addr, "/client/customization/storage", A).await.as_array().unwrap().len(), 4);
    assert_eq!(data(addr, "/client/trading/customization/storage", A).await[0]["source"], "unlockedInGame");
    let builds = data(addr, "/client/builds/list", A).await;
    assert_eq!(builds["weaponBuilds"][0]["Name"], "Mine");
    let mail = data(addr, "/client/mail/dialog/list", A).await;
    assert_eq!(
        (&mail[0]["_id"], &mail[0]["message"]["text"], &mail[0]["new"]),
        (&json!(TRADER), &json!("newest"), &json!(1))
    );
    let statistic = data(addr, "/client/achievement/statistic", A).await;
    assert_eq!((&statistic["elements"][record(500)], &statistic["elements"][record(501)]), (&json!(50), &json!(0)));

    // Level 15: the daily and weekly periods.
    let periods = data(addr, "/client/repeatalbeQuests/activityPeriods", A).await;
    let names: Vec<&Value> = periods.as_array().unwrap().iter().map(|p| &p["name"]).collect();
    assert_eq!(names, [&json!("Daily"), &json!("Weekly")]);
    assert!(periods[0]["endTime"].as_u64().unwrap() > 1_700_000_000);
    for key in ["id", "activeQuests", "inactiveQuests", "changeRequirement", "freeChanges", "freeChangesAvailable"] {
        assert!(!periods[0][key].is_null(), "{key}");
    }
    assert_eq!(data(addr, "/client/repeatalbeQuests/activityPeriods", A).await, periods);
    // The periods are the profile's now: they run to their end time across calls and restarts.
    let periods_again = periods.clone();
    let server = with_store(server, move |get, _| {
        assert_eq!(get(&format!("profile.{usec}"))["RepeatableQuests"], periods_again);
    })
    .await;
    assert_eq!(data(server.addr, "/client/repeatalbeQuests/activityPeriods", A).await, periods);
}

#[tokio::test]
async fn unknown_traders_and_malformed_bodies_get_clear_errors() {
    let server = emulator().await;
    let addr = server.addr;
    create(addr, A, "Picky", "Usec").await;

    for path in [
        "/client/trading/api/getTrader/ffffffffffffffffffffffff",
        "/client/trading/api/getTraderAssort/ffffffffffffffffffffffff",
        "/client/items/prices/ffffffffffffffffffffffff",
    ] {
        let answer = post(addr, path, A, json!({})).await;
        assert_eq!(answer["err"], 1, "{path}: {answer}");
        assert_eq!(answer["errmsg"], "there is no trader ffffffffffffffffffffffff", "{path}");
    }
    for path in ["/client/trading/api/getTrader/", "/client/trading/api/getTraderAssort/..%2Fglobals"] {
        let answer = post(addr, path, A, json!({})).await;
        assert_eq!(answer["errmsg"], "the path does not name a trader", "{path}: {answer}");
    }
    // The per-player routes need a profile.
    for path in ["/client/quest/list", "/client/builds/list", &format!("/client/trading/api/getTraderAssort/{TRADER}")]
    {
        let answer = post(addr, path, B, json!({})).await;
        assert_eq!(answer["err"], 1, "{path}: {answer}");
        assert!(answer["errmsg"].as_str().unwrap().contains("needs a session that plays a profile"), "{answer}");
    }
    // A body that is not a JSON object, or too large, is refused before anything is read.
    for path in ["/client/quest/list", "/client/mail/dialog/list", "/client/chatServer/list"] {
        let reply = send(addr, &Call::post(path, b"{\"completed\": tru").session(A)).await.unwrap();
        assert_eq!(reply.status, 400, "{path}: {}", reply.text());
        assert!(reply.text().contains(path.trim_start_matches("/client/")), "names the route: {}", reply.text());
        let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(8 << 10));
        let reply = send(addr, &Call::post(path, big.as_bytes()).session(A)).await.unwrap();
        assert_eq!(reply.status, 413, "{path}: {}", reply.text());
    }
    // An empty body is what the client sends to most of them.
    let reply = send(addr, &Call::post("/client/quest/list", b"").session(A)).await.unwrap();
    assert_eq!(reply.json()["err"], 0, "{}", reply.text());
}
