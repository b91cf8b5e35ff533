//! The quest actions of `items/moving` over the wire, as a player meets them: accepting a quest the
//! list shows, handing over what its condition asks for, completing it and receiving its rewards (the
//! trader's quest-locked offer opening with it), each refusal a warning that changes nothing.

use crate::emulator::{A, Player};
use modhost_gamedb::{RIFLE, TRADER, hex_id};
use modhost_tests::TestServer;
use serde_json::{Value, json};

/// A quest the test database adds: open from level 1, failed by "Debut"'s success.
const RIVAL: &str = "6000000000000000000000f1";

/// The generated database with [`RIVAL`] beside its quests.
async fn server() -> TestServer {
    let mut db = modhost_gamedb::database(100);
    let mut rival = db["templates"]["quests"][record(1)].clone();
    rival["_id"] = json!(RIVAL);
    rival["QuestName"] = json!("Rival");
    rival["conditions"]["Fail"] =
        json!([{"id": "6000000000000000000000f2", "conditionType": "Quest", "target": record(1), "status": [4]}]);
    db["templates"]["quests"][RIVAL] = rival;
    TestServer::builder().db_json(&db.to_string()).config(|c| c.builtin_mods = true).start().await.unwrap()
}

/// The generated menu record `n` (`host/gamedb/src/menu.rs`): quest 1 is "Debut" (hand over a rifle;
/// 1000 experience and 5000 roubles), quest 2 "Shootout picnic" (from level 5), quest 3 "Delivery
/// from the past" (opened by "Debut"'s success).
fn record(n: u64) -> String {
    hex_id(1 << 50 | n)
}

/// Prapor's rifle offer, and the one "Debut"'s success unlocks.
const OFFER: &str = "6000000000000000000000a1";
const QUESTED: &str = "6000000000000000000000b3";

/// The profile's state of quest `qid`.
fn state(profile: &Value, qid: &str) -> Value {
    profile["Quests"].as_array().unwrap().iter().find(|q| q["qid"] == qid).cloned().unwrap_or_default()
}

async fn assort_ids(p: &Player) -> Vec<String> {
    let path = format!("/client/trading/api/getTraderAssort/{TRADER}");
    let assort = crate::emulator::post(p.addr, &path, &p.session, json!({})).await;
    assort["data"]["items"].as_array().unwrap().iter().map(|i| i["_id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_quest_is_accepted_handed_over_and_completed_with_its_rewards() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Quester").await;
    let debut = record(1);
    let refused = |warning: Option<String>, says: &str| {
        let warning = warning.unwrap_or_else(|| panic!("applied; expected a refusal saying {says:?}"));
        assert!(warning.contains(says), "{warning}");
    };

    refused(p.act(json!({"Action": "QuestComplete", "qid": debut})).await, "not started");
    refused(p.act(json!({"Action": "QuestAccept", "qid": record(2), "type": "PickUp"})).await, "not open");
    refused(p.act(json!({"Action": "QuestAccept", "qid": "ffffffffffffffffffffffff"})).await, "does not exist");
    assert_eq!(p.act(json!({"Action": "QuestAccept", "qid": RIVAL, "type": "PickUp"})).await, None);
    assert_eq!(p.act(json!({"Action": "QuestAccept", "qid": debut, "type": "PickUp"})).await, None);
    let started = state(&p.profile().await, &debut);
    assert_eq!((started["status"].clone(), started["completedConditions"].clone()), (json!(2), json!([])));
    refused(p.act(json!({"Action": "QuestAccept", "qid": debut})).await, "already");

    // Not done yet: the rifle is not handed over.
    refused(p.act(json!({"Action": "QuestComplete", "qid": debut})).await, "HandoverItem");

    let buy = json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": OFFER,
                     "count": 1, "scheme_id": 0, "scheme_items": [{"id": p.roubles, "count": 25000}]});
    assert_eq!(p.act(buy).await, None);
    let rifle = p.of(RIFLE).await[0]["_id"].as_str().unwrap().to_owned();
    let quests = crate::emulator::post(p.addr, "/client/quest/list", A, json!({})).await;
    let debut_quest = quests["data"].as_array().unwrap().iter().find(|q| q["_id"] == debut.as_str()).unwrap().clone();
    let condition = debut_quest["conditions"]["AvailableForFinish"][0]["id"].as_str().unwrap().to_owned();
    let hand = |id: &str, count: u64| json!({"Action": "QuestHandover", "qid": debut, "conditionId": condition, "items": [{"id": id, "count": count}]});
    refused(p.act(hand(&p.roubles, 1)).await, "is not what condition");
    refused(p.act(hand("ffffffffffffffffffffffff", 1)).await, "not in this profile");
    refused(p.act(hand(&rifle, 2)).await, "holds 1");
    let roubles_before = p.units(crate::emulator::ROUBLES).await;
    assert_eq!(p.act(hand(&rifle, 1)).await, None);
    assert!(p.of(RIFLE).await.is_empty(), "the rifle was handed over");
    let profile = p.profile().await;
    assert_eq!(profile["TaskConditionCounters"][&condition]["value"], 1);
    assert_eq!(state(&profile, &debut)["completedConditions"], json!([condition]));
    refused(p.act(hand(&rifle, 1)).await, "already satisfied");
    assert!(!assort_ids(&p).await.contains(&QUESTED.to_owned()), "the quest's offer is locked before it is done");

    let xp = profile["Info"]["Experience"].as_f64().unwrap();
    let answer = p.moving(vec![json!({"Action": "QuestComplete", "qid": debut, "removeExcessItems": false})]).await;
    assert_eq!(answer["data"]["warnings"], json!([]), "{answer}");
    let changes = &answer["data"]["profileChanges"][&p.uid];
    assert_eq!(changes["items"]["new"].as_array().unwrap().len(), 1, "the roubles reward, in the answer: {answer}");
    let statuses: Vec<(&str, &Value)> = changes["questsStatus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["qid"].as_str().unwrap(), &s["status"]))
        .collect();
    assert_eq!(statuses, [(RIVAL, &json!(5)), (debut.as_str(), &json!(4))], "Debut done, Rival failed by it");
    let opened: Vec<&str> = changes["quests"].as_array().unwrap().iter().map(|q| q["_id"].as_str().unwrap()).collect();
    assert_eq!(opened, [record(3)], "Debut's success opens Delivery from the past");
    assert!(changes["skills"]["Common"].is_array(), "{answer}");
    let after = p.profile().await;
    assert_eq!(state(&after, &debut)["status"], 4);
    assert_eq!(after["Info"]["Experience"].as_f64().unwrap(), xp + 1000.0);
    assert_eq!(p.units(crate::emulator::ROUBLES).await, roubles_before + 5000, "the roubles reward");
    assert!(assort_ids(&p).await.contains(&QUESTED.to_owned()), "the quest's offer opens");
    refused(p.act(json!({"Action": "QuestComplete", "qid": debut})).await, "not started");
}
