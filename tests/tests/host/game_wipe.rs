//! A player's evening over the wire, in the client's order: a new PMC raids and comes back with loot,
//! sells it, buys gear, heals, repairs, insures, loses the insured gear in a raid; the server is
//! stopped past the trader's return time and started again, and the gear comes back by mail and is
//! taken into the stash; the player lists a flea offer, it sells, the money arrives by mail and is
//! taken; and buys another's flea offer. After every step the profile holds: no duplicate ids, no
//! orphans, no stack below one, and the roubles changed by exactly what that step says it cost or paid.

use super::emulator::{A, Player, ROUBLES, post};
use modhost_gamedb::trade::{FENCE, MEDKIT, REPAIR_KIT, THERAPIST};
use modhost_gamedb::{RIFLE, TRADER};
use modhost_tests::TestServer;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

const MAP: &str = "factory4_day";
/// Prapor's rifle (25 000 roubles) and Therapist's med (15 000) and repair kit (40 000).
const RIFLE_OFFER: &str = "6000000000000000000000a1";
const MEDKIT_OFFER: &str = "600000000000000000000001";
const KIT_OFFER: &str = "600000000000000000000004";
/// Ragman, who sends the flea's letters.
const RAGMAN: &str = "5ac3b934156ae10c4430e83c";
/// Past Prapor's longest return time (36 hours).
const PAST_RETURN: u64 = 40 * 3600;

/// The generated database, with a base for the raid's map, Prapor returning every insured item, a
/// flea sale that is sure and quick, and the game's clock a minute past the hour (no trader resupply
/// falls inside the test).
fn database() -> Value {
    let mut db = super::game_trade::db(0);
    if db["locations"][MAP]["base"].is_null() {
        db["locations"][MAP]["base"] = json!({"Id": MAP, "Name": "Factory", "EscapeTimeLimit": 20, "Loot": [],
                                              "UnixDateTime": 0, "exits": [], "waves": [], "BossLocationSpawn": []});
    }
    db["configs"]["insurance"]["returnChancePercent"][TRADER] = json!(100);
    db["configs"]["insurance"]["chanceNoAttachmentsTakenPercent"] = json!(100);
    db["configs"]["ragfair"]["sell"]["chance"]["base"] = json!(100);
    db["configs"]["ragfair"]["sell"]["time"] = json!({"min": 0, "max": 0});
    db
}

async fn data(p: &Player, path: &str, body: Value) -> Value {
    let answer = post(p.addr, path, &p.session, body).await;
    assert_eq!(answer["err"], 0, "{path}: {answer}");
    answer["data"].clone()
}

/// Applies `action`, which must not be refused, and answers the batch's `profileChanges` for the player.
async fn apply(p: &Player, what: &str, action: Value) -> Value {
    let answer = p.moving(vec![action]).await;
    assert_eq!(answer["err"], 0, "{what}: {answer}");
    assert_eq!(answer["data"]["warnings"], json!([]), "{what} was refused: {answer}");
    answer["data"]["profileChanges"][&p.uid].clone()
}

/// Checks the profile's inventory holds together and answers its roubles.
async fn sound(p: &Player, step: &str) -> u64 {
    let profile = p.profile().await;
    let items = profile["Inventory"]["items"].as_array().unwrap();
    let mut ids = BTreeSet::new();
    for item in items {
        let id = item["_id"].as_str().unwrap_or_else(|| panic!("{step}: an item without an id: {item}"));
        assert!(ids.insert(id), "{step}: id {id} twice");
    }
    let roots: BTreeSet<&str> =
        ["equipment", "stash", "questRaidItems", "questStashItems", "sortingTable", "hideoutCustomizationStashId"]
            .iter()
            .filter_map(|f| profile["Inventory"][*f].as_str())
            .collect();
    for item in items {
        let id = item["_id"].as_str().unwrap();
        match item["parentId"].as_str() {
            Some(parent) => assert!(ids.contains(parent), "{step}: {id}'s parent {parent} is not in the profile"),
            None => assert!(roots.contains(id), "{step}: {id} has no parent and is not a root"),
        }
        if let Some(n) = item["upd"]["StackObjectsCount"].as_f64() {
            assert!(n >= 1.0 && n.fract() == 0.0, "{step}: {id} holds {n}");
        }
    }
    items.iter().filter(|i| i["_tpl"] == ROUBLES).map(|i| i["upd"]["StackObjectsCount"].as_u64().unwrap_or(1)).sum()
}

fn buy(tid: &str, offer: &str, pay: &str, amount: u64) -> Value {
    json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": tid, "item_id": offer, "count": 1,
           "scheme_id": 0, "scheme_items": [{"id": pay, "count": amount}]})
}

fn stash_place(p: &Player, x: i64, y: i64) -> Value {
    json!({"id": p.stash, "container": "hideout", "location": {"x": x, "y": y, "r": "Horizontal"}})
}

async fn one(p: &Player, tpl: &str) -> String {
    p.of(tpl).await[0]["_id"].as_str().unwrap().to_owned()
}

/// Starts a PMC raid on [`MAP`]: its `serverId` and its loot.
async fn start_raid(p: &Player) -> (String, Vec<Value>) {
    let started = data(p, "/client/match/local/start", json!({"location": MAP, "playerSide": "pmc"})).await;
    (started["serverId"].as_str().unwrap().to_owned(), started["locationLoot"]["Loot"].as_array().unwrap().clone())
}

async fn end_raid(p: &Player, server_id: &str, result: &str, profile: &Value) {
    let body = json!({"serverId": server_id, "results": {"result": result, "profile": profile, "exitName": null,
                      "killerId": null, "inSession": true, "playTime": 600}, "lostInsuredItems": [], "transferItems": {}});
    let ended = post(p.addr, "/client/match/local/end", &p.session, body).await;
    assert_eq!(ended["err"], 0, "{result}: {ended}");
}

/// The letters of `sender`'s dialogue, as `view` answers them.
async fn letters(p: &Player, sender: &str) -> Vec<Value> {
    let view = data(p, "/client/mail/dialog/view", json!({"dialogId": sender, "type": 2})).await;
    view["messages"].as_array().cloned().unwrap_or_default()
}

/// Takes every attachment of `letter` into the stash, one `Move` each to the first free place the
/// stash offers (tried left to right, top to bottom). Answers the ids taken.
async fn take_all(p: &Player, letter: &Value) -> Vec<String> {
    let stash_id = letter["items"]["stash"].as_str().unwrap();
    let tops: Vec<String> = letter["items"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["parentId"] == stash_id)
        .map(|i| i["_id"].as_str().unwrap().to_owned())
        .collect();
    for id in &tops {
        let mut taken = false;
        'places: for y in 10..60 {
            for x in 0..10 {
                let take = json!({"Action": "Move", "item": id, "fromOwner": {"id": letter["_id"], "type": "Mail"},
                                  "to": stash_place(p, x, y)});
                if p.act(take).await.is_none() {
                    taken = true;
                    break 'places;
                }
            }
        }
        assert!(taken, "attachment {id} found no place in the stash");
    }
    tops
}

#[tokio::test]
async fn a_new_player_raids_sells_heals_repairs_insures_loses_gets_it_back_and_trades_on_the_flea() {
    let db = database();
    let server =
        TestServer::builder().db_json(&db.to_string()).config(|c| c.builtin_mods = true).start().await.unwrap();
    let p = Player::new(server.addr, A, "Evening").await;
    let mut money = sound(&p, "a new profile").await;

    // Gear for the raid: the rifle, equipped; a med and a repair kit for later.
    apply(&p, "buying the rifle", buy(TRADER, RIFLE_OFFER, &p.roubles, 25_000)).await;
    apply(&p, "buying the med", buy(THERAPIST, MEDKIT_OFFER, &p.roubles, 15_000)).await;
    apply(&p, "buying the kit", buy(THERAPIST, KIT_OFFER, &p.roubles, 40_000)).await;
    money -= 80_000;
    assert_eq!(sound(&p, "after buying").await, money, "a purchase takes exactly its price");
    let rifle = one(&p, RIFLE).await;
    let equipment = p.profile().await["Inventory"]["equipment"].as_str().unwrap().to_owned();
    apply(
        &p,
        "equipping",
        json!({"Action": "Move", "item": rifle, "to": {"id": equipment, "container": "FirstPrimaryWeapon"}}),
    )
    .await;

    // A raid survived: a loose item found, the rifle worn, the head hurt.
    let (server_id, loot) = start_raid(&p).await;
    let found = loot
        .iter()
        .filter(|s| s["IsContainer"] == false)
        .map(|s| s["Items"][0].clone())
        .find(|i| i["_tpl"] != RIFLE)
        .expect("loose loot");
    let mut reported = p.profile().await;
    let items = reported["Inventory"]["items"].as_array_mut().unwrap();
    items.push(json!({"_id": found["_id"], "_tpl": found["_tpl"], "parentId": p.pockets, "slotId": "pocket2",
                      "location": {"x": 0, "y": 0, "r": "Horizontal"},
                      "upd": {"StackObjectsCount": found["upd"]["StackObjectsCount"].as_u64().unwrap_or(1), "SpawnedInSession": true}}));
    let worn = items.iter_mut().find(|i| i["_id"] == rifle.as_str()).unwrap();
    worn["upd"]["Repairable"] = json!({"Durability": 60, "MaxDurability": 100});
    reported["Health"]["BodyParts"]["Head"]["Health"]["Current"] = json!(20);
    end_raid(&p, &server_id, "Survived", &reported).await;
    let found_id = found["_id"].as_str().unwrap().to_owned();
    assert!(!p.item(&found_id).await.is_null(), "the loot came home");
    assert_eq!(sound(&p, "after the raid").await, money);

    // The loot sold to Fence: paid in roubles, what Fence's sales count grew by.
    let fence_before = p.profile().await["TradersInfo"][FENCE]["salesSum"].as_u64().unwrap_or(0);
    let count = found["upd"]["StackObjectsCount"].as_u64().unwrap_or(1);
    let sale = json!({"Action": "TradingConfirm", "type": "sell_to_trader", "tid": FENCE,
                      "items": [{"id": found_id, "count": count, "scheme_id": 0}], "price": 1});
    apply(&p, "selling the loot", sale).await;
    assert!(p.item(&found_id).await.is_null(), "the loot is sold");
    let paid = sound(&p, "after the sale").await - money;
    assert!(paid > 0, "Fence paid nothing");
    let fence_after = p.profile().await["TradersInfo"][FENCE]["salesSum"].as_u64().unwrap_or(0);
    assert_eq!(fence_after - fence_before, paid, "Fence's sales count what he paid");
    money += paid;

    // Healed with the med: the head comes up, the med's resource goes down, no money moves.
    let med = one(&p, MEDKIT).await;
    let healed =
        apply(&p, "healing", json!({"Action": "Heal", "item": med, "part": "Head", "count": 10, "time": 0})).await;
    assert!(healed["health"]["BodyParts"]["Head"]["Health"]["Current"].as_f64().unwrap() >= 30.0, "{healed}");
    assert_eq!(sound(&p, "after healing").await, money);

    // Repaired with the kit: durability back up, no money moves.
    let kit = one(&p, REPAIR_KIT).await;
    apply(&p, "repairing", json!({"Action": "Repair", "target": rifle, "repairKitsInfo": [{"_id": kit, "count": 20}]}))
        .await;
    let repaired = p.item(&rifle).await["upd"]["Repairable"]["Durability"].as_f64().unwrap();
    assert!(repaired > 60.0, "the rifle is at {repaired}");
    assert_eq!(sound(&p, "after repairing").await, money);

    // Insured at the quote's price, then lost in a raid.
    let quote = data(&p, "/client/insurance/items/list/cost", json!({"traders": [TRADER], "items": [rifle]})).await;
    let premium = quote[TRADER][RIFLE].as_u64().unwrap_or_else(|| panic!("{quote}"));
    apply(&p, "insuring", json!({"Action": "Insure", "tid": TRADER, "items": [rifle]})).await;
    money -= premium;
    assert_eq!(sound(&p, "after insuring").await, money, "the premium, exactly");
    let (server_id, _) = start_raid(&p).await;
    end_raid(&p, &server_id, "Killed", &p.profile().await).await;
    assert!(p.item(&rifle).await.is_null(), "the rifle was lost");
    assert_eq!(sound(&p, "after dying").await, money, "the stash's money stays");

    // The server is off past the return time; when it starts again, the rifle is in Prapor's mail.
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let mut later = db.clone();
    later["emulator"]["clock"]["offsetSeconds"] =
        json!(db["emulator"]["clock"]["offsetSeconds"].as_u64().unwrap() + PAST_RETURN);
    let server = again.db_json(&later.to_string()).start().await.unwrap();
    let p = Player { addr: server.addr, ..p };
    let back: Vec<Value> = letters(&p, TRADER).await.into_iter().filter(|m| m["type"] == 8).collect();
    assert_eq!(back.len(), 1, "one insurance return: {back:?}");
    let taken = take_all(&p, &back[0]).await;
    assert_eq!(taken.len(), 1);
    assert_eq!(p.item(&taken[0]).await["_tpl"], RIFLE, "the rifle is back in the stash");
    assert_eq!(sound(&p, "after taking the rifle back").await, money);
    let again: Vec<Value> = letters(&p, TRADER).await.into_iter().filter(|m| m["type"] == 8).collect();
    assert!(
        again.iter().all(|m| m["items"]["data"].as_array().is_none_or(|d| d.is_empty())),
        "an attachment taken stays taken: {again:?}"
    );

    // The rifle listed on the flea: the fee is taken; it sells, and the price arrives from Ragman.
    let rifle = taken[0].clone();
    let asked = 31_000;
    let listing = json!({"Action": "RagFairAddOffer", "items": [rifle], "sellInOnePiece": false,
                         "requirements": [{"_tpl": ROUBLES, "count": asked, "level": 0, "side": 0, "onlyFunctional": false}]});
    apply(&p, "listing", listing).await;
    let fee = money - sound(&p, "after listing").await;
    assert!(fee > 0 && fee < asked, "a fee of {fee}");
    money -= fee;
    let deadline = Instant::now() + Duration::from_secs(60);
    let sold = loop {
        let from_ragman: Vec<Value> =
            letters(&p, RAGMAN).await.into_iter().filter(|m| m["items"]["data"].is_array()).collect();
        if let Some(letter) = from_ragman.into_iter().next() {
            break letter;
        }
        assert!(Instant::now() < deadline, "the offer never sold");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let money_ids = take_all(&p, &sold).await;
    assert!(!money_ids.is_empty());
    money += asked;
    assert_eq!(sound(&p, "after taking the flea's money").await, money, "the price asked, exactly");

    // Another's offer bought: the market's cheapest rifle, at exactly its price.
    let deadline = Instant::now() + Duration::from_secs(40);
    let offer = loop {
        let found = data(
            &p,
            "/client/ragfair/find",
            json!({"page": 0, "limit": 20, "handbookId": RIFLE, "sortType": 5,
                                                              "sortDirection": 0, "currency": 1}),
        )
        .await;
        let cheapest = found["offers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["user"]["id"] != p.uid.as_str() && o["requirements"][0]["_tpl"] == ROUBLES)
            .cloned();
        if let Some(offer) = cheapest {
            break offer;
        }
        assert!(Instant::now() < deadline, "no rifle on the market: {found}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let price = offer["requirements"][0]["count"].as_f64().unwrap() as u64;
    let rifles_before = p.of(RIFLE).await.len();
    let purchase = json!({"Action": "RagFairBuyOffer",
                          "offers": [{"id": offer["_id"], "count": 1, "items": [{"id": p.roubles, "count": price}]}]});
    apply(&p, "buying on the flea", purchase).await;
    money -= price;
    assert_eq!(sound(&p, "after the flea purchase").await, money, "the offer's price, exactly");
    assert_eq!(p.of(RIFLE).await.len(), rifles_before + 1);

    server.stop().await.unwrap();
}
