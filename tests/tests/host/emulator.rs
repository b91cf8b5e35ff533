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

    // Its session selects it; another session may not (`ownership.rs` tries every route), and an
    // unknown uid is refused.
    let selected = post(addr, "/client/game/profile/select", A, serde_json::json!({"uid": uid})).await;
    assert_eq!(selected["err"], 0, "{selected}");
    let taken = post(addr, "/client/game/profile/select", B, serde_json::json!({"uid": uid})).await;
    assert_eq!(taken["err"], 1, "{taken}");
    let unknown =
        post(addr, "/client/game/profile/select", B, serde_json::json!({"uid": "ffffffffffffffffffffffff"})).await;
    assert_eq!(unknown["err"], 1);

    // The launcher sees it, and everything survives a restart.
    let launcher = send(addr, &Call::get("/launcher/profiles")).await.unwrap().json();
    assert_eq!(launcher[0]["nickname"], "Runner", "SPT's bare list of profile cards: {launcher}");
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
    // SPT's bounds: 3 to 15 characters (counted as characters, not bytes), no control characters;
    // a refused name is SPT's `NicknameNotValid` (226), a taken one its `NicknameNotUnique` (225).
    for refused in ["", "   ", "ab", "sixteen-chars-xx", "tab\there", "ÄÖÜäöüßÄÖÜäöüßÄ!"] {
        let answer = create(A, refused).await;
        assert_eq!(answer["err"], 226, "{refused:?}: {answer}");
    }
    assert_eq!(create(A, "Taken").await["err"], 0);
    let again = create(B, "tAKEN").await;
    assert_eq!(again["err"], 225, "{again}");
    assert_eq!(again["errmsg"], "The nickname is already in use");
    assert_eq!(create(B, "ÄÖÜäöüßÄÖÜäöüßÄ").await["err"], 0, "15 characters, 30 bytes");
}

/// Three creates with 15-16 MiB nicknames used to grow the shared nickname index until every later
/// create trapped reading it, across restarts. The body is refused before it is parsed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_nickname_is_refused_and_later_creates_still_work() {
    let server = emulator().await;
    let huge = serde_json::json!({"nickname": "n".repeat(15 << 20), "side": "Usec"}).to_string();
    let sessions = ["c0c0c0c0c0c0c0c0c0c0c0c0", "c1c1c1c1c1c1c1c1c1c1c1c1", "c2c2c2c2c2c2c2c2c2c2c2c2"];
    for session in sessions {
        let reply = send(server.addr, &Call::post("/client/game/profile/create", huge.as_bytes()).session(session))
            .await
            .unwrap();
        assert_eq!(reply.status, 413, "{}", reply.text());
        assert!(reply.text().contains("profile/create"), "the answer names the route: {}", reply.text());
    }
    let created = post(server.addr, "/client/game/profile/create", A, serde_json::json!({"nickname": "After"})).await;
    assert_eq!(created["err"], 0, "{created}");
}

/// Five `items/moving` bodies of 16 MB of `[0,0,…]` (15.6 KB each as zlib) used to make the game trap
/// on memory five times and be quarantined for every player. The game refuses them by size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_that_inflate_huge_cannot_take_the_game_down_for_others() {
    let server = emulator().await;
    let addr = server.addr;
    let player = Player::new(addr, A, "Mover").await;
    let mut bomb = String::with_capacity(16 << 20);
    bomb.push_str("{\"data\":[0");
    while bomb.len() < 16_000_000 {
        bomb.push_str(",0");
    }
    bomb.push_str("]}");
    let call = Call::post("/client/game/profile/items/moving", bomb.as_bytes()).session(A);
    for attempt in 0..8 {
        let reply = send(addr, &call).await.unwrap();
        assert_eq!(reply.status, 413, "attempt {attempt}: {}", reply.text());
    }
    // The game still serves the other player and this one.
    assert_eq!(post(addr, "/client/game/keepalive", B, serde_json::json!({})).await["err"], 0);
    assert_eq!(post(addr, "/client/game/profile/list", A, serde_json::json!({})).await["data"][0]["_id"], player.uid);
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
            Some(225) => {}
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

/// The moment a test's stopped game clock (`emulator.clock.at`) starts at: a fixed time ahead of
/// the wall clock.
pub(crate) fn t0() -> u64 {
    let wall = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    wall - wall % 3600 + 7200
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

/// Writes `profile` into the emulator's namespace of the store under `root`, as `modhost store put`
/// does, while no server holds it.
pub(crate) fn put_profile(root: &std::path::Path, profile: &serde_json::Value) {
    let store = modhost_store::Store::open(&root.join("store"), false).unwrap();
    let key = format!("profile.{}", profile["_id"].as_str().unwrap());
    store.set("emulator", &key, profile.to_string().as_bytes()).unwrap();
}

/// The profile under `uid` as the emulator keeps it in its store (no server may hold `root`).
pub(crate) fn stored_profile(root: &std::path::Path, uid: &str) -> serde_json::Value {
    let store = modhost_store::Store::open(&root.join("store"), false).unwrap();
    serde_json::from_slice(&store.get("emulator", &format!("profile.{uid}")).unwrap().unwrap()).unwrap()
}

/// A character as a player brings one in: SPT's shape, `Inventory.items` an array, with a rifle in the
/// stash holding a part, and roubles.
fn spt_profile() -> serde_json::Value {
    let item = |id: &str, tpl: &str, extra: serde_json::Value| {
        let mut item = serde_json::json!({"_id": id, "_tpl": tpl});
        item.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        item
    };
    let (equipment, stash) = ("c0000000000000000000e001", "c0000000000000000000e002");
    serde_json::json!({
        "_id": "c0000000000000000000a001", "aid": 1,
        "Info": {"Nickname": "Imported", "LowerNickname": "imported", "Side": "Bear", "Level": 12, "Experience": 4321},
        "Health": {"Hydration": {"Current": 80, "Maximum": 100}},
        "Inventory": {
            "items": [
                item(equipment, "55d7217a4bdc2d86028b456d", serde_json::json!({})),
                item(stash, modhost_tests::gamedb::STASH, serde_json::json!({})),
                item("c0000000000000000000e003", "5963866286f7747bf429b572", serde_json::json!({})),
                item("c0000000000000000000e004", "5963866b86f7747bfa6d1e0c", serde_json::json!({})),
                item("c0000000000000000000e005", "602543c13fee350cd564d032", serde_json::json!({})),
                item("c0000000000000000000b001", "627a4e6b255f7527fb05a0f6", serde_json::json!({"parentId": equipment, "slotId": "Pockets"})),
                item("c0000000000000000000b002", ROUBLES, serde_json::json!({"parentId": stash, "slotId": "hideout",
                    "location": {"x": 0, "y": 0, "r": "Horizontal"}, "upd": {"StackObjectsCount": 123456}})),
                item("c0000000000000000000b003", modhost_tests::gamedb::RIFLE, serde_json::json!({"parentId": stash, "slotId": "hideout",
                    "location": {"x": 2, "y": 1, "r": "Horizontal"}, "upd": {"SpawnedInSession": false}})),
                item("c0000000000000000000b004", "55d4887d4bdc2d962f8b4570", serde_json::json!({"parentId": "c0000000000000000000b003", "slotId": "mod_magazine"})),
            ],
            "equipment": equipment, "stash": stash, "questRaidItems": "c0000000000000000000e003",
            "questStashItems": "c0000000000000000000e004", "sortingTable": "c0000000000000000000e005",
            "fastPanel": {}, "favoriteItems": [],
        },
        "TradersInfo": {},
    })
}

#[tokio::test]
async fn a_profile_put_in_the_store_in_spt_shape_is_accepted_moved_in_and_listed_in_spt_shape() {
    let builder = TestServer::builder().config(|c| c.builtin_mods = true);
    let brought = spt_profile();
    put_profile(builder.root(), &brought);
    let server = builder.start().await.unwrap();
    let p = Player {
        addr: server.addr,
        session: A.to_owned(),
        uid: brought["_id"].as_str().unwrap().to_owned(),
        stash: "c0000000000000000000e002".to_owned(),
        roubles: "c0000000000000000000b002".to_owned(),
        pockets: "c0000000000000000000b001".to_owned(),
    };
    // Listed as it was brought, before anything touched it (the session binds the only profile), with
    // the flea's `RagfairInfo` a profile without one starts from.
    let mut listed = brought.clone();
    listed["RagfairInfo"] = serde_json::json!({"rating": 0.0, "isRatingGrowing": true, "offers": []});
    assert_eq!(p.profile().await, listed);

    // The rifle (4x2 at (2,1)) is where the import put it: its cells are taken, and the roubles move
    // beside it. Its part came along in the index: removing the rifle removes the part.
    let taken = p.act(move_to(&p.roubles, &p.stash, "hideout", 5, 2)).await;
    assert!(taken.as_deref().is_some_and(|r| r.contains("c0000000000000000000b003")), "{taken:?}");
    assert_eq!(p.act(move_to(&p.roubles, &p.stash, "hideout", 6, 1)).await, None);
    assert_eq!(p.act(move_to(&p.roubles, &p.stash, "hideout", 1, 1)).await, None);

    let listed = p.profile().await;
    let items = listed["Inventory"]["items"].as_array().expect("SPT's shape: an array of items");
    assert!(listed.get("_modhost").is_none(), "the emulator's indexes reached the client: {listed}");
    assert_eq!(items.len(), 9, "{listed}");
    let roubles = items.iter().find(|i| i["_id"] == p.roubles.as_str()).unwrap();
    assert_eq!(roubles["location"], serde_json::json!({"x": 1, "y": 1, "r": "Horizontal"}));
    assert_eq!(roubles["upd"]["StackObjectsCount"], 123456);
    // Everything else is as brought, in the order brought.
    let mut expected = brought.clone();
    expected["Inventory"]["items"][6]["location"] = serde_json::json!({"x": 1, "y": 1, "r": "Horizontal"});
    expected["RagfairInfo"] = serde_json::json!({"rating": 0.0, "isRatingGrowing": true, "offers": []});
    assert_eq!(listed, expected);

    let answer = p.moving(vec![serde_json::json!({"Action": "Remove", "item": "c0000000000000000000b003"})]).await;
    let del = &answer["data"]["profileChanges"][&p.uid]["items"]["del"];
    assert_eq!(
        del,
        &serde_json::json!([{"_id": "c0000000000000000000b003"}, {"_id": "c0000000000000000000b004"}]),
        "{answer}"
    );
    assert_eq!(p.items().await.len(), 7);

    // Converted once, in the store: items keyed by id, beside the indexes.
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let stored = stored_profile(again.root(), &p.uid);
    assert!(stored["Inventory"]["items"].is_object(), "{stored}");
    assert_eq!(stored["_modhost"]["shape"], 1, "{stored}");
    let server = again.start().await.unwrap();
    let p = Player { addr: server.addr, ..p };
    assert_eq!(p.item(&p.roubles).await["location"], serde_json::json!({"x": 1, "y": 1, "r": "Horizontal"}));
}

/// The game reads one clock, the host's plus the db's `emulator.clock.offsetSeconds`: a server that was
/// "off" ten hours (the offset written into `db.json` before it starts again) answers ten hours later,
/// in every answer that carries the time.
#[tokio::test]
async fn the_games_clock_moves_forward_with_the_db_offset_across_a_restart() {
    const OFFSET: u64 = 36_000;
    let utc_time = |answer: serde_json::Value| answer["data"]["utc_time"].as_u64().unwrap();
    let server = emulator().await;
    let before = utc_time(post(server.addr, "/client/game/keepalive", A, serde_json::json!({})).await);
    let again = server.restart_builder();
    server.stop().await.unwrap();

    let db_path = again.root().join("db.json");
    let mut db: serde_json::Value = match std::fs::read(&db_path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap(),
        Err(_) => serde_json::json!({}),
    };
    db["emulator"]["clock"] = serde_json::json!({ "offsetSeconds": OFFSET });
    let server = again.db_json(&db.to_string()).start().await.unwrap();
    for path in ["/client/game/keepalive", "/client/game/start"] {
        let after = utc_time(post(server.addr, path, A, serde_json::json!({})).await);
        // The wall clock moved on too, by the seconds the restart took (far less than an hour).
        assert!((before + OFFSET..before + OFFSET + 3600).contains(&after), "{path}: {before} → {after}");
    }
}
