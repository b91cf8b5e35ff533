//! The flea market over the wire (`plugins/emulator/src/ragfair/`): the market's own offers after its
//! refresh, a search's filters, sorting and paging, buying (and every refusal changing nothing),
//! listing with SPT's fee, the offer selling by SPT's rules with the money arriving by mail, the
//! offer limit, renewal and removal with the items back by mail; money and items conserved throughout.
//!
//! Sales and removals are made quick by the test's db (`configs.ragfair.sell`), not by waiting hours:
//! each test polls, bounded in time, for what the game's timers do.

use super::emulator::{A, Player, ROUBLES, post, stored_profile};
use modhost_tests::TestServer;
use modhost_tests::client::{Call, send};
use modhost_tests::gamedb::{self, RIFLE, TRADER, flea::ROOT_CATEGORY};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// Prapor's rifle in his assort: 25 000 roubles, 100 in stock, loyalty level 1.
const TRADER_RIFLE: &str = "6000000000000000000000a1";
/// Prapor's loyalty-level-2 rifle.
const GATED_RIFLE: &str = "6000000000000000000000b1";
/// Ragman, the sender of the flea's letters.
const RAGMAN: &str = "5ac3b934156ae10c4430e83c";
/// The rifle's flea price (`templates.prices`).
const RIFLE_PRICE: f64 = 31_000.0;
/// Offers of the rifle once the market has filled: two of Prapor's and seven simulated players'.
const MARKET: u64 = 9;

/// The emulator on a generated db changed by `tweak`.
async fn flea(tweak: impl FnOnce(&mut Value)) -> TestServer {
    let mut db = gamedb::database(30);
    tweak(&mut db);
    TestServer::builder().config(|c| c.builtin_mods = true).db_json(&db.to_string()).start().await.unwrap()
}

async fn find(p: &Player, search: Value) -> Value {
    let answer = post(p.addr, "/client/ragfair/find", &p.session, search).await;
    assert_eq!(answer["err"], 0, "{answer}");
    answer["data"].clone()
}

/// Every offer of the rifle, cheapest first, once the market's refresh has put them all up (it fires
/// every 10 s; at most 40 s are waited).
async fn market(p: &Player) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let found =
            find(p, json!({"page": 0, "limit": 100, "handbookId": RIFLE, "sortType": 5, "sortDirection": 0})).await;
        if found["offersCount"].as_u64() >= Some(MARKET) {
            return found["offers"].as_array().unwrap().clone();
        }
        assert!(Instant::now() < deadline, "the market never filled: {found}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn by_id(p: &Player, id: &str) -> Value {
    post(p.addr, "/client/ragfair/offer/findbyid", &p.session, json!({"id": id})).await["data"].clone()
}

fn ids(offers: &Value) -> Vec<String> {
    offers.as_array().unwrap().iter().map(|o| o["_id"].as_str().unwrap().to_owned()).collect()
}

/// SPT's tax for one item worth `worth` listed at `asked` roubles (3% and 3%, no commission).
fn fee(worth: f64, asked: f64) -> u64 {
    let (mut item, mut req) = ((worth / asked).log10(), (asked / worth).log10());
    if asked >= worth {
        req = req.powf(1.08);
    } else {
        item = item.powf(1.08);
    }
    (worth * 0.03 * 4f64.powf(item) + asked * 0.03 * 4f64.powf(req)).round() as u64
}

fn buy_offer(offer: &str, count: u64, paying: &[(&str, u64)]) -> Value {
    let items: Vec<Value> = paying.iter().map(|(id, n)| json!({"id": id, "count": n})).collect();
    json!({"Action": "RagFairBuyOffer", "offers": [{"id": offer, "count": count, "items": items}]})
}

fn list(items: &[&str], asked: u64) -> Value {
    json!({"Action": "RagFairAddOffer", "items": items, "sellInOnePiece": false,
           "requirements": [{"_tpl": ROUBLES, "count": asked, "level": 0, "side": 0, "onlyFunctional": false}]})
}

/// Buys `n` rifles from Prapor (TradingConfirm), answering their ids.
async fn rifles(p: &Player, n: u64) -> Vec<String> {
    let before: BTreeSet<String> = p.of(RIFLE).await.iter().map(|i| i["_id"].as_str().unwrap().to_owned()).collect();
    let buy = json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": TRADER_RIFLE,
                     "count": n, "scheme_id": 0, "scheme_items": [{"id": p.roubles, "count": 25_000 * n}]});
    assert_eq!(p.act(buy).await, None);
    p.of(RIFLE).await.iter().map(|i| i["_id"].as_str().unwrap().to_owned()).filter(|id| !before.contains(id)).collect()
}

/// Waits (at most 5 s) until offer `id` has left the market: the store's copy goes right after the
/// profile's write.
async fn gone(p: &Player, id: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !by_id(p, id).await.is_null() {
        assert!(Instant::now() < deadline, "offer {id} stayed on the market");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The letters in a stored profile's mailbox from `sender`.
fn letters(profile: &Value, sender: &str) -> Vec<Value> {
    profile["_mail"]["messages"][sender].as_object().map(|m| m.values().cloned().collect()).unwrap_or_default()
}

/// Waits (at most `seconds`) until `done` holds of the profile as `profile/list` answers it.
async fn until(p: &Player, seconds: u64, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        let profile = p.profile().await;
        if done(&profile) {
            return profile;
        }
        assert!(Instant::now() < deadline, "{what}: {}", profile["RagfairInfo"]);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test]
async fn a_search_filters_sorts_and_pages_as_the_client_asks() {
    let server = flea(|_| {}).await;
    let p = Player::new(server.addr, A, "Looker").await;
    let all = market(&p).await;
    assert_eq!(all.len() as u64, MARKET);
    let prices: Vec<f64> = all.iter().map(|o| o["requirementsCost"].as_f64().unwrap()).collect();
    assert!(prices.windows(2).all(|w| w[0] <= w[1]), "cheapest first: {prices:?}");
    for offer in &all {
        for member in [
            "_id",
            "intId",
            "items",
            "requirements",
            "root",
            "requirementsCost",
            "startTime",
            "endTime",
            "user",
            "quantity",
        ] {
            assert!(!offer[member].is_null(), "{member} in {offer}");
        }
        assert!(
            offer.as_object().unwrap().keys().all(|k| k == "_id" || !k.starts_with('_')),
            "game members leak: {offer}"
        );
    }

    let dearest = find(&p, json!({"limit": 100, "handbookId": RIFLE, "sortType": 5, "sortDirection": 1})).await;
    let down: Vec<f64> =
        dearest["offers"].as_array().unwrap().iter().map(|o| o["requirementsCost"].as_f64().unwrap()).collect();
    assert!(down.windows(2).all(|w| w[0] >= w[1]), "dearest first: {down:?}");

    // Pages of four: 4, 4, 1, every offer once, the count the whole result's.
    let mut seen = BTreeSet::new();
    for (page, expected) in [(0, 4), (1, 4), (2, 1), (3, 0)] {
        let found = find(&p, json!({"page": page, "limit": 4, "handbookId": RIFLE, "sortType": 5})).await;
        assert_eq!(found["offersCount"], MARKET);
        assert_eq!(found["offers"].as_array().unwrap().len(), expected, "page {page}");
        seen.extend(ids(&found["offers"]));
    }
    assert_eq!(seen.len() as u64, MARKET);

    let traders = find(&p, json!({"limit": 100, "handbookId": RIFLE, "offerOwnerType": 1})).await;
    assert_eq!(traders["offersCount"], 2, "Prapor's two (the quest-locked one is not on the flea)");
    assert!(traders["offers"].as_array().unwrap().iter().all(|o| o["user"]["memberType"] == 4));
    let players = find(&p, json!({"limit": 100, "handbookId": RIFLE, "offerOwnerType": 2})).await;
    assert_eq!(players["offersCount"], MARKET - 2);

    let from = prices[4];
    let dear = find(&p, json!({"limit": 100, "handbookId": RIFLE, "priceFrom": from})).await;
    let expected = prices.iter().filter(|p| **p >= from).count();
    assert_eq!(dear["offersCount"], expected);
    assert!(dear["offers"].as_array().unwrap().iter().all(|o| o["requirementsCost"].as_f64().unwrap() >= from));
    let few = find(&p, json!({"limit": 100, "handbookId": RIFLE, "quantityTo": 5})).await;
    assert!(few["offers"].as_array().unwrap().iter().all(|o| o["quantity"].as_u64().unwrap() <= 5));
    assert!(few["offersCount"].as_u64().unwrap() < MARKET, "Prapor's 100 are out");
    // Peacekeeper sells the rifle for dollars (`host/gamedb/src/trade.rs`); everything else is in roubles.
    let dollars = find(&p, json!({"limit": 100, "handbookId": RIFLE, "currency": 2})).await;
    let in_dollars = dollars["offers"].as_array().unwrap();
    assert!(dollars["offersCount"].as_u64().unwrap() < MARKET, "{dollars}");
    assert!(in_dollars.iter().all(|o| o["requirements"][0]["_tpl"] == "5696686a4bdc2da3298b456a"), "{dollars}");

    // A category's subtree, with the counts the client asks for; the search route answers the same.
    let category = find(&p, json!({"limit": 100, "handbookId": ROOT_CATEGORY, "updateOfferCount": true})).await;
    assert_eq!(category["offersCount"], MARKET);
    assert_eq!(category["categories"][RIFLE], MARKET);
    assert_eq!(category["selectedCategory"], ROOT_CATEGORY);
    let searched =
        post(p.addr, "/client/ragfair/search", &p.session, json!({"limit": 100, "handbookId": ROOT_CATEGORY})).await;
    assert_eq!(searched["data"]["offersCount"], MARKET);
    let nothing = find(&p, json!({"handbookId": gamedb::hex_id(3)})).await;
    assert_eq!(nothing["offersCount"], 0);

    // By intId and by id; a market price within the simulated sellers' spread.
    let first = &all[0];
    assert_eq!(by_id(&p, &first["intId"].to_string()).await["_id"], first["_id"]);
    assert_eq!(by_id(&p, first["_id"].as_str().unwrap()).await["_id"], first["_id"]);
    let price =
        post(p.addr, "/client/ragfair/itemMarketPrice", &p.session, json!({"templateId": RIFLE})).await["data"].clone();
    let (min, avg, max) =
        (price["min"].as_f64().unwrap(), price["avg"].as_f64().unwrap(), price["max"].as_f64().unwrap());
    assert!(RIFLE_PRICE * 0.79 <= min && min <= avg && avg <= max && max <= RIFLE_PRICE * 1.21, "{price}");

    // Bodies are bounded.
    let huge =
        json!({"buildItems": (0..5000).map(|n| (gamedb::hex_id(n), json!(1))).collect::<serde_json::Map<_, _>>()});
    let reply =
        send(server.addr, &Call::post("/client/ragfair/find", huge.to_string().as_bytes()).session(A)).await.unwrap();
    assert_eq!(reply.status, 413, "{}", reply.text());
    let many =
        json!({"buildItems": (0..200).map(|n| (gamedb::hex_id(n), json!(1))).collect::<serde_json::Map<_, _>>()});
    let reply =
        send(server.addr, &Call::post("/client/ragfair/find", many.to_string().as_bytes()).session(A)).await.unwrap();
    assert_eq!(reply.status, 400, "a build of 200 parts: {}", reply.text());
    for path in ["/client/ragfair/offerfees", "/client/reports/ragfair/send"] {
        assert_eq!(post(p.addr, path, A, json!({"id": "x", "fee": 1})).await["data"], Value::Null, "{path}");
    }
}

#[tokio::test]
async fn buying_takes_exactly_the_price_and_every_refusal_changes_nothing() {
    let server = flea(|_| {}).await;
    let p = Player::new(server.addr, A, "Buyer").await;
    let all = market(&p).await;
    let money = p.units(ROUBLES).await;
    let trader_left = by_id(&p, TRADER_RIFLE).await["quantity"].as_u64().unwrap();
    // A simulated seller's offer in roubles (about one in five asks dollars or euros, as SPT's mix).
    let simulated =
        all.iter().find(|o| o["user"]["memberType"] == 0 && o["requirements"][0]["_tpl"] == ROUBLES).unwrap().clone();
    let (sim_id, sim_left) = (simulated["_id"].as_str().unwrap(), simulated["quantity"].as_u64().unwrap());
    let sim_price = simulated["requirements"][0]["count"].as_u64().unwrap();

    let refused = [
        ("no such offer", buy_offer("ffffffffffffffffffffffff", 1, &[(&p.roubles, 25_000)])),
        ("count 0", buy_offer(TRADER_RIFLE, 0, &[(&p.roubles, 25_000)])),
        ("more than there is", buy_offer(sim_id, sim_left + 1, &[(&p.roubles, sim_price * (sim_left + 1))])),
        ("underpaid", buy_offer(TRADER_RIFLE, 1, &[(&p.roubles, 24_999)])),
        ("paid with what it does not own", buy_offer(TRADER_RIFLE, 1, &[("eeeeeeeeeeeeeeeeeeeeeeee", 25_000)])),
        ("paid with the stash", buy_offer(TRADER_RIFLE, 1, &[(&p.stash, 1)])),
        ("a loyalty level too low", buy_offer(GATED_RIFLE, 1, &[(&p.roubles, 40_000)])),
        ("no offers", json!({"Action": "RagFairBuyOffer", "offers": []})),
    ];
    for (what, action) in refused {
        let reason = p.act(action).await;
        assert!(reason.as_ref().is_some_and(|r| !r.is_empty()), "{what} was not refused");
        assert_eq!(p.units(ROUBLES).await, money, "{what} moved money: {reason:?}");
        assert_eq!(p.of(RIFLE).await.len(), 0, "{what} gave a rifle");
        assert_eq!(by_id(&p, TRADER_RIFLE).await["quantity"], trader_left, "{what} took stock");
        assert_eq!(by_id(&p, sim_id).await["quantity"], sim_left, "{what} took stock");
    }

    // Two of Prapor's, paying more than asked: exactly the price is taken.
    let answer = p.moving(vec![buy_offer(TRADER_RIFLE, 2, &[(&p.roubles, 60_000)])]).await;
    assert_eq!(answer["data"]["warnings"], json!([]), "{answer}");
    assert_eq!(answer["data"]["profileChanges"][&p.uid]["items"]["new"].as_array().unwrap().len(), 2, "{answer}");
    assert_eq!(p.units(ROUBLES).await, money - 50_000);
    assert_eq!(p.of(RIFLE).await.len(), 2);
    assert_eq!(by_id(&p, TRADER_RIFLE).await["quantity"], trader_left - 2);
    assert_eq!(p.profile().await["TraderPurchases"][TRADER][TRADER_RIFLE]["count"], 2);

    // One of a simulated seller's.
    assert_eq!(p.act(buy_offer(sim_id, 1, &[(&p.roubles, sim_price)])).await, None);
    assert_eq!(p.units(ROUBLES).await, money - 50_000 - sim_price);
    assert_eq!(p.of(RIFLE).await.len(), 3);
    let left = by_id(&p, sim_id).await;
    assert_eq!(if sim_left == 1 { Value::Null } else { json!(sim_left - 1) }, left["quantity"], "{left}");
}

#[tokio::test]
async fn a_listed_offer_costs_spts_fee_sells_and_its_money_arrives_by_mail() {
    // A sure sale within seconds: SPT's formula at its most generous, and sale times of at most 5 s.
    let server = flea(|db| {
        db["configs"]["ragfair"]["sell"]["chance"]["base"] = json!(100);
        db["configs"]["ragfair"]["sell"]["time"] = json!({"min": 0, "max": 0});
    })
    .await;
    let p = Player::new(server.addr, A, "Seller").await;
    let rifle = rifles(&p, 1).await.remove(0);
    let money = p.units(ROUBLES).await;

    let answer = p.moving(vec![list(&[&rifle], 31_000)]).await;
    assert_eq!(answer["data"]["warnings"], json!([]), "{answer}");
    let changes = &answer["data"]["profileChanges"][&p.uid];
    let offer = changes["ragFairOffers"][0].clone();
    let id = offer["_id"].as_str().unwrap().to_owned();
    assert_eq!(offer["quantity"], 1);
    assert_eq!(offer["requirementsCost"], 31_000.0);
    assert_eq!(changes["RagfairInfo"]["offers"][0]["_id"], id.as_str());
    assert!(changes["items"]["del"].as_array().unwrap().iter().any(|d| d["_id"] == rifle.as_str()), "{changes}");
    let charged = fee(RIFLE_PRICE, 31_000.0);
    assert_eq!(charged, 1860);
    assert_eq!(p.units(ROUBLES).await, money - charged, "the fee, exactly");
    assert_eq!(p.of(RIFLE).await.len(), 0, "the rifle left the stash");

    // Searchable at once, and not the seller's to buy.
    let mine = find(&p, json!({"limit": 100, "handbookId": RIFLE, "offerOwnerType": 2})).await;
    assert!(ids(&mine["offers"]).contains(&id), "{mine}");
    assert!(p.act(buy_offer(&id, 1, &[(&p.roubles, 31_000)])).await.is_some(), "bought own offer");
    assert_eq!(p.units(ROUBLES).await, money - charged);

    // It sells: the offer is gone and the rating grew.
    let sold = until(&p, 60, "the offer never sold", |profile| {
        profile["RagfairInfo"]["offers"].as_array().is_some_and(|o| o.is_empty())
            && profile["RagfairInfo"]["rating"].as_f64().unwrap_or(0.0) > 0.0
    })
    .await;
    assert_eq!(sold["RagfairInfo"]["isRatingGrowing"], true);
    gone(&p, &id).await;

    // The money is in a letter from Ragman, and nothing was made or lost.
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let stored = stored_profile(again.root(), &p.uid);
    let letters = letters(&stored, RAGMAN);
    assert_eq!(letters.len(), 1, "{:?}", stored["_mail"]);
    assert_eq!(letters[0]["type"], 4, "FLEAMARKET");
    let paid: Vec<&Value> = letters[0]["items"]["data"].as_array().unwrap().iter().collect();
    assert_eq!(paid.len(), 1);
    assert_eq!((paid[0]["_tpl"].as_str(), paid[0]["upd"]["StackObjectsCount"].as_u64()), (Some(ROUBLES), Some(31_000)));
    assert!(stored["_flea"].as_object().is_none_or(|m| m.is_empty()), "{}", stored["_flea"]);
}

#[tokio::test]
async fn the_offer_limit_renewal_and_removal_with_the_items_back_by_mail() {
    // Nothing sells here; a removed offer ends after 2 s.
    let server = flea(|db| {
        db["configs"]["ragfair"]["sell"]["chance"]["maxSellChancePercent"] = json!(0);
        db["configs"]["ragfair"]["sell"]["expireSeconds"] = json!(2);
    })
    .await;
    let p = Player::new(server.addr, A, "Lister").await;
    let bought = rifles(&p, 3).await;
    assert_eq!(bought.len(), 3);
    let money = p.units(ROUBLES).await;
    let charged = fee(RIFLE_PRICE, 31_000.0);

    let first = p.moving(vec![list(&[&bought[0]], 31_000)]).await;
    let first = first["data"]["profileChanges"][&p.uid]["ragFairOffers"][0].clone();
    let id = first["_id"].as_str().unwrap().to_owned();
    assert_eq!(p.act(list(&[&bought[1]], 31_000)).await, None);
    assert_eq!(p.units(ROUBLES).await, money - 2 * charged);

    // A rating of 0 allows two offers (`maxActiveOfferCount`): the third is refused and changes nothing.
    let reason = p.act(list(&[&bought[2]], 31_000)).await;
    assert!(reason.as_ref().is_some_and(|r| r.contains("allows 2 offers")), "{reason:?}");
    assert_eq!(p.units(ROUBLES).await, money - 2 * charged);
    assert_eq!(p.of(RIFLE).await.len(), 1);

    // Renewal: the fee again, `renewalTime` hours more; past the most hours, refused.
    let renew = |hours: u64| json!({"Action": "RagFairRenewOffer", "offerId": id, "renewalTime": hours});
    assert!(p.act(renew(13)).await.is_some(), "13 hours renewed");
    let answer = p.moving(vec![renew(2)]).await;
    assert_eq!(answer["data"]["warnings"], json!([]), "{answer}");
    let renewed = &answer["data"]["profileChanges"][&p.uid]["ragFairOffers"][0];
    assert_eq!(renewed["endTime"].as_u64().unwrap(), first["endTime"].as_u64().unwrap() + 7200);
    assert_eq!(p.units(ROUBLES).await, money - 3 * charged);
    assert_eq!(by_id(&p, &id).await["endTime"], renewed["endTime"], "the market's copy follows");
    let stranger = json!({"Action": "RagFairRemoveOffer", "offerId": TRADER_RIFLE});
    assert!(p.act(stranger).await.is_some(), "removed an offer not the player's");

    // Removal: the offer ends in 2 s and the rifle comes back by mail.
    assert_eq!(p.act(json!({"Action": "RagFairRemoveOffer", "offerId": id})).await, None);
    until(&p, 60, "the removed offer never ended", |profile| {
        profile["RagfairInfo"]["offers"].as_array().is_some_and(|o| o.len() == 1 && o[0]["_id"] != id.as_str())
    })
    .await;
    gone(&p, &id).await;
    assert_eq!(p.units(ROUBLES).await, money - 3 * charged, "a removal costs nothing more");

    let again = server.restart_builder();
    server.stop().await.unwrap();
    let stored = stored_profile(again.root(), &p.uid);
    let back = letters(&stored, RAGMAN);
    assert_eq!(back.len(), 1, "{:?}", stored["_mail"]);
    let items = back[0]["items"]["data"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["_tpl"], RIFLE);
    // Three rifles: one in the stash, one on the market, one in the mail.
    let in_stash = stored["Inventory"]["items"].as_object().unwrap().values().filter(|i| i["_tpl"] == RIFLE).count();
    assert_eq!(in_stash + stored["_flea"].as_object().unwrap().len() + items.len(), 3);
}
