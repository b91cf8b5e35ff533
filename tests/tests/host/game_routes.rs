//! Every route string of SPT's static and dynamic routers, and every action of its item-event routers,
//! sent to the game: each is answered by the game (never the host's 404, never "not supported").
//!
//! The lists are `tests/data/spt-routes.json`, extracted from `sp-tarkov/server-csharp` at the commit
//! it names by `tests/src/bin/spt-routes.rs` (regenerate it from a newer SPT, and this test names what
//! the game does not answer yet). A dynamic route is called with a plausible suffix (a trader, a
//! language, a bot type); a route whose answer is the host's (SPT's notifier: `/notifierServer`,
//! `/?last_id`) is called at the host's notifier path and must be answered there.
//!
//! What is answered: SPT's envelope (`err`, `errmsg`, `data`; an error envelope is an answer, and its
//! message must not say the game does not support the route), a bare JSON value, plain text (the
//! launcher's login), an image, or the game's own 404 for a bundle it does not ship. The test prints
//! how many are answered, and those that are not.
//!
//! [`PENDING`] names a route or action not answered yet (printed, not failed).

use super::emulator::{A, B, Player};
use modhost_tests::TestServer;
use modhost_tests::client::{Call, Reply, send};
use modhost_tests::gamedb::{RIFLE, TRADER};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

const LISTS: &str = include_str!("../../data/spt-routes.json");

/// Routes and actions the game does not answer yet, with why: printed, not failed. Empty: every route
/// and action is answered.
const PENDING: &[(&str, &str)] = &[];

/// Routes that end the launcher account or the session: called after every other.
const LAST: &[&str] =
    &["/launcher/profile/change/wipe", "/launcher/profile/remove", "/launcher/v2/remove", "/client/game/logout"];

fn pending(name: &str) -> Option<&'static str> {
    PENDING.iter().find(|(n, _)| *n == name).map(|(_, who)| *who)
}

fn lists() -> Value {
    serde_json::from_str(LISTS).expect("tests/data/spt-routes.json is JSON")
}

/// Where to call a route string, and with what body: a dynamic route gets a plausible suffix.
fn call_for(route: &str, uid: &str, session: &str) -> (String, Value) {
    let path = match route {
        "/singleplayer/settings/bot/limit/" => format!("{route}assault"),
        "/singleplayer/settings/bot/difficulty/" => format!("{route}assault/normal"),
        "/singleplayer/settings/bot/maxCap" => format!("{route}/bigmap"),
        "/files/bundle" => "/files/bundle/generated.bundle".to_owned(),
        "/client/trading/customization/" => format!("{route}{TRADER}/suits"),
        "/client/menu/locale/" | "/client/locale/" => format!("{route}en"),
        "/client/items/prices/" | "/client/trading/api/getTrader/" | "/client/trading/api/getTraderAssort/" => {
            format!("{route}{TRADER}")
        }
        // SPT's notifier (its long poll, `…?last_id=…`): the host's, at the path the channel names.
        "/?last_id" | "/notifierServer" => format!("/notifierServer/get/{session}?last_id=0"),
        "/push/notifier/get/" => format!("{route}{session}"),
        ".jpg" => format!("/files/trader/avatar/{TRADER}.jpg"),
        ".png" => "/files/prestige/prestige_1.png".to_owned(),
        ".ico" => "/files/favicon.ico".to_owned(),
        other if !other.starts_with('/') => format!("/{other}"),
        other => other.to_owned(),
    };
    // The launcher's routes act on the `routes` account (logged in as the session they are sent with);
    // the changes name its own name and password, so it stays as it was until the last calls.
    let launcher = json!({"username": "routes", "password": "routes-pass", "edition": "Standard",
        "change": if route.ends_with("username") { "routes" } else { "routes-pass" }});
    let id = "0123456789abcdef01234567";
    let body = match route {
        r if r.starts_with("/launcher/") => launcher,
        "/client/game/profile/create" => json!({"nickname": "Second", "side": "Bear", "headId": "h"}),
        "/client/game/profile/select" => json!({"uid": uid}),
        "/client/game/profile/nickname/validate" => json!({"nickname": "Another"}),
        "/client/game/profile/nickname/change" => json!({"nickname": "Renamed"}),
        "/client/game/profile/voice/change" => json!({"voice": id}),
        "/client/game/profile/search" => json!({"nickname": "ren"}),
        "/client/profile/view" => json!({"accountId": 0}),
        "/client/profile/settings" => json!({"memberCategory": 0}),
        "/client/builds/weapon/save" | "/client/builds/equipment/save" => json!({
            "Id": id, "Name": "Routes build", "Root": "r1",
            "Items": [{"_id": "r1", "_tpl": RIFLE}],
        }),
        "/client/builds/magazine/save" => json!({"Id": id, "Name": "Mag", "Caliber": "Caliber556x45NATO",
            "TopCount": 0, "BottomCount": 0, "Items": []}),
        "/client/builds/delete" => json!({"id": id}),
        "/client/prestige/obtain" => json!([]),
        "/client/friend/request/send" => json!({"to": uid}),
        "/client/friend/delete" => json!({"friend_id": uid}),
        "/client/quest/list" => json!({"completed": true}),
        "/client/mail/dialog/list" => json!({"limit": 30, "offset": 0}),
        "/client/mail/msg/send" => {
            json!({"dialogId": "6723fd51c5924c57ce0ca01f", "type": 1, "text": "help", "replyTo": ""})
        }
        "/client/mail/dialog/group/owner/change" => json!({"dialogId": id, "uid": uid}),
        "/client/mail/dialog/group/users/add" | "/client/mail/dialog/group/users/remove" => {
            json!({"dialogId": id, "uid": uid})
        }
        "/client/ragfair/itemMarketPrice" => json!({"templateId": RIFLE}),
        "/client/ragfair/offer/findbyid" => json!({"id": 1}),
        "/client/match/local/end" => json!({"serverId": "bigmap.Pmc 0", "results": {"result": "Survived",
            "profile": {"_id": uid, "Inventory": {"equipment": id, "items": []}}}}),
        "/client/match/local/start" => json!({"location": "bigmap", "playerSide": "Pmc", "timeVariant": "CURR"}),
        "/client/raid/configuration" => json!({"location": "bigmap", "timeVariant": "CURR", "side": "Pmc"}),
        "/singleplayer/settings/getRaidTime" => json!({"Side": "Pmc", "Location": "bigmap"}),
        "/client/game/bot/generate" => json!({"conditions": [{"Role": "assault", "Limit": 1, "Difficulty": "normal"}]}),
        "/client/insurance/items/list/cost" => json!({"traders": [], "items": []}),
        "/client/game/profile/items/moving" => json!({"data": [], "tm": 0}),
        "/singleplayer/log" => json!({"Source": "routes", "Level": 3, "Message": "hello"}),
        _ => json!({}),
    };
    (path, body)
}

/// How the game answered a call, or why it is not an answer.
fn judge(reply: &Reply) -> Result<&'static str, String> {
    let text = reply.text();
    if reply.status == 404 && text.contains("no route") {
        return Err("the host's 404: no mod has the route".to_owned());
    }
    if reply.header("content-type").is_some_and(|t| t.starts_with("image/")) {
        let png = reply.body();
        return if png.starts_with(b"\x89PNG") { Ok("image") } else { Err("an image that is no PNG".to_owned()) };
    }
    if reply.status == 404 && text.contains("bundle") {
        return Ok("the game's 404");
    }
    if reply.status != 200 {
        return Err(format!("status {}: {}", reply.status, text.chars().take(200).collect::<String>()));
    }
    let unsupported = |s: &str| {
        let s = s.to_lowercase();
        s.contains("not supported") || s.contains("not implemented")
    };
    match serde_json::from_slice::<Value>(&reply.body()) {
        Ok(Value::Object(o)) if o.contains_key("err") && o.contains_key("data") => {
            if !o.contains_key("errmsg") {
                return Err(format!("an envelope without `errmsg`: {text}"));
            }
            if o["errmsg"].as_str().is_some_and(unsupported) {
                return Err(format!("not supported: {}", o["errmsg"]));
            }
            Ok(if o["err"] == 0 { "envelope" } else { "error envelope" })
        }
        Ok(_) => Ok("bare"),
        Err(_) if unsupported(&text) => Err(format!("not supported: {text}")),
        Err(_) if !text.is_empty() => Ok("text"),
        Err(_) => Err("an empty answer".to_owned()),
    }
}

/// A game with a logged-in player who has a profile (session `A`), and a second player (`B`), whose
/// notifier poll answers at once when nothing is queued.
async fn game() -> (TestServer, Player, Player) {
    let server = TestServer::builder()
        .config(|c| {
            c.builtin_mods = true;
            c.realtime.poll_wait = Duration::from_millis(100);
        })
        .start()
        .await
        .unwrap();
    let player = Player::new(server.addr, A, "Router").await;
    let other = Player::new(server.addr, B, "Other").await;
    (server, player, other)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_spt_route_string_is_answered_by_the_game() {
    let (server, p, _other) = game().await;
    let lists = lists();
    let commit = lists["commit"].as_str().unwrap();
    // A launcher account, logged in: its session calls the launcher's routes.
    let account = json!({"username": "routes", "password": "routes-pass", "edition": "Standard"});
    send(server.addr, &Call::post("/launcher/profile/register", account.to_string().as_bytes())).await.unwrap();
    let login =
        send(server.addr, &Call::post("/launcher/profile/login", account.to_string().as_bytes())).await.unwrap();
    let launcher_session = login.text();
    assert_eq!(launcher_session.len(), 24, "login answers the account's session: {launcher_session}");
    let mut seen = BTreeSet::new();
    let (mut answered, mut missing, mut waiting, mut done_elsewhere) = (0, Vec::new(), Vec::new(), Vec::new());
    let routes = lists["routes"].as_array().unwrap();
    // What ends the account or the session goes last, so every other route finds them.
    let last = |e: &&Value| LAST.contains(&e["route"].as_str().unwrap_or_default());
    let ordered: Vec<&Value> = routes.iter().filter(|e| !last(e)).chain(routes.iter().filter(last)).collect();
    for entry in ordered {
        let route = entry["route"].as_str().unwrap();
        if !seen.insert(route) {
            continue;
        }
        let session = if route.starts_with("/launcher/") { launcher_session.as_str() } else { A };
        let (path, body) = call_for(route, &p.uid, session);
        let call = Call::post(&path, body.to_string().as_bytes()).session(session);
        let reply = tokio::time::timeout(Duration::from_secs(30), send(server.addr, &call))
            .await
            .unwrap_or_else(|_| panic!("{path}: no answer in 30 s"))
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let router = entry["router"].as_str().unwrap();
        match (judge(&reply), pending(route)) {
            (Ok(_), Some(who)) => {
                answered += 1;
                done_elsewhere.push(format!("{route} ({who})"));
            }
            (Ok(_), None) => answered += 1,
            (Err(why), Some(who)) => waiting.push(format!("{route} [{router}] (helper {who}): {why}")),
            (Err(why), None) => missing.push(format!("{route} [{router}] called as {path}: {why}")),
        }
    }
    println!(
        "SPT {commit}: {} route strings ({} distinct); the game answers {answered}, {} wait for other helpers, {} missing",
        routes.len(),
        seen.len(),
        waiting.len(),
        missing.len()
    );
    for line in &waiting {
        println!("  pending: {line}");
    }
    for line in &done_elsewhere {
        println!("  answered now (remove from PENDING): {line}");
    }
    for line in &missing {
        println!("  MISSING: {line}");
    }
    assert!(missing.is_empty(), "{} route strings are not answered:\n{}", missing.len(), missing.join("\n"));
}

/// A plausible action of each kind: enough members that the game reads it as that action (it may be
/// refused for what it names; it must never be "not supported").
fn action_for(name: &str, p: &Player) -> Value {
    match name {
        "sell_to_trader" => json!({"Action": "TradingConfirm", "type": "sell_to_trader", "tid": TRADER,
            "items": [{"id": p.roubles, "count": 1, "scheme_id": 0}], "price": 1}),
        "TradingConfirm" => json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER,
            "item_id": "0123456789abcdef01234567", "count": 1, "scheme_id": 0, "scheme_items": []}),
        _ => json!({"Action": name, "item": p.roubles}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_item_event_action_answers_not_supported() {
    let (_server, p, _other) = game().await;
    let lists = lists();
    let actions = lists["actions"].as_array().unwrap();
    let (mut handled, mut missing, mut waiting, mut done_elsewhere) = (0, Vec::new(), Vec::new(), Vec::new());
    for entry in actions {
        let name = entry["action"].as_str().unwrap();
        let reason = p.act(action_for(name, &p)).await;
        let unsupported = reason.as_deref().filter(|r| r.contains("not supported"));
        match (unsupported, pending(name)) {
            (None, Some(who)) => {
                handled += 1;
                done_elsewhere.push(format!("{name} ({who})"));
            }
            (None, None) => handled += 1,
            (Some(why), Some(who)) => waiting.push(format!("{name} (helper {who}): {why}")),
            (Some(why), None) => missing.push(format!("{name}: {why}")),
        }
    }
    println!(
        "SPT {}: {} item-event actions; the game handles {handled}, {} are pending, {} missing",
        lists["commit"].as_str().unwrap(),
        actions.len(),
        waiting.len(),
        missing.len()
    );
    for line in &waiting {
        println!("  pending: {line}");
    }
    for line in &done_elsewhere {
        println!("  handled now (remove from PENDING): {line}");
    }
    for line in &missing {
        println!("  MISSING: {line}");
    }
    assert!(missing.is_empty(), "{} actions answer \"not supported\":\n{}", missing.len(), missing.join("\n"));
}

async fn post(p: &Player, path: &str, body: Value) -> Value {
    super::emulator::post(p.addr, path, &p.session, body).await
}

/// Builds are checked before they are kept, kept where `/client/builds/list` reads them, replaced by
/// id, bounded, and deleted by id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn builds_are_checked_kept_listed_and_deleted() {
    let (_server, p, _other) = game().await;
    let id = "0123456789abcdef01234567";
    let weapon = |name: &str, items: Value| json!({"Id": id, "Name": name, "Root": "r", "Items": items});
    let refused = [
        ("an unknown template", weapon("W", json!([{"_id": "r", "_tpl": "ffffffffffffffffffffffff"}]))),
        ("no items", weapon("W", json!([]))),
        (
            "a stray part",
            weapon(
                "W",
                json!([{"_id": "r", "_tpl": RIFLE}, {"_id": "p", "_tpl": RIFLE, "parentId": "nowhere", "slotId": "mod_stock"}]),
            ),
        ),
        ("an empty name", weapon("", json!([{"_id": "r", "_tpl": RIFLE}]))),
        ("a bad id", json!({"Id": "x", "Name": "W", "Items": [{"_id": "r", "_tpl": RIFLE}]})),
    ];
    for (what, body) in refused {
        let answer = post(&p, "/client/builds/weapon/save", body).await;
        assert_eq!(answer["err"], 1, "{what}: {answer}");
        assert!(answer["errmsg"].as_str().is_some_and(|m| !m.is_empty()), "{what}: {answer}");
    }
    let listed = post(&p, "/client/builds/list", json!({})).await;
    assert_eq!(listed["data"]["weaponBuilds"], json!([]), "a refused build was kept: {listed}");

    let parts =
        json!([{"_id": "r", "_tpl": RIFLE}, {"_id": "p", "_tpl": RIFLE, "parentId": "r", "slotId": "mod_stock"}]);
    assert_eq!(post(&p, "/client/builds/weapon/save", weapon("First", parts.clone())).await["err"], 0);
    assert_eq!(post(&p, "/client/builds/weapon/save", weapon("Renamed", parts)).await["err"], 0);
    let listed = post(&p, "/client/builds/list", json!({})).await["data"].clone();
    let builds = listed["weaponBuilds"].as_array().unwrap();
    assert_eq!(builds.len(), 1, "saved again under its id, it replaced the first: {listed}");
    let build = &builds[0];
    assert_eq!(build["Name"], "Renamed");
    let items = build["Items"].as_array().unwrap();
    assert_eq!(build["Root"], items[0]["_id"], "the root is the first item: {build}");
    assert_ne!(items[0]["_id"], "r", "the ids are fresh: {build}");
    assert_eq!(items[1]["parentId"], items[0]["_id"], "the part follows its parent's new id: {build}");

    let magazine = json!({"Id": "0123456789abcdef01234568", "Name": "Mag", "Caliber": "Caliber556x45NATO",
        "TopCount": 1, "BottomCount": 2, "Items": [{"TemplateId": RIFLE, "Count": 30}]});
    assert_eq!(post(&p, "/client/builds/magazine/save", magazine).await["err"], 0);
    let too_many = json!({"Id": "0123456789abcdef01234568", "Name": "Mag", "Caliber": "c", "TopCount": 0,
        "BottomCount": 0, "Items": [{"TemplateId": RIFLE, "Count": 1_000_000}]});
    assert_eq!(post(&p, "/client/builds/magazine/save", too_many).await["err"], 1);

    assert_eq!(post(&p, "/client/builds/delete", json!({"id": id})).await["err"], 0);
    let listed = post(&p, "/client/builds/list", json!({})).await["data"].clone();
    assert_eq!(listed["weaponBuilds"], json!([]), "{listed}");
    assert_eq!(listed["magazineBuilds"].as_array().unwrap().len(), 1, "{listed}");
}

/// A nickname change follows `nickname/validate`'s rules and moves the name in the shared index: the
/// old name is free again, the new one taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nickname_change_follows_the_nickname_rules_and_the_index() {
    let (_server, p, other) = game().await;
    let change =
        |nickname: &'static str| post(&p, "/client/game/profile/nickname/change", json!({"nickname": nickname}));
    assert_eq!(change("ab").await["err"], 226, "too short");
    assert_eq!(change("sixteen-chars-xx").await["err"], 226, "too long");
    assert_eq!(change("oTHER").await["err"], 225, "another player's, in any case");
    let changed = change("Renamed").await;
    assert_eq!(changed["err"], 0, "{changed}");
    assert_eq!(changed["data"]["status"], 0, "{changed}");
    assert_eq!(p.profile().await["Info"]["Nickname"], "Renamed");
    // The old name is free: the other player may validate it; the new one is taken.
    let free = post(&other, "/client/game/profile/nickname/validate", json!({"nickname": "Router"})).await;
    assert_eq!(free["err"], 0, "{free}");
    let taken = post(&other, "/client/game/profile/nickname/validate", json!({"nickname": "renamed"})).await;
    assert_eq!(taken["err"], 225, "{taken}");
    let found = post(&other, "/client/game/profile/search", json!({"nickname": "NAME"})).await;
    assert_eq!(found["data"][0]["Info"]["Nickname"], "Renamed", "{found}");
}

/// A friend request is accepted at once, as SPT does on a solo server; an unknown id is SPT's
/// `PlayerProfileNotFound`; the list is bounded in what it takes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_friend_request_adds_the_friend_and_an_unknown_one_is_not_found() {
    let (_server, p, other) = game().await;
    let other_uid = other.uid.clone();
    let sent = post(&p, "/client/friend/request/send", json!({"to": other_uid})).await;
    assert_eq!(sent["data"]["status"], 0, "{sent}");
    let friends = post(&p, "/client/friend/list", json!({})).await;
    let listed = friends["data"]["Friends"].as_array().unwrap();
    assert!(listed.iter().any(|f| f["_id"] == other_uid.as_str()), "{friends}");
    for unknown in ["ffffffffffffffffffffffff", p.uid.as_str(), "not-an-id"] {
        let answer = post(&p, "/client/friend/request/send", json!({"to": unknown})).await;
        assert_eq!(answer["data"]["status"], 505001, "{unknown}: {answer}");
    }
    assert_eq!(post(&p, "/client/friend/delete", json!({"friend_id": other_uid})).await["err"], 0);
    let friends = post(&p, "/client/friend/list", json!({})).await;
    assert!(!friends["data"]["Friends"].as_array().unwrap().iter().any(|f| f["_id"] == other_uid.as_str()));
}
