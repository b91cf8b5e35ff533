//! Repeatable quests over the wire (`plugins/emulator/src/menu/repeatable.rs`, `items/quests.rs`): a
//! period's quests generated from the db's config, accepted, handed in and paid; changed for free,
//! for money and standing, or refused; renewed when the period ends on the game's clock (stopped at
//! chosen moments with `emulator.clock.at`, as the hideout's tests do); an exploration done by
//! surviving a raid. The test db makes the Daily kind Completion quests and the Weekly one an
//! Exploration quest, so each test knows what it is handed.

use crate::emulator::{Player, ROUBLES, post, put_profile, stored_profile, t0};
use modhost_gamedb::TRADER;
use modhost_gamedb::trade::THERAPIST;
use modhost_tests::{TestServer, TestServerBuilder};
use serde_json::{Value, json};

const DAY: u64 = 86_400;

/// The generated db with the game's clock stopped at `at`, Daily quests of the Completion type and
/// Weekly ones of the Exploration type.
fn db(at: u64) -> String {
    db_with(at, "Completion")
}

/// The same with Daily quests of type `daily`.
fn db_with(at: u64, daily: &str) -> String {
    let mut db = modhost_gamedb::database(100);
    db["emulator"]["clock"] = json!({"at": at});
    for kind in db["configs"]["quest"]["repeatableQuests"].as_array_mut().unwrap() {
        match kind["name"].as_str().unwrap() {
            "Daily" => kind["types"] = json!([daily]),
            "Weekly" => kind["types"] = json!(["Exploration"]),
            _ => {}
        }
    }
    db.to_string()
}

/// Restarts `server` with the game's clock at `at`, first changing the stored profile `uid` with `edit`.
async fn restart(server: TestServer, at: u64, uid: &str, edit: impl FnOnce(&mut Value)) -> TestServer {
    restart_with(server, &db(at), uid, edit).await
}

async fn restart_with(server: TestServer, db: &str, uid: &str, edit: impl FnOnce(&mut Value)) -> TestServer {
    let again: TestServerBuilder = server.restart_builder();
    server.stop().await.unwrap();
    let mut profile = stored_profile(again.root(), uid);
    edit(&mut profile);
    // The profile's indexes are rebuilt on first touch.
    profile["_modhost"].as_object_mut().unwrap().remove("shape");
    put_profile(again.root(), &profile);
    again.db_json(db).start().await.unwrap()
}

/// A level-15 player of an edition with free changes, on a server whose clock is at `t0`.
async fn player(t0: u64, session: &str) -> (TestServer, Player) {
    player_at(&db(t0), session, 15).await
}

/// A player of `level` and an edition with free changes, on a server with `db`.
async fn player_at(db: &str, session: &str, level: usize) -> (TestServer, Player) {
    let server = TestServer::builder().db_json(db).config(|c| c.builtin_mods = true).start().await.unwrap();
    let p = Player::new(server.addr, session, "Regular").await;
    // The experience of the level, so rewards keep the level where it is.
    let table = modhost_gamedb::database(1)["globals"]["config"]["exp"]["level"]["exp_table"].clone();
    let xp: f64 = table.as_array().unwrap().iter().take(level).map(|e| e["exp"].as_f64().unwrap()).sum();
    let server = restart_with(server, db, &p.uid, |profile| {
        profile["Info"]["Level"] = json!(level);
        profile["Info"]["Experience"] = json!(xp);
        profile["Info"]["GameVersion"] = json!("edge_of_darkness");
    })
    .await;
    let p = Player { addr: server.addr, ..p };
    (server, p)
}

async fn periods(p: &Player) -> Value {
    let answer = post(p.addr, "/client/repeatalbeQuests/activityPeriods", &p.session, json!({})).await;
    assert_eq!(answer["err"], 0, "{answer}");
    answer["data"].clone()
}

fn period<'a>(periods: &'a Value, name: &str) -> &'a Value {
    periods.as_array().unwrap().iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("no {name}: {periods}"))
}

fn ids(quests: &Value) -> Vec<String> {
    quests.as_array().unwrap().iter().map(|q| q["_id"].as_str().unwrap().to_owned()).collect()
}

/// The profile's state of quest `qid`.
fn state(profile: &Value, qid: &str) -> Value {
    profile["Quests"].as_array().unwrap().iter().find(|q| q["qid"] == qid).cloned().unwrap_or_default()
}

fn standing(profile: &Value, trader: &str) -> f64 {
    profile["TradersInfo"][trader]["standing"].as_f64().unwrap_or(0.0)
}

/// A refused action: its warning says `says`, and the profile is as it was.
async fn refused(p: &Player, action: Value, says: &str) {
    let before = p.profile().await;
    let warning = p.act(action.clone()).await.unwrap_or_else(|| panic!("applied; expected {says:?}: {action}"));
    assert!(warning.contains(says), "{warning} (expected {says:?})");
    assert!(p.profile().await == before, "a refused {action} changed the profile");
}

fn accept(qid: &str) -> Value {
    json!({"Action": "QuestAccept", "qid": qid, "type": "repeatable"})
}

fn change(qid: &str) -> Value {
    json!({"Action": "RepeatableQuestChange", "qid": qid})
}

/// An id for test item `n`.
fn item_id(n: u64) -> String {
    format!("e{n:023x}")
}

#[tokio::test]
async fn daily_quests_are_generated_handed_in_paid_changed_and_renewed() {
    let t0 = t0();
    let (server, p) = player(t0, "d1d1d1d1d1d1d1d1d1d1d1d1").await;
    let db: Value = serde_json::from_str(&db(t0)).unwrap();
    let prices: Vec<(String, f64)> = db["templates"]["handbook"]["Items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["Id"].as_str().unwrap().to_owned(), e["Price"].as_f64().unwrap()))
        .collect();

    // Level 15: a Daily period of three Completion quests and a Weekly one of one Exploration quest.
    let all = periods(&p).await;
    let names: Vec<&Value> = all.as_array().unwrap().iter().map(|p| &p["name"]).collect();
    assert_eq!(names, [&json!("Daily"), &json!("Weekly")]);
    let daily = period(&all, "Daily").clone();
    assert_eq!(daily["endTime"], t0 + DAY);
    let active = ids(&daily["activeQuests"]);
    assert_eq!(active.len(), 3, "{daily}");
    assert!(active.iter().all(|id| id.len() == 24) && active[0] != active[1] && active[1] != active[2]);
    for quest in daily["activeQuests"].as_array().unwrap() {
        assert_eq!(
            (&quest["type"], &quest["side"], &quest["location"]),
            (&json!("Completion"), &json!("Pmc"), &json!("any"))
        );
        assert!([TRADER, THERAPIST].contains(&quest["traderId"].as_str().unwrap()), "{quest}");
        assert_eq!(quest["templateId"], "61604635c725987e815b1a46");
        assert!(quest["name"].as_str().unwrap().starts_with("61604635c725987e815b1a46 name "), "{quest}");
        let asked = quest["conditions"]["AvailableForFinish"].as_array().unwrap();
        assert!((1..=2).contains(&asked.len()), "{quest}");
        for condition in asked {
            assert_eq!(
                (&condition["conditionType"], &condition["onlyFoundInRaid"]),
                (&json!("HandoverItem"), &json!(true))
            );
            let tpl = condition["target"][0].as_str().unwrap();
            assert!(prices.iter().any(|(id, _)| id == tpl), "asks for a priced template: {condition}");
            assert!((1..=4).contains(&condition["value"].as_u64().unwrap()), "{condition}");
        }
        let rewards = quest["rewards"]["Success"].as_array().unwrap();
        assert!(rewards[0]["type"] == "Experience" && rewards[0]["value"].as_f64().unwrap() > 0.0, "{quest}");
        assert!(rewards.iter().any(|r| r["type"] == "Item" && r["items"][0]["_tpl"] == ROUBLES), "{quest}");
        assert_eq!(
            daily["changeRequirement"][quest["_id"].as_str().unwrap()]["changeCost"],
            json!([{"templateId": ROUBLES, "count": 5000}])
        );
    }
    assert_eq!(daily["changeRequirement"].as_object().unwrap().len(), 3);
    assert_eq!((&daily["freeChanges"], &daily["freeChangesAvailable"]), (&json!(2), &json!(2)));
    let weekly = period(&all, "Weekly").clone();
    assert_eq!(weekly["endTime"], t0 + 7 * DAY);
    let explore = &weekly["activeQuests"][0];
    assert_eq!(explore["type"], "Exploration");
    let counter: Vec<&Value> = explore["conditions"]["AvailableForFinish"][0]["counter"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["conditionType"])
        .collect();
    assert_eq!(&counter[..2], [&json!("ExitStatus"), &json!("Location")], "{explore}");
    // In the deep shape of SPT's models, generated quests and all.
    let failures = modhost_tests::shapes::Shapes::load().check("[PmcDataRepeatableQuest]", &all, "").lines();
    assert!(failures.is_empty(), "{failures:#?}");
    // The periods are the profile's: the same quests on every read until they end.
    assert_eq!(periods(&p).await, all);
    assert_eq!(p.profile().await["RepeatableQuests"], all);

    // Accept the first; its items are handed over and it pays its rewards.
    let first = &daily["activeQuests"][0];
    let qid = active[0].clone();
    refused(&p, json!({"Action": "QuestAccept", "qid": qid, "type": ""}), "type: repeatable").await;
    refused(&p, json!({"Action": "QuestComplete", "qid": qid}), "not started").await;
    assert_eq!(p.act(accept(&qid)).await, None);
    assert_eq!(state(&p.profile().await, &qid)["status"], 2);
    refused(&p, accept(&qid), "already").await;
    refused(&p, json!({"Action": "QuestComplete", "qid": qid}), "HandoverItem").await;

    let asked: Vec<(String, String, u64)> = first["conditions"]["AvailableForFinish"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["target"][0].as_str().unwrap().to_owned(),
                c["value"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut given: Vec<(String, String, bool)> = Vec::new();
    for (_, tpl, units) in &asked {
        for _ in 0..*units {
            given.push((item_id(given.len() as u64), tpl.clone(), true));
        }
    }
    let not_found = item_id(99);
    given.push((not_found.clone(), asked[0].1.clone(), false));
    let server = restart(server, t0, &p.uid, |profile| {
        let stash = profile["Inventory"]["stash"].as_str().unwrap().to_owned();
        for (n, (id, tpl, found)) in given.iter().enumerate() {
            let (x, y) = ((n as i64 * 4) % 8, 30 + (n as i64 * 4 / 8) * 4);
            profile["Inventory"]["items"][id] = json!({"_id": id, "_tpl": tpl, "parentId": stash, "slotId": "hideout",
                "location": {"x": x, "y": y, "r": "Horizontal"}, "upd": {"StackObjectsCount": 1, "SpawnedInSession": found}});
        }
    })
    .await;
    let p = Player { addr: server.addr, ..p };
    let hand = |condition: &str, items: Vec<&String>| {
        let items: Vec<Value> = items.into_iter().map(|id| json!({"id": id, "count": 1})).collect();
        json!({"Action": "QuestHandover", "qid": qid, "conditionId": condition, "items": items})
    };
    refused(&p, hand(&asked[0].0, vec![&not_found]), "not found in raid").await;
    for (condition, tpl, _) in &asked {
        let mine: Vec<&String> = given.iter().filter(|(_, t, found)| t == tpl && *found).map(|(id, _, _)| id).collect();
        assert_eq!(p.act(hand(condition, mine)).await, None);
    }
    let before = p.profile().await;
    let roubles = p.units(ROUBLES).await;
    let answer = p.moving(vec![json!({"Action": "QuestComplete", "qid": qid, "removeExcessItems": false})]).await;
    assert_eq!(answer["data"]["warnings"], json!([]), "{answer}");
    let after = p.profile().await;
    assert_eq!(state(&after, &qid)["status"], 4);
    let rewards = first["rewards"]["Success"].as_array().unwrap();
    let reward = |kind: &str| rewards.iter().find(|r| r["type"] == kind).map(|r| r["value"].as_f64().unwrap());
    assert_eq!(
        after["Info"]["Experience"].as_f64().unwrap(),
        before["Info"]["Experience"].as_f64().unwrap() + reward("Experience").unwrap()
    );
    let money = rewards.iter().find(|r| r["type"] == "Item" && r["items"][0]["_tpl"] == ROUBLES).unwrap();
    assert_eq!(p.units(ROUBLES).await, roubles + money["value"].as_u64().unwrap(), "the money reward");
    let trader = first["traderId"].as_str().unwrap();
    if let Some(gain) = reward("TraderStanding") {
        assert!((standing(&after, trader) - standing(&before, trader) - gain).abs() < 1e-9, "the standing reward");
    }
    for item in rewards.iter().filter(|r| r["type"] == "Item" && r["items"][0]["_tpl"] != ROUBLES) {
        let tpl = item["items"][0]["_tpl"].as_str().unwrap();
        assert!(p.of(tpl).await.iter().any(|i| i["upd"]["SpawnedInSession"] == true), "reward {item} given");
    }

    // Changes: two free ones (this edition's), then one for its money and standing.
    refused(&p, change(&qid), "handed in").await;
    refused(&p, change("ffffffffffffffffffffffff"), "not an active repeatable quest").await;
    let roubles = p.units(ROUBLES).await;
    let answer = p.moving(vec![change(&active[1])]).await;
    assert_eq!(answer["data"]["warnings"], json!([]), "{answer}");
    let changed = &answer["data"]["profileChanges"][&p.uid]["repeatableQuests"][0];
    assert_eq!(
        (&changed["name"], &changed["freeChangesAvailable"], &changed["inactiveQuests"]),
        (&json!("Daily"), &json!(1), &json!([]))
    );
    let now_active = ids(&changed["activeQuests"]);
    assert_eq!(now_active.len(), 3);
    assert!(!now_active.contains(&active[1]) && now_active.contains(&active[0]) && now_active.contains(&active[2]));
    let fresh = now_active.iter().find(|id| !active.contains(id)).unwrap().clone();
    assert!(changed["changeRequirement"][&fresh].is_object() && changed["changeRequirement"][&active[1]].is_null());
    assert_eq!(period(&periods(&p).await, "Daily")["activeQuests"], changed["activeQuests"], "stored");
    assert_eq!(p.units(ROUBLES).await, roubles, "a free change costs nothing");
    assert_eq!(p.act(change(&fresh)).await, None);
    let daily = period(&periods(&p).await, "Daily").clone();
    assert_eq!(daily["freeChangesAvailable"], 0);
    let paid = active[2].clone();
    let cost = daily["changeRequirement"][&paid]["changeStandingCost"].as_f64().unwrap();
    let paid_trader =
        daily["activeQuests"].as_array().unwrap().iter().find(|q| q["_id"] == paid.as_str()).unwrap()["traderId"]
            .as_str()
            .unwrap()
            .to_owned();
    let before = p.profile().await;
    assert_eq!(p.act(change(&paid)).await, None);
    assert_eq!(p.units(ROUBLES).await, roubles - 5000, "a paid change takes its cost from the stash");
    let after = p.profile().await;
    assert!((standing(&before, &paid_trader) - cost - standing(&after, &paid_trader)).abs() < 1e-9, "and its standing");

    // Two quests taken: one ready to hand in, one only started. The day ends with the server off.
    let daily = period(&periods(&p).await, "Daily").clone();
    let open: Vec<String> = ids(&daily["activeQuests"]).into_iter().filter(|id| *id != qid).collect();
    let (ready, started) = (open[0].clone(), open[1].clone());
    assert_eq!(p.act(accept(&ready)).await, None);
    assert_eq!(p.act(accept(&started)).await, None);
    let weekly_before = period(&periods(&p).await, "Weekly").clone();
    let roubles_id = p.roubles.clone();
    let server = restart(server, t0 + DAY, &p.uid, |profile| {
        for state in profile["Quests"].as_array_mut().unwrap() {
            if state["qid"] == ready.as_str() {
                state["status"] = json!(3);
            }
        }
        // Too little money for the next paid change.
        for item in profile["Inventory"]["items"].as_object_mut().unwrap().values_mut() {
            if item["_tpl"] == ROUBLES {
                item["upd"]["StackObjectsCount"] = json!(if item["_id"] == roubles_id.as_str() { 100 } else { 0 });
            }
        }
    })
    .await;
    let p = Player { addr: server.addr, ..p };
    let renewed = periods(&p).await;
    let daily = period(&renewed, "Daily");
    assert_eq!(daily["endTime"], t0 + 2 * DAY);
    let kept = ids(&daily["activeQuests"]);
    assert_eq!(kept.len(), 4, "the quest ready to hand in stays beside three new ones: {daily}");
    assert!(kept.contains(&ready) && !kept.contains(&started) && !kept.contains(&qid));
    let gone = ids(&daily["inactiveQuests"]);
    assert!(gone.contains(&started) && gone.contains(&qid), "{gone:?}");
    assert_eq!(daily["freeChangesAvailable"], 2, "a new period's free changes");
    assert_eq!(period(&renewed, "Weekly"), &weekly_before, "the week runs on");
    let profile = p.profile().await;
    assert!(state(&profile, &started).is_null() && state(&profile, &qid).is_null(), "expired states leave the profile");
    assert_eq!(state(&profile, &ready)["status"], 3);

    let new = kept.iter().find(|id| **id != ready).unwrap().clone();
    assert_eq!(p.act(change(&new)).await, None);
    let newer =
        ids(&period(&periods(&p).await, "Daily")["activeQuests"]).into_iter().find(|id| !kept.contains(id)).unwrap();
    assert_eq!(p.act(change(&newer)).await, None);
    let last = ids(&period(&periods(&p).await, "Daily")["activeQuests"]).into_iter().find(|id| *id != ready).unwrap();
    refused(&p, change(&last), "the price is 5000").await;
}

#[tokio::test]
async fn an_exploration_quest_is_done_by_surviving_raids_on_its_map() {
    let t0 = t0();
    let (_server, p) = player(t0, "d2d2d2d2d2d2d2d2d2d2d2d2").await;
    let weekly = period(&periods(&p).await, "Weekly").clone();
    let quest = weekly["activeQuests"][0].clone();
    let qid = quest["_id"].as_str().unwrap().to_owned();
    let condition = quest["conditions"]["AvailableForFinish"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(p.act(accept(&qid)).await, None);
    refused(&p, json!({"Action": "QuestComplete", "qid": qid}), "CounterCreator").await;

    let started = post(
        p.addr,
        "/client/match/local/start",
        &p.session,
        json!({"location": "factory4_day", "playerSide": "pmc", "timeVariant": "CURR", "mode": "PVE_OFFLINE"}),
    )
    .await;
    assert_eq!(started["err"], 0, "{started}");
    let mut reported = p.profile().await;
    reported["Quests"] =
        json!([{"qid": qid, "status": "AvailableForFinish", "completedConditions": [condition, "not-a-condition"]}]);
    let body = json!({"serverId": started["data"]["serverId"], "results": {"result": "Survived", "profile": reported,
        "exitName": null, "killerId": null, "inSession": true, "playTime": 600}, "lostInsuredItems": [], "transferItems": {}});
    let ended = post(p.addr, "/client/match/local/end", &p.session, body).await;
    assert_eq!(ended["err"], 0, "{ended}");
    let done = state(&p.profile().await, &qid);
    assert_eq!(
        (&done["status"], &done["completedConditions"]),
        (&json!(3), &json!([condition])),
        "the quest's own condition only"
    );

    let xp = p.profile().await["Info"]["Experience"].as_f64().unwrap();
    assert_eq!(p.act(json!({"Action": "QuestComplete", "qid": qid})).await, None);
    let after = p.profile().await;
    assert_eq!(state(&after, &qid)["status"], 4);
    assert!(after["Info"]["Experience"].as_f64().unwrap() > xp, "the exploration's experience");
}

#[tokio::test]
async fn elimination_quests_follow_the_config_of_the_players_level() {
    let (_server, p) = player_at(&db_with(t0(), "Elimination"), "d3d3d3d3d3d3d3d3d3d3d3d3", 20).await;
    let db: Value = modhost_gamedb::database(1);
    let maps = db["configs"]["quest"]["locationIdMap"].clone();
    let config = &db["configs"]["quest"]["repeatableQuests"][0]["questConfig"]["Elimination"][1];
    assert_eq!(config["levelRange"]["min"], 16, "level 20 reads the second range");
    let daily = period(&periods(&p).await, "Daily").clone();
    let quests = daily["activeQuests"].as_array().unwrap();
    // Two non-boss targets: a third quest only when one of the first two went to a single map (SPT's
    // pool gives up on eliminations once only bosses are left).
    assert!((2..=3).contains(&quests.len()), "{daily}");
    let mut specific_maps = Vec::new();
    for quest in quests {
        assert_eq!(quest["type"], "Elimination");
        let xp = &quest["rewards"]["Success"][0];
        assert!(
            xp["type"] == "Experience" && xp["value"].as_f64().unwrap() >= 1000.0,
            "difficulty at least 0.5: {quest}"
        );
        let finish = &quest["conditions"]["AvailableForFinish"][0];
        assert_eq!(finish["conditionType"], "CounterCreator");
        let conditions = finish["counter"]["conditions"].as_array().unwrap();
        let kill = conditions.last().unwrap();
        assert_eq!(kill["conditionType"], "Kills", "{quest}");
        let kills = finish["value"].as_u64().unwrap();
        match (kill["target"].as_str().unwrap(), kill["savageRole"].get(0).and_then(Value::as_str)) {
            ("Savage", Some("bossKnight")) => assert_eq!(kills, 1, "a boss once"),
            ("Savage", None) => assert!((5..=15).contains(&kills), "{kills}"),
            ("AnyPmc", None) => assert!((2..=5).contains(&kills), "{kills}"),
            other => panic!("target {other:?}: {quest}"),
        }
        if let Some(parts) = kill["bodyPart"].as_array() {
            assert!(!parts.is_empty() && parts.len() <= 4, "{kill}");
        }
        if let Some(metres) = kill["distance"]["value"].as_u64() {
            assert!((10..=75).contains(&metres) && metres % 5 == 0, "{kill}");
        }
        // A quest on one map names it twice: the counter's location and the quest's.
        if conditions.len() == 2 {
            assert_eq!(conditions[0]["conditionType"], "Location");
            let key = conditions[0]["target"][0].as_str().unwrap();
            assert_eq!(quest["location"], maps[key], "{quest}");
            specific_maps.push((kill["target"].clone(), key.to_owned()));
        } else {
            assert_eq!(quest["location"], "any");
        }
    }
    let mut unique = specific_maps.clone();
    unique.dedup();
    assert_eq!(unique.len(), specific_maps.len(), "a target is not sent to the same map twice in a period");
}
