//! Health and repair over the wire (`health/`, `repair/`): eating and healing spend the item's
//! resource and change the body; the therapist heals for the game's price; the body regenerates with
//! the game's clock (moved across a restart); a kit and a trader repair, the trader for money in its
//! currency. Every refusal is a warning that changes nothing.

use crate::emulator::{A, Player, ROUBLES, put_profile, stored_profile};
use crate::game_trade::db;
use modhost_gamedb::trade::{CRACKERS, MEDKIT, PEACEKEEPER, REPAIR_KIT, THERAPIST, VEST, WATER};
use modhost_gamedb::{RIFLE, TRADER};
use modhost_tests::TestServer;
use serde_json::{Value, json};

/// Therapist's offers (`host/gamedb/src/trade.rs`): the med, crackers, water, the kit, the vest.
fn offer(n: u64) -> String {
    format!("60000000000000000000000{n}")
}

fn buy(tid: &str, offer: &str, pay: &str, amount: u64) -> Value {
    json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": tid, "item_id": offer, "count": 1,
           "scheme_id": 0, "scheme_items": [{"id": pay, "count": amount}]})
}

async fn one(p: &Player, tpl: &str) -> String {
    p.of(tpl).await[0]["_id"].as_str().unwrap().to_owned()
}

/// What a refused action must leave as it was: the items and the health.
async fn state(p: &Player) -> (Vec<Value>, Value) {
    let profile = p.profile().await;
    let mut items = profile["Inventory"]["items"].as_array().unwrap().clone();
    items.sort_by(|a, b| a["_id"].as_str().cmp(&b["_id"].as_str()));
    (items, profile["Health"].clone())
}

async fn refused(p: &Player, action: Value, says: &str) {
    let before = state(p).await;
    let warning = p.act(action.clone()).await.unwrap_or_else(|| panic!("applied; expected {says:?}: {action}"));
    assert!(warning.contains(says), "{warning} (expected {says:?})");
    assert!(state(p).await == before, "a refused {action} changed the profile");
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// A player with the med, crackers, water, a repair kit, a vest and two rifles, hurt (head 10/35, left
/// arm 30/60 and bleeding, right leg fractured, energy 20, hydration 30) as of `since` (a time far
/// ahead, so nothing regenerates until the clock is moved there), the rifles worn to 40/90.
async fn hurt_player(since: u64) -> (TestServer, Player) {
    let server =
        TestServer::builder().db_json(&db(0).to_string()).config(|c| c.builtin_mods = true).start().await.unwrap();
    let p = Player::new(server.addr, A, "Patient").await;
    for (n, price) in [(1, 15_000), (2, 2_000), (3, 5_000), (4, 40_000), (5, 25_000)] {
        assert_eq!(p.act(buy(THERAPIST, &offer(n), &p.roubles, price)).await, None);
    }
    for _ in 0..2 {
        assert_eq!(p.act(buy(TRADER, "6000000000000000000000a1", &p.roubles, 25_000)).await, None);
    }
    assert_eq!(p.units(ROUBLES).await, 500_000 - 137_000);
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let mut stored = stored_profile(again.root(), &p.uid);
    let health = &mut stored["Health"];
    health["BodyParts"]["Head"]["Health"]["Current"] = json!(10);
    health["BodyParts"]["LeftArm"]["Health"]["Current"] = json!(30);
    health["BodyParts"]["LeftArm"]["Effects"] = json!({"LightBleeding": {"Time": -1}});
    health["BodyParts"]["RightLeg"]["Effects"] = json!({"Fracture": {"Time": -1}});
    health["Energy"]["Current"] = json!(20);
    health["Hydration"]["Current"] = json!(30);
    health["UpdateTime"] = json!(since);
    for item in stored["Inventory"]["items"].as_object_mut().unwrap().values_mut() {
        if item["_tpl"] == RIFLE {
            item["upd"]["Repairable"] = json!({"Durability": 40, "MaxDurability": 90});
        }
    }
    put_profile(again.root(), &stored);
    let server = again.start().await.unwrap();
    let p = Player { addr: server.addr, ..p };
    (server, p)
}

#[tokio::test]
async fn eating_healing_and_the_therapist_change_health_then_it_regenerates_with_the_clock() {
    let since = now() + 10_000_000;
    let (server, p) = hurt_player(since).await;
    let (med, crackers, water) = (one(&p, MEDKIT).await, one(&p, CRACKERS).await, one(&p, WATER).await);

    refused(&p, json!({"Action": "Eat", "item": med, "count": 1}), "is not food").await;
    refused(&p, json!({"Action": "Heal", "item": crackers, "part": "Head", "count": 1}), "is not a med").await;
    refused(&p, json!({"Action": "Heal", "item": med, "part": "Tail", "count": 1}), "no body part").await;
    refused(&p, json!({"Action": "Heal", "item": med, "part": "Head", "count": 401}), "has 400 left").await;
    refused(&p, json!({"Action": "Eat", "item": "ffffffffffffffffffffffff", "count": 1}), "not in this profile").await;
    refused(&p, json!({"Action": "RestoreHealth", "trader": TRADER, "difference": {}}), "does not heal").await;

    // Crackers: single-use, their whole effects (energy +15, hydration −5); gone.
    assert_eq!(p.act(json!({"Action": "Eat", "item": crackers, "count": 1})).await, None);
    assert!(p.of(CRACKERS).await.is_empty());
    // Water: 20 of its 60 units, a third of its 60 hydration.
    assert_eq!(p.act(json!({"Action": "Eat", "item": water, "count": 20})).await, None);
    assert_eq!(p.item(&water).await["upd"]["FoodDrink"]["HpPercent"], 40);
    refused(&p, json!({"Action": "Eat", "item": water, "count": 41}), "has 40 left").await;
    let health = p.profile().await["Health"].clone();
    assert_eq!((health["Energy"]["Current"].clone(), health["Hydration"]["Current"].clone()), (json!(35), json!(45)));

    // The med: 65 spent on the left arm, 45 of them stopping the bleed, 20 healing it.
    let answer = p.moving(vec![json!({"Action": "Heal", "item": med, "part": "LeftArm", "count": 65})]).await;
    assert!(answer["data"]["warnings"].as_array().unwrap().is_empty(), "{answer}");
    let arm = &answer["data"]["profileChanges"][&p.uid]["health"]["BodyParts"]["LeftArm"];
    assert_eq!(arm["Health"]["Current"], 50, "{arm}");
    assert!(arm["Effects"].as_object().unwrap().is_empty(), "{arm}");
    assert_eq!(p.item(&med).await["upd"]["MedKit"]["HpResource"], 335);

    // The therapist: the head's 25 missing points at 30 and the fracture's 1000, times 1.2: 2100.
    let leg = json!({"Health": 0, "Effects": ["Fracture"]});
    refused(
        &p,
        json!({"Action": "RestoreHealth", "trader": THERAPIST, "difference": {"BodyParts": {"Head": {"Health": 1, "Effects": ["Pain"]}}}}),
        "has no effect Pain",
    )
    .await;
    let restore = json!({"Action": "RestoreHealth", "trader": THERAPIST, "items": [{"id": p.roubles, "count": 1}],
                         "difference": {"BodyParts": {"Head": {"Health": 1, "Effects": []}, "RightLeg": leg}}});
    assert_eq!(p.act(restore).await, None);
    assert_eq!(p.units(ROUBLES).await, 363_000 - 2_100);
    let health = p.profile().await["Health"].clone();
    assert_eq!(health["BodyParts"]["Head"]["Health"]["Current"], 35);
    assert!(health["BodyParts"]["RightLeg"]["Effects"].as_object().unwrap().is_empty());
    assert_eq!(health["Energy"]["Current"], 35, "nothing regenerates before `UpdateTime`");

    // Half an hour after the health was stored: energy and hydration +30, the arm full.
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let mut later = modhost_gamedb::database(100);
    later["emulator"]["clock"] = json!({"offsetSeconds": since + 1800 - now()});
    let server = again.db_json(&later.to_string()).start().await.unwrap();
    let p = Player { addr: server.addr, ..p };
    let health = p.profile().await["Health"].clone();
    let energy = health["Energy"]["Current"].as_f64().unwrap();
    assert!((65.0..65.5).contains(&energy), "{health}");
    let hydration = health["Hydration"]["Current"].as_f64().unwrap();
    assert!((75.0..75.5).contains(&hydration), "{health}");
    assert_eq!(health["BodyParts"]["LeftArm"]["Health"]["Current"], 60);
    // A batch answers the same regenerated health.
    let answer = p.moving(vec![json!({"Action": "Eat", "item": med, "count": 1})]).await;
    let shown = answer["data"]["profileChanges"][&p.uid]["health"]["Energy"]["Current"].as_f64().unwrap();
    assert!((65.0..65.5).contains(&shown), "{answer}");
}

#[tokio::test]
async fn a_kit_and_a_trader_repair_and_the_trader_is_paid_in_its_currency() {
    let (_server, p) = hurt_player(now() + 10_000_000).await;
    let rifles: Vec<String> = p.of(RIFLE).await.iter().map(|r| r["_id"].as_str().unwrap().to_owned()).collect();
    let (kit, vest, med) = (one(&p, REPAIR_KIT).await, one(&p, VEST).await, one(&p, MEDKIT).await);
    let trader_repair = |tid: &str, id: &str, count: u64| json!({"Action": "TraderRepair", "tid": tid, "repairItems": [{"_id": id, "count": count}]});
    let kit_repair = |target: &str, count: u64| json!({"Action": "Repair", "target": target, "repairKitsInfo": [{"_id": kit, "count": count}]});

    refused(&p, trader_repair(THERAPIST, &rifles[0], 10), "does not repair").await;
    refused(&p, trader_repair(TRADER, &rifles[0], 51), "lacks 50").await;
    refused(&p, trader_repair(TRADER, &med, 1), "cannot be repaired").await;
    // Peacekeeper asks dollars, which this player has none of.
    refused(&p, trader_repair(PEACEKEEPER, &rifles[0], 10), "5696686a4bdc2da3298b456a").await;
    refused(&p, kit_repair(&vest, 10), "cannot repair item").await;
    refused(&p, kit_repair(&rifles[1], 1001), "has 1000 resource left").await;

    // Prapor: 50 points at the rifle's repair cost 50, his rate 1: 2500 roubles; quality 0, no wear.
    assert_eq!(p.act(trader_repair(TRADER, &rifles[0], 50)).await, None);
    assert_eq!(p.units(ROUBLES).await, 363_000 - 2_500);
    assert_eq!(p.item(&rifles[0]).await["upd"]["Repairable"], json!({"Durability": 90.0, "MaxDurability": 90.0}));

    // The kit: 10 of its resource at 0.5 a point is 20 points; the maximum wears at most 0.5%.
    assert_eq!(p.act(kit_repair(&rifles[1], 10)).await, None);
    let repaired = p.item(&rifles[1]).await["upd"]["Repairable"].clone();
    let max = repaired["MaxDurability"].as_f64().unwrap();
    assert!((89.55..=90.0).contains(&max), "{repaired}");
    assert_eq!(repaired["Durability"].as_f64().unwrap(), 60.0_f64.min(max));
    assert_eq!(p.item(&kit).await["upd"]["RepairKit"]["Resource"], 990.0);
    assert_eq!(p.units(ROUBLES).await, 363_000 - 2_500, "a kit costs no money");
}
