//! The built-in emulator as the game client sees it: the boot sequence, and profile create, list,
//! select, over zlib on real sockets.

use modhost_tests::TestServer;
use modhost_tests::client::{Call, send};
use std::net::SocketAddr;

const A: &str = "a0a0a0a0a0a0a0a0a0a0a0a0";
const B: &str = "b0b0b0b0b0b0b0b0b0b0b0b0";

async fn emulator() -> TestServer {
    TestServer::builder().config(|c| c.builtin_mods = true).start().await.unwrap()
}

async fn post(addr: SocketAddr, path: &str, session: &str, body: serde_json::Value) -> serde_json::Value {
    let reply = send(addr, &Call::post(path, body.to_string().as_bytes()).session(session)).await.unwrap();
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    reply.json()
}

#[tokio::test]
async fn the_boot_sequence_then_create_list_select() {
    let server = emulator().await;
    let addr = server.addr;
    for path in ["/client/game/version/validate", "/client/languages", "/client/game/start"] {
        assert_eq!(post(addr, path, A, serde_json::json!({})).await["err"], 0, "{path}");
    }
    let config = post(addr, "/client/game/config", A, serde_json::json!({})).await;
    assert!(config["data"]["backend"]["Main"].as_str().unwrap().starts_with("http://"), "{config}");
    assert_eq!(post(addr, "/client/game/profile/list", A, serde_json::json!({})).await["data"], serde_json::json!([]));

    let created = post(
        addr,
        "/client/game/profile/create",
        A,
        serde_json::json!({"nickname": "Runner", "side": "Bear", "headId": "h"}),
    )
    .await;
    assert_eq!(created["err"], 0, "{created}");
    let uid = created["data"]["uid"].as_str().unwrap().to_owned();
    assert!(uid.len() == 24 && uid.bytes().all(|b| b.is_ascii_hexdigit()), "{uid}");

    let list = post(addr, "/client/game/profile/list", A, serde_json::json!({})).await;
    let profile = &list["data"][0];
    assert_eq!(profile["_id"], uid.as_str());
    assert_eq!(profile["Info"]["Side"], "Bear");
    let items = profile["Inventory"]["items"].as_array().unwrap();
    let stash = profile["Inventory"]["stash"].as_str().unwrap();
    let roubles = items.iter().find(|i| i["_tpl"] == "5449016a4bdc2d6f028b456f").expect("a rouble stack");
    assert_eq!(roubles["parentId"], stash);
    assert_eq!(roubles["slotId"], "hideout");
    assert_eq!(roubles["location"], serde_json::json!({"x": 0, "y": 0, "r": "Horizontal"}));
    assert_eq!(roubles["upd"]["StackObjectsCount"], 500000);
    let config = post(addr, "/client/game/config", A, serde_json::json!({})).await;
    assert_eq!(config["data"]["activeProfileId"], uid.as_str());

    // Another session selects it; an unknown uid is refused.
    let selected = post(addr, "/client/game/profile/select", B, serde_json::json!({"uid": uid})).await;
    assert_eq!(selected["err"], 0, "{selected}");
    assert_eq!(post(addr, "/client/game/profile/list", B, serde_json::json!({})).await["data"][0]["_id"], uid.as_str());
    let unknown =
        post(addr, "/client/game/profile/select", B, serde_json::json!({"uid": "ffffffffffffffffffffffff"})).await;
    assert_eq!(unknown["err"], 1);

    // The launcher sees it, and everything survives a restart.
    let launcher = send(addr, &Call::get("/launcher/profiles")).await.unwrap().json();
    assert_eq!(launcher["profiles"][0]["nickname"], "Runner");
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let server = again.start().await.unwrap();
    assert_eq!(
        post(server.addr, "/client/game/profile/list", A, serde_json::json!({})).await["data"][0]["_id"],
        uid.as_str()
    );
}

#[tokio::test]
async fn nickname_rules() {
    let server = emulator().await;
    let addr = server.addr;
    let create = |session: &'static str, nick: &'static str| {
        post(
            addr,
            "/client/game/profile/create",
            session,
            serde_json::json!({"nickname": nick, "side": "Usec", "headId": "h"}),
        )
    };
    assert_eq!(create(A, "").await["err"], 1);
    assert_eq!(create(A, "   ").await["err"], 1);
    assert_eq!(create(A, "Taken").await["err"], 0);
    let again = create(B, "tAKEN").await;
    assert_eq!(again["err"], 255, "{again}");
    assert_eq!(again["errmsg"], "the nickname is already taken");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_of_one_nickname_on_different_sessions_let_exactly_one_win() {
    let server = emulator().await;
    let addr = server.addr;
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            tokio::spawn(async move {
                let session = format!("{i:024x}");
                post(
                    addr,
                    "/client/game/profile/create",
                    &session,
                    serde_json::json!({"nickname": "Same", "side": "Usec"}),
                )
                .await
            })
        })
        .collect();
    let mut wins = 0;
    for t in tasks {
        let answer = t.await.unwrap();
        match answer["err"].as_i64() {
            Some(0) => wins += 1,
            Some(255) => {}
            other => panic!("unexpected answer {other:?}: {answer}"),
        }
    }
    assert_eq!(wins, 1);
}

/// Creates a profile on session `A` and answers (uid, stash id, roubles id, pockets id).
async fn new_player(addr: SocketAddr) -> (String, String, String, String) {
    let created =
        post(addr, "/client/game/profile/create", A, serde_json::json!({"nickname": "Mover", "side": "Usec"})).await;
    let uid = created["data"]["uid"].as_str().unwrap().to_owned();
    let profile = post(addr, "/client/game/profile/list", A, serde_json::json!({})).await["data"][0].clone();
    let items = profile["Inventory"]["items"].as_array().unwrap().clone();
    let find = |tpl: &str| items.iter().find(|i| i["_tpl"] == tpl).unwrap()["_id"].as_str().unwrap().to_owned();
    let stash = profile["Inventory"]["stash"].as_str().unwrap().to_owned();
    (uid, stash, find("5449016a4bdc2d6f028b456f"), find("627a4e6b255f7527fb05a0f6"))
}

fn move_to(item: &str, parent: &str, container: &str, x: i64, y: i64) -> serde_json::Value {
    serde_json::json!({"Action": "Move", "item": item, "to": {"id": parent, "container": container, "location": {"x": x, "y": y, "r": "Horizontal"}}})
}

async fn moving(addr: SocketAddr, actions: Vec<serde_json::Value>) -> serde_json::Value {
    post(addr, "/client/game/profile/items/moving", A, serde_json::json!({"data": actions, "tm": 1})).await
}

async fn item(addr: SocketAddr, id: &str) -> serde_json::Value {
    let profile = post(addr, "/client/game/profile/list", A, serde_json::json!({})).await["data"][0].clone();
    profile["Inventory"]["items"].as_array().unwrap().iter().find(|i| i["_id"] == id).unwrap().clone()
}

#[tokio::test]
async fn every_move_rule_refuses_with_a_warning_and_changes_nothing() {
    let server = emulator().await;
    let addr = server.addr;
    let (_uid, stash, roubles, pockets) = new_player(addr).await;
    let before = item(addr, &roubles).await;
    let equipment = item(addr, &pockets).await["parentId"].as_str().unwrap().to_owned();
    let refused = [
        ("into itself", move_to(&roubles, &roubles, "main", 0, 0)),
        ("unknown parent", move_to(&roubles, "ffffffffffffffffffffffff", "hideout", 0, 0)),
        ("out of the grid (x)", move_to(&roubles, &stash, "hideout", 10, 0)),
        ("out of the grid (y)", move_to(&roubles, &stash, "hideout", 0, 68)),
        ("negative", move_to(&roubles, &stash, "hideout", -1, 0)),
        ("a root container", move_to(&stash, &equipment, "main", 0, 0)),
        ("not in this profile", move_to("eeeeeeeeeeeeeeeeeeeeeeee", &stash, "hideout", 1, 1)),
        ("overlapping", move_to(&pockets, &stash, "hideout", 0, 0)),
    ];
    for (what, action) in refused {
        let answer = moving(addr, vec![action]).await;
        assert_eq!(answer["err"], 0, "{what}: {answer}");
        let warnings = answer["data"]["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "{what}: {answer}");
        assert!(!warnings[0]["errmsg"].as_str().unwrap().is_empty());
        assert_eq!(item(addr, &roubles).await, before, "{what} changed the roubles");
    }
    assert_eq!(item(addr, &pockets).await["parentId"], equipment.as_str(), "the refused overlap moved the pockets");
}

#[tokio::test]
async fn a_valid_move_is_answered_and_survives_a_restart() {
    let server = emulator().await;
    let addr = server.addr;
    let (uid, stash, roubles, pockets) = new_player(addr).await;
    let answer =
        moving(addr, vec![move_to(&roubles, &stash, "hideout", 9, 67), move_to(&pockets, &stash, "hideout", 0, 0)])
            .await;
    assert_eq!(answer["data"]["warnings"], serde_json::json!([]), "{answer}");
    let changed = &answer["data"]["profileChanges"][&uid]["items"]["change"];
    assert_eq!(changed.as_array().unwrap().len(), 2, "{answer}");
    assert_eq!(changed[0]["location"], serde_json::json!({"x": 9, "y": 67, "r": "Horizontal"}));
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let server = again.start().await.unwrap();
    let moved = item(server.addr, &roubles).await;
    assert_eq!(moved["location"], serde_json::json!({"x": 9, "y": 67, "r": "Horizontal"}));
    assert_eq!(moved["upd"]["StackObjectsCount"], 500000, "money is conserved");
}
