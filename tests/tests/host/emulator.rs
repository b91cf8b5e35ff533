//! The built-in emulator as the game client sees it: the boot sequence, profile create, list, select,
//! and the Move rules, over zlib on real sockets. The helpers here ([`Player`]) serve `inventory.rs`.

use modhost_tests::TestServer;
use modhost_tests::client::{Call, send};
use std::net::SocketAddr;

pub(crate) const A: &str = "a0a0a0a0a0a0a0a0a0a0a0a0";
pub(crate) const B: &str = "b0b0b0b0b0b0b0b0b0b0b0b0";

pub(crate) async fn emulator() -> TestServer {
    TestServer::builder().config(|c| c.builtin_mods = true).start().await.unwrap()
}

pub(crate) async fn post(addr: SocketAddr, path: &str, session: &str, body: serde_json::Value) -> serde_json::Value {
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

/// A player: a session bound to a new profile, and the ids of its fallback inventory.
pub(crate) struct Player {
    pub(crate) addr: SocketAddr,
    pub(crate) session: String,
    pub(crate) uid: String,
    pub(crate) stash: String,
    pub(crate) roubles: String,
    pub(crate) pockets: String,
}

impl Player {
    /// Creates a profile named `nickname` on `session`.
    pub(crate) async fn new(addr: SocketAddr, session: &str, nickname: &str) -> Player {
        let created = post(
            addr,
            "/client/game/profile/create",
            session,
            serde_json::json!({"nickname": nickname, "side": "Usec"}),
        )
        .await;
        let uid = created["data"]["uid"].as_str().unwrap_or_else(|| panic!("{created}")).to_owned();
        let mut player = Player {
            addr,
            session: session.to_owned(),
            uid,
            stash: String::new(),
            roubles: String::new(),
            pockets: String::new(),
        };
        let profile = player.profile().await;
        player.stash = profile["Inventory"]["stash"].as_str().unwrap().to_owned();
        player.roubles = player.of(ROUBLES).await[0]["_id"].as_str().unwrap().to_owned();
        player.pockets = player.of("627a4e6b255f7527fb05a0f6").await[0]["_id"].as_str().unwrap().to_owned();
        player
    }

    /// The profile as `profile/list` answers it.
    pub(crate) async fn profile(&self) -> serde_json::Value {
        post(self.addr, "/client/game/profile/list", &self.session, serde_json::json!({})).await["data"][0].clone()
    }

    /// The profile's items.
    pub(crate) async fn items(&self) -> Vec<serde_json::Value> {
        self.profile().await["Inventory"]["items"].as_array().unwrap().clone()
    }

    /// The item `id`, or `Null` when the profile has none.
    pub(crate) async fn item(&self, id: &str) -> serde_json::Value {
        self.items().await.into_iter().find(|i| i["_id"] == id).unwrap_or_default()
    }

    /// The items of template `tpl`.
    pub(crate) async fn of(&self, tpl: &str) -> Vec<serde_json::Value> {
        self.items().await.into_iter().filter(|i| i["_tpl"] == tpl).collect()
    }

    /// Units of `tpl` the profile holds, over all stacks.
    pub(crate) async fn units(&self, tpl: &str) -> u64 {
        self.of(tpl).await.iter().map(|i| i["upd"]["StackObjectsCount"].as_u64().unwrap_or(1)).sum()
    }

    /// Sends one `items/moving` batch.
    pub(crate) async fn moving(&self, actions: Vec<serde_json::Value>) -> serde_json::Value {
        let body = serde_json::json!({"data": actions, "tm": 1});
        post(self.addr, "/client/game/profile/items/moving", &self.session, body).await
    }

    /// Sends one action and answers its warning's reason (`None` when it applied).
    pub(crate) async fn act(&self, action: serde_json::Value) -> Option<String> {
        let answer = self.moving(vec![action]).await;
        assert_eq!(answer["err"], 0, "{answer}");
        answer["data"]["warnings"].as_array().unwrap().first().map(|w| w["errmsg"].as_str().unwrap().to_owned())
    }
}

pub(crate) const ROUBLES: &str = "5449016a4bdc2d6f028b456f";

pub(crate) fn move_to(item: &str, parent: &str, container: &str, x: i64, y: i64) -> serde_json::Value {
    serde_json::json!({"Action": "Move", "item": item, "to": {"id": parent, "container": container, "location": {"x": x, "y": y, "r": "Horizontal"}}})
}

#[tokio::test]
async fn every_move_rule_refuses_with_a_warning_and_changes_nothing() {
    let server = emulator().await;
    let p = Player::new(server.addr, A, "Mover").await;
    let (stash, roubles, pockets) = (p.stash.as_str(), p.roubles.as_str(), p.pockets.as_str());
    let before = p.item(roubles).await;
    let equipment = p.item(pockets).await["parentId"].as_str().unwrap().to_owned();
    let refused = [
        ("into itself", move_to(roubles, roubles, "main", 0, 0)),
        ("into its own child", move_to(&equipment, pockets, "main", 0, 0)),
        ("unknown parent", move_to(roubles, "ffffffffffffffffffffffff", "hideout", 0, 0)),
        ("out of the grid (x)", move_to(roubles, stash, "hideout", 10, 0)),
        ("out of the grid (y)", move_to(roubles, stash, "hideout", 0, 68)),
        ("negative", move_to(roubles, stash, "hideout", -1, 0)),
        ("a root container", move_to(stash, &equipment, "main", 0, 0)),
        ("not in this profile", move_to("eeeeeeeeeeeeeeeeeeeeeeee", stash, "hideout", 1, 1)),
        ("overlapping", move_to(pockets, stash, "hideout", 0, 0)),
    ];
    for (what, action) in refused {
        let reason = p.act(action).await;
        assert!(reason.is_some_and(|r| !r.is_empty()), "{what} was not refused");
        assert_eq!(p.item(roubles).await, before, "{what} changed the roubles");
    }
    assert_eq!(p.item(pockets).await["parentId"], equipment.as_str(), "a refused move moved the pockets");
}

#[tokio::test]
async fn a_valid_move_is_answered_and_survives_a_restart() {
    let server = emulator().await;
    let p = Player::new(server.addr, A, "Mover").await;
    let answer = p
        .moving(vec![move_to(&p.roubles, &p.stash, "hideout", 9, 67), move_to(&p.pockets, &p.stash, "hideout", 0, 0)])
        .await;
    assert_eq!(answer["data"]["warnings"], serde_json::json!([]), "{answer}");
    let changed = &answer["data"]["profileChanges"][&p.uid]["items"]["change"];
    assert_eq!(changed.as_array().unwrap().len(), 2, "{answer}");
    assert_eq!(changed[0]["location"], serde_json::json!({"x": 9, "y": 67, "r": "Horizontal"}));
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let server = again.start().await.unwrap();
    let p = Player { addr: server.addr, ..p };
    let moved = p.item(&p.roubles).await;
    assert_eq!(moved["location"], serde_json::json!({"x": 9, "y": 67, "r": "Horizontal"}));
    assert_eq!(moved["upd"]["StackObjectsCount"], 500000, "money is conserved");
}

#[tokio::test]
async fn a_malformed_body_is_a_400_that_says_why() {
    let server = emulator().await;
    let reply = send(server.addr, &Call::post("/client/game/profile/select", b"{\"uid\": [").session(A)).await.unwrap();
    assert_eq!(reply.status, 400, "{}", reply.text());
    let text = reply.text();
    assert!(text.contains("the mod refused the request") && text.contains("profile/select"), "{text}");
}
