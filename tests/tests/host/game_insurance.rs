//! Insurance over the wire (`plugins/emulator/src/insurance/`): `Insure` charges the quote exactly and
//! refuses what it must, changing nothing; insured gear lost in a raid comes back by mail after the
//! trader's return time, also when the server was off at the due time (the game's clock moved past it
//! across a restart), once, and is taken into the stash; and the host's timer delivers it on its own
//! (pushed to the player, heard as `insurance.returned`).

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

/// A player with the rifle bought and in its primary weapon slot: the player and the rifle's id.
async fn armed(addr: SocketAddr, name: &str) -> (Player, String) {
    let p = Player::new(addr, A, name).await;
    let buy = json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": OFFER,
                     "count": 1, "scheme_id": 0, "scheme_items": [{"id": p.roubles, "count": 25000}]});
    assert_eq!(p.act(buy).await, None);
    let rifle = p.of(RIFLE).await[0]["_id"].as_str().unwrap().to_owned();
    let equipment = p.profile().await["Inventory"]["equipment"].as_str().unwrap().to_owned();
    let equip = json!({"Action": "Move", "item": rifle, "to": {"id": equipment, "container": "FirstPrimaryWeapon"}});
    assert_eq!(p.act(equip).await, None);
    (p, rifle)
}

fn insure(items: &[&str]) -> Value {
    json!({"Action": "Insure", "tid": TRADER, "items": items})
}

/// A PMC raid on [`MAP`], ended `Killed` with the profile as it went in.
async fn die(p: &Player) {
    let started =
        data(p.addr, "/client/match/local/start", &p.session, json!({"location": MAP, "playerSide": "pmc"})).await;
    let server_id = started["serverId"].as_str().unwrap().to_owned();
    let profile = p.profile().await;
    let body = json!({"serverId": server_id, "results": {"result": "Killed", "profile": profile, "exitName": null,
                      "killerId": null, "inSession": true, "playTime": 600}, "lostInsuredItems": [], "transferItems": {}});
    let ended = post(p.addr, "/client/match/local/end", &p.session, body).await;
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
