//! Trading both ways over the wire (`items/selling.rs`, `items/savage.rs`, `items/trading.rs`): a sale
//! paid at the trader's price whatever the client names, in the trader's currency; dollars spent on a
//! dollar offer up to its purchase limit, which the trader's resupply resets; offers the assort hides
//! refused; the scav's loot sold to Fence by mail; every refusal a warning that changes nothing, and
//! money exact at every step.

use crate::emulator::{A, B, Player, ROUBLES, post, stored_profile};
use modhost_gamedb::trade::{DOLLAR_OFFER, DOLLARS, FENCE, PEACEKEEPER, THERAPIST};
use modhost_gamedb::{RIFLE, TRADER};
use modhost_tests::TestServer;
use serde_json::{Value, json};

/// Prapor's rifle offer (25 000 roubles), his loyalty-2 offer and the one "Debut" unlocks.
const OFFER: &str = "6000000000000000000000a1";
const GATED: &str = "6000000000000000000000b1";
const QUESTED: &str = "6000000000000000000000b3";

async fn server() -> TestServer {
    TestServer::builder().db_json(&db(0).to_string()).config(|c| c.builtin_mods = true).start().await.unwrap()
}

/// The generated database with the game's clock moved `later` seconds past a minute after the hour,
/// so a test's purchases never straddle a trader's hourly resupply.
pub(crate) fn db(later: u64) -> Value {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let mut db = modhost_gamedb::database(100);
    db["emulator"]["clock"] = json!({"offsetSeconds": 3600 - now % 3600 + 60 + later});
    db
}

fn buy(tid: &str, offer: &str, count: u64, pay: &str, amount: u64) -> Value {
    json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": tid, "item_id": offer, "count": count,
           "scheme_id": 0, "scheme_items": [{"id": pay, "count": amount}]})
}

fn sell(tid: &str, items: &[(&str, u64)]) -> Value {
    let items: Vec<Value> = items.iter().map(|(id, count)| json!({"id": id, "count": count, "scheme_id": 0})).collect();
    // The client's `price` is never read: a lie here changes nothing.
    json!({"Action": "TradingConfirm", "type": "sell_to_trader", "tid": tid, "items": items, "price": 99_999_999})
}

/// The profile members a refused trade must leave as they were.
async fn state(p: &Player) -> (Vec<Value>, Value, Value) {
    let profile = p.profile().await;
    let mut items = profile["Inventory"]["items"].as_array().unwrap().clone();
    items.sort_by(|a, b| a["_id"].as_str().cmp(&b["_id"].as_str()));
    (items, profile["TradersInfo"].clone(), profile["TraderPurchases"].clone())
}

async fn refused(p: &Player, action: Value, says: &str) {
    let before = state(p).await;
    let warning = p.act(action.clone()).await.unwrap_or_else(|| panic!("applied; expected {says:?}: {action}"));
    assert!(warning.contains(says), "{warning} (expected {says:?})");
    assert!(state(p).await == before, "a refused {action} changed the profile");
}

async fn rifles(p: &Player) -> Vec<String> {
    p.of(RIFLE).await.iter().map(|r| r["_id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_sale_pays_the_traders_price_in_its_currency_and_every_refusal_changes_nothing() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Seller").await;
    assert_eq!(p.act(buy(TRADER, OFFER, 1, &p.roubles, 25_000)).await, None);
    assert_eq!(p.units(ROUBLES).await, 475_000);
    let rifle = rifles(&p).await.remove(0);

    refused(&p, sell(THERAPIST, &[(&rifle, 1)]), "does not buy").await;
    refused(&p, sell(TRADER, &[("ffffffffffffffffffffffff", 1)]), "cannot be found in player inventory").await;
    refused(&p, sell(TRADER, &[(&p.stash, 1)]), "root container").await;
    refused(&p, sell(TRADER, &[(&rifle, 2)]), "cannot sell 2").await;
    refused(&p, sell(TRADER, &[(&rifle, 1), (&rifle, 1)]), "named twice").await;
    refused(&p, sell("ffffffffffffffffffffffff", &[(&rifle, 1)]), "does not exist").await;
    refused(&p, json!({"Action": "TradingConfirm", "type": "sell_to_trader", "tid": TRADER, "items": []}), "no items")
        .await;

    // Prapor pays the handbook's 22 000 less his 50% at loyalty level 1: 11 000 roubles, into the stack.
    assert_eq!(p.act(sell(TRADER, &[(&rifle, 1)])).await, None);
    assert!(rifles(&p).await.is_empty());
    assert_eq!(p.units(ROUBLES).await, 486_000);
    let prapor = &p.profile().await["TradersInfo"][TRADER];
    assert_eq!(prapor["salesSum"], 36_000, "the purchase's 25 000 and the sale's 11 000: {prapor}");
    assert_eq!(prapor["loyaltyLevel"], 1);
}

#[tokio::test]
async fn dollars_from_a_dollar_trader_buy_its_offer_up_to_the_limit_until_it_resupplies() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Dollars").await;
    assert_eq!(p.act(buy(TRADER, OFFER, 2, &p.roubles, 50_000)).await, None);
    let sold = rifles(&p).await;
    assert_eq!(sold.len(), 2);
    // Peacekeeper pays in dollars: 2 × 22 000 less 40%, 26 400 roubles, at 143 a dollar: 184 dollars.
    assert_eq!(p.act(sell(PEACEKEEPER, &[(&sold[0], 1), (&sold[1], 1)])).await, None);
    assert_eq!(p.units(DOLLARS).await, 184);
    assert_eq!(p.units(ROUBLES).await, 450_000);
    let dollars = p.of(DOLLARS).await[0]["_id"].as_str().unwrap().to_owned();

    // His rifle costs 20 dollars, at most 3 a resupply.
    assert_eq!(p.act(buy(PEACEKEEPER, DOLLAR_OFFER, 2, &dollars, 40)).await, None);
    assert_eq!(p.units(DOLLARS).await, 144);
    refused(&p, buy(PEACEKEEPER, DOLLAR_OFFER, 2, &dollars, 40), "exceed your purchase limit of 3").await;
    refused(&p, buy(PEACEKEEPER, DOLLAR_OFFER, 1, &p.roubles, 20), "not part of the price").await;
    assert_eq!(p.act(buy(PEACEKEEPER, DOLLAR_OFFER, 1, &dollars, 20)).await, None);
    refused(&p, buy(PEACEKEEPER, DOLLAR_OFFER, 1, &dollars, 20), "exceed your purchase limit of 3").await;
    let keeper = &p.profile().await["TradersInfo"][PEACEKEEPER];
    assert_eq!(keeper["salesSum"], 184 + 60, "the sale's dollars and the purchases': {keeper}");
    let shown = |assort: &Value| {
        assort["data"]["items"].as_array().unwrap().iter().find(|i| i["_id"] == DOLLAR_OFFER).unwrap()["upd"]
            ["BuyRestrictionCurrent"]
            .clone()
    };
    let path = format!("/client/trading/api/getTraderAssort/{PEACEKEEPER}");
    assert_eq!(shown(&post(p.addr, &path, A, json!({})).await), 3);

    // Two hours later (his resupply is hourly), the limit is whole again.
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let server = again.db_json(&db(7200).to_string()).start().await.unwrap();
    let p = Player { addr: server.addr, ..p };
    assert_eq!(shown(&post(p.addr, &path, A, json!({})).await), 0);
    assert_eq!(p.act(buy(PEACEKEEPER, DOLLAR_OFFER, 3, &dollars, 60)).await, None);
    assert_eq!(p.units(DOLLARS).await, 64);
    assert_eq!(rifles(&p).await.len(), 6);
}

#[tokio::test]
async fn an_offer_the_assort_hides_from_the_player_is_not_sold() {
    let server = server().await;
    let p = Player::new(server.addr, A, "Hidden").await;
    refused(&p, buy(TRADER, QUESTED, 1, &p.roubles, 20_000), "does not show offer").await;
    refused(&p, buy(TRADER, GATED, 1, &p.roubles, 40_000), "needs loyalty level 2").await;
    assert_eq!(p.units(ROUBLES).await, 500_000);
}

#[tokio::test]
async fn the_scavs_loot_is_sold_to_fence_and_paid_once_by_mail() {
    let server = server().await;
    let p = Player::new(server.addr, B, "Scavenger").await;
    let list = post(p.addr, "/client/game/profile/list", B, json!({})).await;
    let scav = &list["data"][1];
    let equipment = scav["Inventory"]["equipment"].as_str().unwrap().to_owned();
    let scav_items = scav["Inventory"]["items"].as_array().unwrap().clone();
    let in_slots = scav_items.iter().filter(|i| i["parentId"] == equipment.as_str()).count();
    assert!(in_slots > 0, "the generated scav carries something: {scav}");

    let sale =
        json!({"Action": "SellAllFromSavage", "totalValue": 99_999_999, "fromOwner": scav["_id"], "toOwner": p.uid});
    let warning = p.act(sale.clone()).await;
    let after = post(p.addr, "/client/game/profile/list", B, json!({})).await;
    let left = after["data"][1]["Inventory"]["items"].as_array().unwrap().len();
    if let Some(warning) = warning {
        // Nothing Fence buys (the generated scav wore only what stays): nothing changed.
        assert!(warning.contains("nothing Fence buys"), "{warning}");
        assert_eq!(left, scav_items.len());
        return;
    }
    assert!(left < scav_items.len(), "the sold loot left the scav");
    assert_eq!(p.units(ROUBLES).await, 500_000, "the money comes by mail, not into the stash");
    // Sold once: a second sale finds nothing.
    let again = p.act(sale).await.expect("nothing left to sell");
    assert!(again.contains("nothing Fence buys"), "{again}");

    let uid = p.uid.clone();
    let restart = server.restart_builder();
    server.stop().await.unwrap();
    let stored = stored_profile(restart.root(), &uid);
    let record = &stored["_modhost"]["scavSale"];
    let money = record["money"].as_u64().unwrap();
    assert!(money > 0, "{record}");
    let letters = stored["_mail"]["messages"][FENCE].as_object().unwrap();
    assert_eq!(letters.len(), 1, "one letter: {letters:?}");
    let letter = letters.values().next().unwrap();
    let paid: u64 = letter["items"]["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            assert_eq!(i["_tpl"], ROUBLES);
            i["upd"]["StackObjectsCount"].as_u64().unwrap()
        })
        .sum();
    assert_eq!(paid, money);
}
