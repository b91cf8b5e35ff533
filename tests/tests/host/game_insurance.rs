//! Insurance over the wire (`plugins/emulator/src/insurance/`): `Insure` charges the quote exactly and
//! refuses what it must, changing nothing; insured gear lost in a raid comes back by mail after the
//! trader's return time, also when the server was off at the due time (the game's clock moved past it
//! across a restart), once, and is taken into the stash; and the host's timer delivers it on its own
//! (pushed to the player, heard as `insurance.returned`). An insured item reported at a raid's end under
//! another id (a fresh one, another brought-in item's, a stash item's) never comes back twice: the end
//! decides once, by id, what came back, and insurance returns only what went missing.

use super::emulator::{A, Player, ROUBLES, post};
use modhost_tests::client::{Call, send};
use modhost_tests::gamedb::{self, RIFLE, TRADER};
use modhost_tests::{TestServer, TestServerBuilder, guests};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const MAP: &str = "factory4_day";
const OFFER: &str = "6000000000000000000000a1";
/// The rifle's handbook price (22000) times Prapor's `insurance_price_coef` at loyalty 1 (16), over 100.
const RIFLE_PREMIUM: u64 = 3520;
/// Past Prapor's `max_return_hour` (36).
const PAST_RETURN: u64 = 40 * 3600;

/// The generated database, with Prapor returning everything (no roll) and `override_seconds` as
/// `configs.insurance.returnTimeOverrideSeconds`.
fn database(override_seconds: u64) -> Value {
    let mut db = gamedb::database(100);
    db["configs"]["insurance"]["returnChancePercent"][TRADER] = json!(100);
    db["configs"]["insurance"]["chanceNoAttachmentsTakenPercent"] = json!(100);
    db["configs"]["insurance"]["returnTimeOverrideSeconds"] = json!(override_seconds);
    db
}

fn builder(db: &Value) -> TestServerBuilder {
    TestServer::builder().db_json(&db.to_string()).config(|c| c.builtin_mods = true)
}

async fn data(addr: SocketAddr, path: &str, session: &str, body: Value) -> Value {
    let answer = post(addr, path, session, body).await;
    assert_eq!(answer["err"], 0, "{path}: {answer}");
    answer["data"].clone()
}

/// A player on session [`A`] with the rifle bought and in its primary weapon slot: the player and the
/// rifle's id.
async fn armed(addr: SocketAddr, name: &str) -> (Player, String) {
    armed_on(addr, A, name).await
}

/// [`armed`] on `session`.
async fn armed_on(addr: SocketAddr, session: &str, name: &str) -> (Player, String) {
    let p = Player::new(addr, session, name).await;
    let rifle = buy_rifle(&p).await;
    let equipment = p.profile().await["Inventory"]["equipment"].as_str().unwrap().to_owned();
    let equip = json!({"Action": "Move", "item": rifle, "to": {"id": equipment, "container": "FirstPrimaryWeapon"}});
    assert_eq!(p.act(equip).await, None);
    (p, rifle)
}

/// Buys one more rifle into the stash; answers its id.
async fn buy_rifle(p: &Player) -> String {
    let had: Vec<Value> = p.of(RIFLE).await.iter().map(|r| r["_id"].clone()).collect();
    let buy = json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": OFFER,
                     "count": 1, "scheme_id": 0, "scheme_items": [{"id": p.roubles, "count": 25000}]});
    assert_eq!(p.act(buy).await, None);
    let new = p.of(RIFLE).await.into_iter().find(|r| !had.contains(&r["_id"])).expect("the rifle bought");
    new["_id"].as_str().unwrap().to_owned()
}

fn insure(items: &[&str]) -> Value {
    json!({"Action": "Insure", "tid": TRADER, "items": items})
}

/// Starts a PMC raid on [`MAP`]; answers its `serverId`.
async fn start(p: &Player) -> String {
    let started =
        data(p.addr, "/client/match/local/start", &p.session, json!({"location": MAP, "playerSide": "pmc"})).await;
    started["serverId"].as_str().unwrap().to_owned()
}

/// Ends the raid `server_id` with `result`, the client reporting `profile`; answers the envelope.
async fn end(p: &Player, server_id: &str, result: &str, profile: &Value) -> Value {
    let body = json!({"serverId": server_id, "results": {"result": result, "profile": profile, "exitName": null,
                      "killerId": null, "inSession": true, "playTime": 600}, "lostInsuredItems": [], "transferItems": {}});
    post(p.addr, "/client/match/local/end", &p.session, body).await
}

/// A PMC raid on [`MAP`], ended `Killed` with the profile as it went in.
async fn die(p: &Player) {
    let server_id = start(p).await;
    let ended = end(p, &server_id, "Killed", &p.profile().await).await;
    assert_eq!(ended["err"], 0, "{ended}");
}

/// The insurance returns (type 8) in Prapor's dialogue, as `view` answers them.
async fn returns(p: &Player) -> Vec<Value> {
    let view = data(p.addr, "/client/mail/dialog/view", &p.session, json!({"dialogId": TRADER, "type": 2})).await;
    view["messages"].as_array().unwrap().iter().filter(|m| m["type"] == 8).cloned().collect()
}

#[tokio::test]
async fn insure_charges_the_quote_exactly_and_refuses_what_it_must() {
    let server = builder(&database(0)).start().await.unwrap();
    let addr = server.addr;
    let (p, rifle) = armed(addr, "Careful").await;
    let quote =
        data(addr, "/client/insurance/items/list/cost", A, json!({"traders": [TRADER], "items": [rifle]})).await;
    assert_eq!(quote, json!({TRADER: {RIFLE: RIFLE_PREMIUM}}), "SPT keys the quote by template");

    let before = p.units(ROUBLES).await;
    let refused = [
        (
            "an item not in the profile",
            json!({"Action": "Insure", "tid": TRADER, "items": ["ffffffffffffffffffffffff"]}),
        ),
        ("a root container", insure(&[&p.stash])),
        (
            "a trader that does not exist",
            json!({"Action": "Insure", "tid": "ffffffffffffffffffffffff", "items": [rifle]}),
        ),
        ("nothing", insure(&[])),
        ("one item twice", insure(&[&rifle, &rifle])),
    ];
    for (what, action) in refused {
        assert!(p.act(action).await.is_some(), "{what} was insured");
        assert_eq!(p.units(ROUBLES).await, before, "{what} cost money");
    }
    assert_eq!(p.act(insure(&[&rifle])).await, None);
    assert_eq!(p.units(ROUBLES).await, before - RIFLE_PREMIUM, "the premium, exactly");
    let profile = p.profile().await;
    assert_eq!(profile["InsuredItems"], json!([{"tid": TRADER, "itemId": rifle}]));
    assert_eq!(profile["TradersInfo"][TRADER]["salesSum"], 25_000 + RIFLE_PREMIUM, "the trader's sales count it");
    let twice = p.act(insure(&[&rifle])).await;
    assert!(twice.as_deref().is_some_and(|r| r.contains("insured already")), "{twice:?}");
    assert_eq!(p.units(ROUBLES).await, before - RIFLE_PREMIUM);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn insured_gear_lost_in_a_raid_comes_back_by_mail_once_after_a_restart_past_its_return_time() {
    let db = database(0);
    let server = builder(&db).start().await.unwrap();
    let (p, rifle) = armed(server.addr, "Unlucky").await;
    assert_eq!(p.act(insure(&[&rifle])).await, None);
    die(&p).await;
    let dead = p.profile().await;
    assert!(dead["Inventory"]["items"].as_array().unwrap().iter().all(|i| i["_id"] != rifle.as_str()), "lost");
    assert_eq!(dead["InsuredItems"], json!([]), "a lost item is no longer insured");
    // The trader says he will look for it; nothing has come back yet.
    let view = data(p.addr, "/client/mail/dialog/view", A, json!({"dialogId": TRADER, "type": 2})).await;
    let start = db["traders"][TRADER]["dialogue"]["insuranceStart"][0].clone();
    assert!(view["messages"].as_array().unwrap().iter().any(|m| m["templateId"] == start), "{view}");
    assert!(returns(&p).await.is_empty());

    // The server is off past the return time: the game's clock is moved past it before it starts again.
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let mut later = db.clone();
    later["emulator"]["clock"] = json!({"offsetSeconds": PAST_RETURN});
    let server = again.db_json(&later.to_string()).start().await.unwrap();
    let p = Player { addr: server.addr, ..p };
    let list = data(p.addr, "/client/mail/dialog/list", A, json!({})).await;
    let prapor = list.as_array().unwrap().iter().find(|d| d["_id"] == TRADER).expect("Prapor's dialogue").clone();
    assert!(prapor["attachmentsNew"].as_u64().unwrap() >= 1, "{prapor}");
    let back = returns(&p).await;
    assert_eq!(back.len(), 1, "{back:?}");
    let letter = &back[0];
    assert_eq!(letter["systemData"]["location"], MAP);
    assert_eq!(letter["templateId"], db["traders"][TRADER]["dialogue"]["insuranceFound"][0]);
    let items = letter["items"]["data"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{letter}");
    assert_eq!(
        (&items[0]["_tpl"], &items[0]["slotId"], &items[0]["parentId"]),
        (&json!(RIFLE), &json!("main"), &letter["items"]["stash"])
    );
    let returned = items[0]["_id"].as_str().unwrap().to_owned();

    // Taken into the stash; reading the mail again brings nothing twice.
    let take = json!({"Action": "Move", "item": returned, "fromOwner": {"id": letter["_id"], "type": "Mail"},
                      "to": {"id": p.stash, "container": "hideout", "location": {"x": 5, "y": 5, "r": "Horizontal"}}});
    assert_eq!(p.act(take).await, None);
    assert_eq!(p.item(&returned).await["_tpl"], RIFLE);
    assert_eq!(p.of(RIFLE).await.len(), 1, "one rifle, as before the raid");
    data(p.addr, "/client/mail/dialog/list", A, json!({})).await;
    assert_eq!(returns(&p).await.len(), 1, "delivered once");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn the_hosts_timer_delivers_a_return_on_its_own_and_mods_hear_it() {
    let builder = builder(&database(2));
    let dir = builder.root().join("mods").join("a");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.default.json"),
        json!({"name": "a", "subscriptions": ["insurance.returned"]}).to_string(),
    )
    .unwrap();
    let server = builder.with_mod("a", guests::PEER, "").start().await.unwrap();
    let (p, rifle) = armed(server.addr, "Patient").await;
    assert_eq!(p.act(insure(&[&rifle])).await, None);
    die(&p).await;

    // Without reading the mail: the return is pushed to the player when the timer fires (2 s).
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut pushed = Vec::new();
    while Instant::now() < deadline && !pushed.iter().any(|n: &Value| n["message"]["type"] == 8) {
        let reply = send(server.addr, &Call::get(&format!("/notifierServer/get/{A}"))).await.unwrap();
        pushed.extend(reply.text().lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()));
    }
    let note =
        pushed.iter().find(|n| n["message"]["type"] == 8).unwrap_or_else(|| panic!("no return pushed: {pushed:?}"));
    assert_eq!(note["type"], "new_message");
    assert_eq!(note["dialogId"], TRADER);
    let heard = send(server.addr, &Call::get("/peer/a/events").session(A)).await.unwrap().json();
    let event = heard.as_array().unwrap().iter().find(|e| e["topic"] == "insurance.returned").cloned();
    let event = event.unwrap_or_else(|| panic!("insurance.returned not heard: {heard}"));
    assert_eq!((&event["payload"]["trader"], &event["payload"]["items"]), (&json!(TRADER), &json!(1)));
    assert_eq!(event["payload"]["messageId"], note["message"]["_id"]);
    assert_eq!(returns(&p).await.len(), 1);
    server.stop().await.unwrap();
}

/// The results a raid ends with: the three a player lives through, and a death for contrast.
const RESULTS: [&str; 4] = ["Survived", "Runner", "Transit", "Killed"];

/// `profile` (as the client reports it) with item `from` named `to`, what is in it following it.
fn renamed(mut profile: Value, from: &str, to: &str) -> Value {
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

/// `profile` with items `a` and `b` (and what is in them) trading ids.
fn swapped(profile: Value, a: &str, b: &str) -> Value {
    let between = "0123456789abcdef01234567";
    renamed(renamed(renamed(profile, a, between), b, a), between, b)
}

/// `profile` without item `id` and what is in it: left in the raid, or in the stash and not reported.
fn without(mut profile: Value, id: &str) -> Value {
    let items = profile["Inventory"]["items"].as_array_mut().unwrap();
    let mut gone = vec![json!(id)];
    for _ in 0..16 {
        let more: Vec<Value> = items
            .iter()
            .filter(|i| gone.contains(&i["parentId"]) && !gone.contains(&i["_id"]))
            .map(|i| i["_id"].clone())
            .collect();
        if more.is_empty() {
            break;
        }
        gone.extend(more);
    }
    items.retain(|i| !gone.contains(&i["_id"]));
    profile
}

/// Units of `tpl` the player has: in its profile (stash and equipment) and in every letter's
/// attachments.
async fn held(p: &Player, tpl: &str) -> u64 {
    let mut units = p.units(tpl).await;
    let list = data(p.addr, "/client/mail/dialog/list", &p.session, json!({})).await;
    for dialogue in list.as_array().unwrap() {
        let ask = json!({"dialogId": dialogue["_id"], "type": dialogue["type"]});
        let view = data(p.addr, "/client/mail/dialog/view", &p.session, ask).await;
        for message in view["messages"].as_array().unwrap() {
            let attached = message["items"]["data"].as_array().into_iter().flatten();
            units += attached
                .filter(|i| i["_tpl"] == tpl)
                .map(|i| i["upd"]["StackObjectsCount"].as_u64().unwrap_or(1))
                .sum::<u64>();
        }
    }
    units
}

/// Restarts `server` (on `db`) with the game's clock past every return time.
async fn past_returns(server: TestServer, db: &Value) -> TestServer {
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let mut later = db.clone();
    later["emulator"]["clock"] = json!({"offsetSeconds": PAST_RETURN});
    again.db_json(&later.to_string()).start().await.unwrap()
}

#[tokio::test]
async fn an_insured_rifle_reported_under_another_id_comes_back_once() {
    let db = database(0);
    let server = builder(&db).start().await.unwrap();
    let addr = server.addr;
    let cases = ["a fresh id", "the other brought-in rifle's id", "a stash rifle's id", "the pockets' id"];
    // Each: the player, what it reported, the rifles it has in the end, the lying end's answer.
    let mut ended: Vec<(Player, String, u64, Value)> = Vec::new();
    for (r, result) in RESULTS.into_iter().enumerate() {
        for (c, case) in cases.into_iter().enumerate() {
            let k = r * cases.len() + c;
            let (p, rifle) = armed_on(addr, &format!("e{k:023x}"), &format!("Twice{k}")).await;
            let fresh = format!("f{k:023x}");
            // A second rifle, uninsured: in the stash, or brought into the raid.
            let other = buy_rifle(&p).await;
            if c == 1 {
                let equipment = p.profile().await["Inventory"]["equipment"].as_str().unwrap().to_owned();
                let carry = json!({"Action": "Move", "item": other, "to": {"id": equipment, "container": "SecondPrimaryWeapon"}});
                assert_eq!(p.act(carry).await, None);
            }
            assert_eq!(p.act(insure(&[&rifle])).await, None);
            let server_id = start(&p).await;
            let went_in = p.profile().await;
            let lie = match c {
                0 => renamed(went_in.clone(), &rifle, &fresh),
                1 => renamed(renamed(went_in.clone(), &other, &fresh), &rifle, &other),
                2 => renamed(without(went_in.clone(), &other), &rifle, &other),
                _ => swapped(went_in.clone(), &rifle, &p.pockets),
            };
            let answer = end(&p, &server_id, result, &lie).await;
            // Then the raid ends as it may: the insured rifle left in it, lost (refused when the lie was
            // taken: the raid is over).
            end(&p, &server_id, result, &without(went_in, &rifle)).await;
            // What it has in the end: the insured rifle once, back by mail, and the other rifle where
            // a raid leaves it (the stash's untouched; the brought-in one lost with a death).
            let rifles = if (c, result) == (1, "Killed") { 1 } else { 2 };
            ended.push((p, format!("{result}, the insured rifle under {case}"), rifles, answer));
        }
    }
    let server = past_returns(server, &db).await;
    for (p, what, rifles, answer) in ended {
        let p = Player { addr: server.addr, ..p };
        assert_eq!(
            held(&p, RIFLE).await,
            rifles,
            "{what}: rifles in the profile and the mail; the end answered {answer}"
        );
        assert_eq!(returns(&p).await.len(), 1, "{what}: one return");
        assert_ne!(answer["err"], 0, "{what}: taken");
        let why = answer["errmsg"].as_str().unwrap();
        assert!(why.contains("nothing was changed"), "{what}: {why}");
    }
    server.stop().await.unwrap();
}

#[tokio::test]
async fn an_insured_stack_reported_under_a_new_id_is_not_also_returned() {
    let db = database(0);
    let server = builder(&db).start().await.unwrap();
    let addr = server.addr;
    // Each: the player, the result, the roubles it had going in, whether something was lost to return.
    let mut ended: Vec<(Player, &str, u64)> = Vec::new();
    for (k, result) in RESULTS.into_iter().enumerate() {
        let p = Player::new(addr, &format!("d{k:023x}"), &format!("Stacked{k}")).await;
        // A thousand roubles into the pockets, insured: a stack (SPT lets money be insured).
        let cash = format!("c{k:023x}");
        let split = json!({"Action": "Split", "splitItem": p.roubles, "newItem": cash, "count": 1000,
            "container": {"id": p.pockets, "container": "pocket1", "location": {"x": 0, "y": 0, "r": "Horizontal"}}});
        assert_eq!(p.act(split).await, None);
        assert_eq!(p.act(insure(&[&cash])).await, None);
        let roubles = held(&p, ROUBLES).await;
        let server_id = start(&p).await;
        // All of it under a new id: a split then merged, as honest a report as any; no unit is missing.
        let merged = renamed(p.profile().await, &cash, &format!("f{k:023x}"));
        let answer = end(&p, &server_id, result, &merged).await;
        assert_eq!(answer["err"], 0, "{result}: {answer}");
        ended.push((p, result, roubles));
    }
    let server = past_returns(server, &db).await;
    for (p, result, roubles) in ended {
        let p = Player { addr: server.addr, ..p };
        assert_eq!(held(&p, ROUBLES).await, roubles, "{result}: roubles in the profile and the mail");
        // A death loses the new stack (the pockets' grids): the missing thousand come back.
        let back = if result == "Killed" { 1 } else { 0 };
        assert_eq!(returns(&p).await.len(), back, "{result}");
        assert_eq!(p.profile().await["InsuredItems"], json!([]), "{result}: the stack's insurance is spent");
    }
    server.stop().await.unwrap();
}
