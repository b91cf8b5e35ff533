//! The SPT client's whole session against the built-in game, in the client's order: the launcher
//! (register, login), the boot, the main menu, a raid and back, then a restart. Every route the
//! client calls is answered (never 404, never 5xx), each in the form the client reads (an envelope
//! with `err` 0, a bare value, or plain text), and the raid's result is still in the profile after
//! the restart. The routes and where each comes from in SPT's source: `docs/game.md`.
//!
//! The shapes of each answer are checked route by route in `game_boot.rs`, `game_menu.rs` and
//! `game_raid.rs`; this test is the thread through all of them, and prints how many routes each phase
//! answered.

use super::emulator::emulator;
use modhost_tests::client::{Call, Reply, send};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;

/// How the client reads an answer.
#[derive(Clone, Copy, Debug)]
enum Form {
    /// `{"err":0,"errmsg":null,"data":…}`.
    Envelope,
    /// A JSON value without the envelope.
    Bare,
    /// Plain text.
    Text,
}

/// The client: a server, a session once logged in, and the distinct routes answered in each phase.
struct Client {
    addr: SocketAddr,
    session: Option<String>,
    phase: &'static str,
    answered: BTreeMap<&'static str, BTreeSet<String>>,
}

impl Client {
    /// Sends one call as the client does (zlib body, the session cookie when there is one) and checks
    /// it is answered 200 in `form`; answers the reply.
    async fn call(&mut self, path: &str, body: Value, form: Form) -> Reply {
        let mut request = Call::post(path, body.to_string().as_bytes());
        if let Some(session) = &self.session {
            request = request.session(session);
        }
        let reply = send(self.addr, &request).await.unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(reply.status, 200, "{path} answered {}: {}", reply.status, reply.text());
        match form {
            Form::Envelope => {
                let answer = reply.json();
                assert_eq!(answer["err"], 0, "{path}: {answer}");
                assert!(answer.get("data").is_some(), "{path}: no data member: {answer}");
            }
            Form::Bare => {
                let answer: Value = serde_json::from_slice(&reply.body())
                    .unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {}", reply.text()));
                if let Some(object) = answer.as_object() {
                    let enveloped = object.contains_key("err") && object.contains_key("data");
                    assert!(!enveloped, "{path} is enveloped: {answer}");
                }
            }
            Form::Text => assert!(!reply.text().is_empty(), "{path}: empty"),
        }
        // A route with an id or a language at its end counts once.
        let route = [
            "/client/trading/api/getTrader/",
            "/client/trading/api/getTraderAssort/",
            "/client/items/prices/",
            "/client/locale/",
            "/client/menu/locale/",
            "/singleplayer/settings/bot/difficulty/",
        ]
        .into_iter()
        .find(|prefix| path.starts_with(prefix))
        .map_or(path.to_owned(), |prefix| format!("{prefix}…"));
        self.answered.entry(self.phase).or_default().insert(route);
        reply
    }

    /// The data of an enveloped call.
    async fn data(&mut self, path: &str, body: Value) -> Value {
        data(&self.call(path, body, Form::Envelope).await)
    }
}

/// The data of an enveloped answer.
fn data(reply: &Reply) -> Value {
    reply.json()["data"].take()
}

/// The calls of one phase that need nothing from earlier answers: (path, body, form).
type Plain = (&'static str, Value, Form);

fn boot_calls() -> Vec<Plain> {
    use Form::*;
    vec![
        ("/singleplayer/settings/version", json!({}), Bare),
        ("/singleplayer/bundles", json!({}), Bare),
        ("/singleplayer/moddedTraders", json!({}), Bare),
        ("/singleplayer/enableBSGlogging", json!({}), Bare),
        ("/singleplayer/release", json!({}), Bare),
        ("/client/game/version/validate", json!({"version": {"major": "0.16"}, "develop": true}), Envelope),
        ("/client/languages", json!({}), Envelope),
        ("/client/menu/locale/en", json!({}), Envelope),
        ("/client/game/mode", json!({"sessionMode": "pve"}), Envelope),
        ("/client/game/start", json!({}), Envelope),
        ("/client/game/config", json!({}), Envelope),
        ("/client/items", json!({}), Envelope),
        ("/client/customization", json!({}), Envelope),
        ("/client/globals", json!({}), Envelope),
        ("/client/settings", json!({}), Envelope),
        ("/client/trading/api/traderSettings", json!({}), Envelope),
        ("/client/account/customization", json!({}), Envelope),
        ("/client/locale/en", json!({}), Envelope),
        ("/client/game/keepalive", json!({}), Envelope),
        ("/client/game/profile/nickname/reserved", json!({}), Envelope),
        ("/client/game/profile/nickname/validate", json!({"nickname": "Through"}), Envelope),
    ]
}

fn menu_calls(trader: &str) -> Vec<(String, Value, Form)> {
    use Form::*;
    let calls: Vec<Plain> = vec![
        ("/client/profile/status", json!({}), Envelope),
        ("/client/profile/settings", json!({"memberCategory": 0, "squadInviteRestriction": false}), Envelope),
        ("/client/notifier/channel/create", json!({}), Envelope),
        ("/client/weather", json!({}), Envelope),
        ("/client/locations", json!({}), Envelope),
        ("/client/handbook/templates", json!({}), Envelope),
        ("/client/hideout/areas", json!({}), Envelope),
        ("/client/hideout/qte/list", json!({}), Envelope),
        ("/client/hideout/settings", json!({}), Envelope),
        ("/client/hideout/production/recipes", json!({}), Envelope),
        ("/client/hideout/customization/offer/list", json!({}), Envelope),
        ("/client/builds/list", json!({}), Envelope),
        ("/client/friend/list", json!({}), Envelope),
        ("/client/friend/request/list/inbox", json!({}), Envelope),
        ("/client/friend/request/list/outbox", json!({}), Envelope),
        ("/client/mail/dialog/list", json!({"limit": 30, "offset": 0}), Envelope),
        ("/client/chatServer/list", json!({"VersionId": "bgkidft87ddd", "Id": "0"}), Envelope),
        ("/client/customization/storage", json!({}), Envelope),
        ("/client/trading/customization/storage", json!({}), Envelope),
        ("/client/server/list", json!({}), Envelope),
        ("/client/match/group/current", json!({}), Envelope),
        ("/client/quest/list", json!({"completed": true}), Envelope),
        ("/client/repeatalbeQuests/activityPeriods", json!({}), Envelope),
        ("/client/checkVersion", json!({}), Envelope),
        ("/client/achievement/list", json!({}), Envelope),
        ("/client/achievement/statistic", json!({}), Envelope),
        ("/client/prestige/list", json!({}), Envelope),
        ("/client/survey", json!({}), Envelope),
        ("/client/items/prices", json!({}), Envelope),
    ];
    let mut calls: Vec<(String, Value, Form)> = calls.into_iter().map(|(p, b, f)| (p.to_owned(), b, f)).collect();
    for path in ["/client/trading/api/getTrader/", "/client/trading/api/getTraderAssort/", "/client/items/prices/"] {
        calls.push((format!("{path}{trader}"), json!({}), Envelope));
    }
    calls
}

fn raid_calls(map: &str) -> Vec<(String, Value, Form)> {
    use Form::*;
    let calls = vec![
        ("/client/match/group/exit_from_menu", json!({}), Envelope),
        ("/singleplayer/settings/raid/menu", json!({}), Bare),
        (
            "/client/raid/configuration",
            json!({"location": map, "timeVariant": "CURR", "side": "Pmc", "wavesSettings": {"botDifficulty": "AsOnline"}}),
            Envelope,
        ),
        ("/client/localGame/weather", json!({}), Envelope),
        ("/client/getMetricsConfig", json!({}), Envelope),
        ("/singleplayer/settings/getRaidTime", json!({"Side": "Pmc", "Location": map}), Bare),
        ("/singleplayer/settings/bot/difficulties", json!({}), Bare),
        ("/singleplayer/bosstypes", json!({}), Bare),
        ("/singleplayer/scav/traitorscavhostile", json!({}), Bare),
        ("/client/insurance/items/list/cost", json!({"traders": [], "items": []}), Envelope),
    ];
    calls.into_iter().map(|(p, b, f)| (p.to_owned(), b, f)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_goes_from_the_launcher_through_a_raid_and_the_result_survives_a_restart() {
    let server = emulator().await;
    let mut client = Client { addr: server.addr, session: None, phase: "launcher", answered: BTreeMap::new() };

    // The launcher: connect, register, log in (plain text: the session id), the account and its card.
    let connect = client.call("/launcher/server/connect", json!({}), Form::Bare).await.json();
    let edition = connect["editions"][0].as_str().expect("connect lists the editions").to_owned();
    client.call("/launcher/ping", json!({}), Form::Bare).await;
    let account = json!({"username": "through", "password": "hunter22", "edition": edition});
    assert_eq!(client.call("/launcher/profile/register", account.clone(), Form::Text).await.text(), "OK");
    let wrong = json!({"username": "through", "password": "nope"});
    assert_eq!(client.call("/launcher/profile/login", wrong, Form::Text).await.text(), "FAILED");
    let session = client.call("/launcher/profile/login", account.clone(), Form::Text).await.text();
    assert!(session.len() == 24 && session.bytes().all(|b| b.is_ascii_hexdigit()), "login answered {session:?}");
    client.session = Some(session);
    let got = client.call("/launcher/profile/get", account.clone(), Form::Bare).await.json();
    assert_eq!(got["username"], "through", "{got}");
    for path in [
        "/launcher/server/version",
        "/launcher/profile/compatibleTarkovVersion",
        "/launcher/server/loadedServerMods",
        "/launcher/server/serverModsUsedByProfile",
        "/launcher/profile/info",
        "/launcher/profiles",
    ] {
        client.call(path, json!({}), Form::Bare).await;
    }

    // The boot: settings, tables, then a character made and listed with its scav.
    client.phase = "boot";
    for (path, body, form) in boot_calls() {
        client.call(path, body, form).await;
    }
    assert_eq!(client.data("/client/game/profile/list", json!({})).await, json!([]), "a new account has no character");
    let created = json!({"side": "Usec", "nickname": "Through", "headId": "5cde96047d6c8b20b577f016",
        "voiceId": "5fc1223595572123ae7384a2"});
    let uid = client.data("/client/game/profile/create", created).await["uid"]
        .as_str()
        .expect("create answers the uid")
        .to_owned();
    let list = client.data("/client/game/profile/list", json!({})).await;
    let sides: Vec<&str> = list.as_array().unwrap().iter().filter_map(|p| p["Info"]["Side"].as_str()).collect();
    assert_eq!(sides, ["Usec", "Savage"], "the list holds the PMC and its scav: {list}");
    client.call("/client/game/profile/select", json!({"uid": uid}), Form::Envelope).await;
    assert_eq!(client.data("/client/game/config", json!({})).await["activeProfileId"], uid.as_str());

    // The main menu, with the first trader the traders' settings list.
    client.phase = "menu";
    let traders = client.data("/client/trading/api/traderSettings", json!({})).await;
    let trader = traders[0]["_id"].as_str().expect("a trader").to_owned();
    let locations = client.data("/client/locations", json!({})).await;
    let map = locations["locations"]
        .as_object()
        .and_then(|all| all.values().find(|l| l["Id"] == "factory4_day").or_else(|| all.values().next()))
        .and_then(|l| l["Id"].as_str())
        .expect("a location")
        .to_owned();
    for (path, body, form) in menu_calls(&trader) {
        client.call(&path, body, form).await;
    }

    // The raid: leave the menu, configure, start, bots, end with what was found.
    client.phase = "raid";
    for (path, body, form) in raid_calls(&map) {
        client.call(&path, body, form).await;
    }
    client.call("/singleplayer/settings/bot/difficulty/assault/normal", json!({}), Form::Bare).await;
    let start = json!({"location": map, "playerSide": "Pmc", "timeVariant": "CURR", "mode": "PVE_OFFLINE"});
    let started = client.data("/client/match/local/start", start).await;
    let server_id = started["serverId"].as_str().expect("start answers the serverId").to_owned();
    let loot = started["locationLoot"]["Loot"].as_array().cloned().unwrap_or_default();
    let bots = json!({"conditions": [{"Role": "assault", "Limit": 2, "Difficulty": "normal"}]});
    let bots = client.data("/client/game/bot/generate", bots).await;
    assert!(bots.as_array().is_some_and(|b| !b.is_empty()), "bots were generated: {bots}");
    client.call("/client/location/getLocalloot", json!({"locationId": map}), Form::Envelope).await;
    client.call("/client/putMetrics", json!({}), Form::Envelope).await;

    // The PMC comes out with one loose item it found (its whole stack) in its first pocket.
    let pmc = list.as_array().unwrap().iter().find(|p| p["_id"] == uid.as_str()).unwrap().clone();
    let found = loot
        .iter()
        .filter_map(|spawn| spawn["Items"].as_array().filter(|items| items.len() == 1).map(|items| items[0].clone()))
        .next()
        .expect("the raid's loot holds a loose single item");
    let mut profile = pmc.clone();
    let pockets = profile["Inventory"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["slotId"] == "Pockets")
        .and_then(|i| i["_id"].as_str())
        .expect("the PMC has pockets")
        .to_owned();
    let mut taken = found.clone();
    taken["parentId"] = json!(pockets);
    taken["slotId"] = json!("pocket1");
    if let Some(item) = taken.as_object_mut() {
        item.remove("location");
    }
    profile["Inventory"]["items"].as_array_mut().unwrap().push(taken);
    profile["Info"]["Experience"] = json!(1200);
    let end = json!({"serverId": server_id, "results": {"result": "Survived", "exitName": "Gate 3", "playTime": 600,
        "profile": profile}});
    client.call("/client/match/local/end", end.clone(), Form::Envelope).await;
    let twice =
        Call::post("/client/match/local/end", end.to_string().as_bytes()).session(client.session.as_ref().unwrap());
    let twice = send(server.addr, &twice).await.unwrap();
    assert_ne!(twice.json()["err"], 0, "a raid ends once: {}", twice.text());

    // After a restart the found item and the experience are in the PMC.
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let server = again.start().await.unwrap();
    client.addr = server.addr;
    client.phase = "boot";
    let list = client.data("/client/game/profile/list", json!({})).await;
    let pmc = list.as_array().unwrap().iter().find(|p| p["_id"] == uid.as_str()).expect("the PMC").clone();
    let item = pmc["Inventory"]["items"].as_array().unwrap().iter().find(|i| i["_id"] == found["_id"]);
    assert_eq!(item.map(|i| &i["_tpl"]), Some(&found["_tpl"]), "the found item is kept: {}", pmc["Inventory"]);
    assert!(pmc["Info"]["Experience"].as_f64().unwrap_or(0.0) > 0.0, "experience was added: {}", pmc["Info"]);

    let counts: Vec<(&str, usize)> = client.answered.iter().map(|(phase, routes)| (*phase, routes.len())).collect();
    let total = client.answered.values().flatten().collect::<BTreeSet<_>>().len();
    println!("distinct client routes answered, by phase: {counts:?}; {total} in all");
    for (phase, routes) in &client.answered {
        println!("{phase}: {}", routes.iter().cloned().collect::<Vec<_>>().join(" "));
    }
}
