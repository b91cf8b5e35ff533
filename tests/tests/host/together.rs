//! Mods working together, over the wire: hooks on another mod's routes (order, answering in place,
//! after-hooks on db-reference answers, failing hooks skipped or failing the request), events (fan-out
//! in load order, the emitter left out, the nesting bound, cycles), calls (a cycle, a missing grant,
//! the session a callee sees), the game's `give-item` and events, and a component built before any
//! of it. The mods are `tests/fixtures/peer` installed under several ids, each with its own config
//! (the fixture's contract: its README).

use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, TestServerBuilder, guests};
use serde_json::{Value, json};

const SESSION: &str = "0123456789abcdef01234567";

/// Installs the peer fixture as `id` with `config` as its shipped defaults and `manifest` appended to
/// its `mod.toml` (grants, relations).
fn peer(builder: TestServerBuilder, id: &str, manifest: &str, config: Value) -> TestServerBuilder {
    let dir = builder.root().join("mods").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.default.json"), config.to_string()).unwrap();
    builder.with_mod(id, guests::PEER, manifest)
}

/// A before- and an after-hook that tag, on `path`, at `priority`.
fn taggers(path: &str, priority: i32) -> Value {
    json!([
        {"path": path, "phase": "before", "priority": priority, "action": "tag"},
        {"path": path, "phase": "after", "priority": priority, "action": "tag"},
    ])
}

async fn post(server: &TestServer, path: &str, body: &[u8]) -> modhost_tests::client::Reply {
    send(server.addr, &Call::post_raw(path, body).session(SESSION)).await.unwrap()
}

fn loaded(server: &TestServer) -> Vec<String> {
    assert!(server.report.failed.is_empty(), "left out: {:?}", server.report.failed);
    server.report.loaded.iter().map(|m| m.id.clone()).collect()
}

const HOOK_OWNER: &str = "[grants]\nhook = [\"/peer/o/\"]";

#[tokio::test]
async fn hooks_of_three_mods_run_by_load_relations_then_priority_and_the_chain_is_listed() {
    // No relations: priority orders them (b 10, c 5, a 0), before and after alike.
    let mut builder = peer(TestServer::builder(), "o", "", json!({"name": "o"}));
    for (id, priority) in [("a", 0), ("b", 10), ("c", 5)] {
        builder = peer(builder, id, HOOK_OWNER, json!({"name": id, "hooks": taggers("/peer/o/echo", priority)}));
    }
    let server = builder.start().await.unwrap();
    loaded(&server);
    let reply = post(&server, "/peer/o/echo", b"{}").await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["x-hooks"], "b,c,a", "before-hooks by priority: {}", reply.text());
    assert_eq!(reply.header("x-after"), Some("b,c,a"), "after-hooks by priority");
    // A route nobody hooks runs its owner alone.
    assert_eq!(post(&server, "/peer/a/echo", b"{}").await.json()["x-hooks"], Value::Null);
    // The chain is on the status page: every hook on the route, in order.
    let mods = send(server.addr, &Call::get("/modhost/mods")).await.unwrap().json();
    let chain = mods["chains"].as_array().unwrap_or_else(|| panic!("no chains: {mods}"));
    let route = chain.iter().find(|c| c["route"] == "/peer/o/").unwrap_or_else(|| panic!("{chain:?}"));
    let order: Vec<String> = route["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| format!("{}:{}", h["mod"].as_str().unwrap(), h["phase"].as_str().unwrap()))
        .collect();
    assert_eq!(order, ["b:before", "b:after", "c:before", "c:after", "a:before", "a:after"], "{route}");
    server.stop().await.unwrap();

    // b loads after a: b's hooks now follow a's, whatever b's priority (c is free: 5 beats a's 0).
    let mut builder = peer(TestServer::builder(), "o", "", json!({"name": "o"}));
    for (id, priority, relation) in [("a", 0, ""), ("b", 10, "load_after = [\"a\"]\n"), ("c", 5, "")] {
        let manifest = format!("{relation}{HOOK_OWNER}");
        builder = peer(builder, id, &manifest, json!({"name": id, "hooks": taggers("/peer/o/echo", priority)}));
    }
    let server = builder.start().await.unwrap();
    loaded(&server);
    assert_eq!(post(&server, "/peer/o/echo", b"{}").await.json()["x-hooks"], "c,a,b");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_hook_without_its_grant_refuses_the_mod_naming_the_grant() {
    let builder = peer(TestServer::builder(), "o", "", json!({"name": "o"}));
    let builder = peer(builder, "h", "", json!({"name": "h", "hooks": taggers("/peer/o/echo", 0)}));
    let server = builder.start().await.unwrap();
    let refused = server.report.failed.iter().find(|f| f.id == "h").expect("h is left out");
    assert!(
        refused.reason.contains("hooking /peer/o/echo needs a grant") && refused.reason.contains("hook"),
        "{}",
        refused.reason
    );
    assert_eq!(post(&server, "/peer/o/echo", b"{}").await.json()["x-hooks"], Value::Null);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_before_hook_answers_in_the_owners_place_and_after_hooks_still_run() {
    let builder = peer(TestServer::builder(), "o", "", json!({"name": "o"}));
    let hooks = json!([{"path": "/peer/o/echo", "phase": "before", "action": "answer"}]);
    let builder = peer(builder, "a", HOOK_OWNER, json!({"name": "a", "hooks": hooks}));
    let builder = peer(builder, "b", HOOK_OWNER, json!({"name": "b", "hooks": taggers("/peer/o/echo", -1)}));
    let server = builder.start().await.unwrap();
    loaded(&server);
    let reply = post(&server, "/peer/o/echo", b"{}").await;
    assert_eq!(reply.json(), json!({"answered_by": "a"}), "the owner did not answer");
    assert_eq!(reply.header("x-after"), Some("b"), "the after-hook saw a's answer");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn an_after_hook_changes_a_db_reference_answer_and_one_without_the_body_leaves_it_whole() {
    let builder = TestServer::builder().with_mod("fx", guests::FIXTURE, "");
    let hooks = json!([{"path": "/fx/db/", "kind": "prefix", "phase": "after", "body": true, "action": "wrap"}]);
    let builder = peer(builder, "w", "[grants]\nhook = [\"/fx/db/\"]", json!({"name": "w", "hooks": hooks}));
    let hooks = json!([{"path": "/fx/db/globals", "phase": "after", "action": "status"}]);
    let builder = peer(builder, "s", "[grants]\nhook = [\"/fx/\"]", json!({"name": "s", "hooks": hooks}));
    let server = builder.start().await.unwrap();
    loaded(&server);
    let table: Value = serde_json::from_slice(&server.app.generation().db.get("templates").unwrap()).unwrap();
    let reply = send(server.addr, &Call::get("/fx/db/templates")).await.unwrap();
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json(), json!({"wrapped_by": "w", "body": table}), "the wrap saw the materialised table");
    // `s` changes the status only: it never asked for the body, which stays the db's.
    let globals: Value = serde_json::from_slice(&server.app.generation().db.get("globals").unwrap()).unwrap();
    let reply = send(server.addr, &Call::get("/fx/db/globals")).await.unwrap();
    assert_eq!(reply.status, 299);
    assert_eq!(reply.json(), json!({"wrapped_by": "w", "body": globals}));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_trapping_hook_is_skipped_unless_the_player_makes_it_fail_the_request() {
    let build = |player: &'static str| {
        let builder = peer(TestServer::builder(), "o", "", json!({"name": "o"}));
        let hooks = json!([
            {"path": "/peer/o/echo", "phase": "before", "priority": 9, "action": "trap"},
            {"path": "/peer/o/echo", "phase": "after", "action": "error"},
        ]);
        let builder = peer(builder, "t", HOOK_OWNER, json!({"name": "t", "hooks": hooks}));
        let builder = peer(builder, "g", HOOK_OWNER, json!({"name": "g", "hooks": taggers("/peer/o/echo", 0)}));
        std::fs::write(builder.root().join("modhost.toml"), player).unwrap();
        builder
    };
    let server = build("").start().await.unwrap();
    loaded(&server);
    for _ in 0..3 {
        let reply = post(&server, "/peer/o/echo", b"{}").await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert_eq!(reply.json()["x-hooks"], "g", "the trapping hook was skipped, the good one ran");
        assert_eq!(reply.header("x-after"), Some("g"));
    }
    let mods = send(server.addr, &Call::get("/modhost/mods")).await.unwrap().json();
    let t = mods["loaded"].as_array().unwrap().iter().find(|m| m["id"] == "t").unwrap().clone();
    assert_eq!(t["hooks_skipped"], 6, "{t}");
    server.stop().await.unwrap();

    let server = build("[mods.t]\nhook_errors = \"fail\"\n").start().await.unwrap();
    let reply = post(&server, "/peer/o/echo", b"{}").await;
    assert_eq!(reply.status, 500, "{}", reply.text());
    let text = reply.text();
    assert!(text.contains("\"t\"") && text.contains("trap on purpose"), "{text}");
    server.stop().await.unwrap();
}

/// The events `id` heard.
async fn heard(server: &TestServer, id: &str) -> Vec<Value> {
    post(server, &format!("/peer/{id}/events"), b"").await.json().as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn an_event_reaches_every_subscriber_but_the_emitter_in_load_order() {
    // s1..s3 hear `e.go` and each says so on its own topic, which `r` hears: r's record is the order.
    // (Each emits only its own topics, `<id>.…`: no grants needed.)
    let mut builder = peer(TestServer::builder(), "e", "", json!({"name": "e", "subscriptions": ["e.go"]}));
    for id in ["s1", "s2", "s3"] {
        let config = json!({"name": id, "subscriptions": ["e.go"], "then_emit": {"e.go": format!("{id}.after")}});
        builder = peer(builder, id, "", config);
    }
    let builder =
        peer(builder, "z-recorder", "", json!({"name": "r", "subscriptions": ["s1.after", "s2.after", "s3.after"]}));
    let server = builder.start().await.unwrap();
    loaded(&server);
    let reply = post(&server, "/peer/e/emit/e.go", br#"{"n":1}"#).await;
    assert_eq!(reply.json(), json!({"by": "e", "count": 3}), "three subscribers, not the emitter");
    assert!(heard(&server, "e").await.is_empty(), "the emitter does not hear itself");
    let order: Vec<Value> = heard(&server, "r").await.iter().map(|e| e["topic"].clone()).collect();
    assert_eq!(order, ["s1.after", "s2.after", "s3.after"]);
    let s2 = heard(&server, "s2").await;
    assert_eq!(s2.len(), 1);
    assert_eq!(
        (&s2[0]["source"], &s2[0]["session"], &s2[0]["payload"]),
        (&json!("e"), &json!(SESSION), &json!({"n": 1}))
    );
    // A topic nobody hears reaches nobody; a bad topic is the emitter's error.
    assert_eq!(post(&server, "/peer/e/emit/e.nobody", b"1").await.json()["count"], 0);
    assert_eq!(post(&server, "/peer/e/emit/Bad%20Topic", b"1").await.json()["error"]["kind"], "invalid");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn events_nest_at_most_eight_deep_and_a_cycle_is_an_error_value() {
    // n1 hears e.t0 and emits n1.t1, n2 hears n1.t1 …: the emitter's handler is frame 1, n7 frame 8,
    // so n7's emit of n7.t7 is past the bound and n8 never hears it.
    let topic = |i: usize| if i == 0 { "e.t0".to_owned() } else { format!("n{i}.t{i}") };
    let mut builder = peer(TestServer::builder(), "e", "", json!({"name": "e"}));
    for i in 1..=8 {
        let config =
            json!({"name": format!("n{i}"), "subscriptions": [topic(i - 1)], "then_emit": {topic(i - 1): topic(i)}});
        builder = peer(builder, &format!("n{i}"), "", config);
    }
    let builder =
        peer(builder, "x1", "", json!({"name": "x1", "subscriptions": ["x2.x"], "then_emit": {"x2.x": "x1.y"}}));
    let builder =
        peer(builder, "x2", "", json!({"name": "x2", "subscriptions": ["x1.y"], "then_emit": {"x1.y": "x2.x"}}));
    let server = builder.start().await.unwrap();
    loaded(&server);
    assert_eq!(post(&server, "/peer/e/emit/e.t0", b"0").await.json()["count"], 1);
    let n7 = heard(&server, "n7").await;
    assert_eq!(n7[0]["then_emit"]["error"]["kind"], "too-large", "{n7:?}");
    let message = n7[0]["then_emit"]["error"]["message"].as_str().unwrap();
    assert!(message.contains("at most 8 deep") && message.contains("n6 hearing n5.t5"), "{message}");
    assert!(heard(&server, "n8").await.is_empty());
    assert_eq!(heard(&server, "n6").await[0]["then_emit"]["count"], 1);

    // x2's request emits x2.x; x1 hears it and emits x1.y; x2 hears that and emits x2.x, which x1 is
    // hearing already: a cycle.
    assert_eq!(post(&server, "/peer/x2/emit/x2.x", b"0").await.json()["count"], 1);
    let x2 = heard(&server, "x2").await;
    assert_eq!(x2[0]["then_emit"]["error"]["kind"], "invalid", "{x2:?}");
    assert!(x2[0]["then_emit"]["error"]["message"].as_str().unwrap().contains("a cycle: x1 hearing x2.x"), "{x2:?}");
    assert_eq!(heard(&server, "x1").await.len(), 1, "x1 heard x once");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn calls_need_their_grant_and_a_call_cycle_is_refused_while_the_callee_sees_caller_and_session() {
    let functions = json!(["echo", "whoami", "relay"]);
    let builder = peer(
        TestServer::builder(),
        "a",
        "[grants]\ncall = [\"b\"]",
        json!({"name": "a", "functions": functions, "relay": {"mod": "b", "function": "relay"}}),
    );
    let builder = peer(
        builder,
        "b",
        "[grants]\ncall = [\"a\"]",
        json!({"name": "b", "functions": functions, "relay": {"mod": "a", "function": "relay"}}),
    );
    let builder = peer(builder, "c", "", json!({"name": "c", "functions": ["echo"]}));
    let server = builder.start().await.unwrap();
    loaded(&server);
    assert_eq!(post(&server, "/peer/a/call/b/echo", br#"{"x":1}"#).await.json(), json!({"x": 1}));
    let who = post(&server, "/peer/a/call/b/whoami", b"").await.json();
    assert_eq!(who, json!({"name": "b", "caller": "a", "session": SESSION}));
    let other = "fedcba9876543210fedcba98";
    let who = post(&server, &format!("/peer/a/call-for/{other}/b/whoami"), b"").await.json();
    assert_eq!(who["session"], other, "call-for-session names the session the callee sees");

    let denied = post(&server, "/peer/a/call/c/echo", b"1").await.json();
    assert_eq!(denied["error"]["kind"], "denied", "{denied}");
    assert!(denied["error"]["message"].as_str().unwrap().contains("add \"c\" to call under [grants]"), "{denied}");
    let missing = post(&server, "/peer/a/call/b/nothing", b"1").await.json();
    assert_eq!(missing["error"]["kind"], "not-found", "{missing}");

    // a.relay → b.relay → a.relay: the third step is already running.
    let cycle = post(&server, "/peer/a/call/b/relay", b"1").await.json();
    assert_eq!(cycle["error"]["kind"], "invalid", "{cycle}");
    let message = cycle["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("a cycle: b.relay is already running in this chain (a handling /peer/a/ → b.relay → a.relay)"),
        "{message}"
    );
    server.stop().await.unwrap();
}

/// The built-in game with the welcome-pack example (`wasm`: its component) installed as the
/// example ships it: its manifest, config and schema.
pub(crate) async fn welcome_pack_server(wasm: &str) -> TestServer {
    let server =
        with_welcome_pack(TestServer::builder().config(|c| c.builtin_mods = true), wasm).start().await.unwrap();
    loaded(&server);
    server
}

/// `builder` with the welcome-pack example (`wasm`: its component) installed as the example ships
/// it: its manifest, config and schema.
fn with_welcome_pack(builder: TestServerBuilder, wasm: &str) -> TestServerBuilder {
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/welcome-pack/mod.toml")).unwrap();
    let dir = builder.root().join("mods").join("welcome-pack");
    std::fs::create_dir_all(&dir).unwrap();
    for file in ["config.default.json", "config.schema.json"] {
        let from = format!("{}/../examples/welcome-pack/{file}", env!("CARGO_MANIFEST_DIR"));
        std::fs::copy(from, dir.join(file)).unwrap();
    }
    let extra = manifest
        .lines()
        .filter(|l| !l.starts_with("id =") && !l.starts_with("version ="))
        .collect::<Vec<_>>()
        .join("\n");
    builder.with_mod("welcome-pack", wasm, &extra)
}

/// A new player gets the welcome pack's gift; a blocked nickname is refused by its hook with
/// `refusal`, the error code that build answers.
async fn the_welcome_pack_works(server: &TestServer, refusal: i32) {
    let create = br#"{"nickname": "Newcomer", "side": "Bear", "headId": "5cc084dd14c02e000b0550a3"}"#;
    let reply = send(server.addr, &Call::post("/client/game/profile/create", create).session(SESSION)).await.unwrap();
    assert_eq!(reply.json()["err"], 0, "{}", reply.text());
    let gifts = send(server.addr, &Call::get("/welcome-pack/gifts").session(SESSION)).await.unwrap().json();
    let given = gifts["data"].as_array().or_else(|| gifts.as_array()).cloned().unwrap_or_default();
    assert_eq!(given.len(), 1, "{gifts}");
    let profile =
        send(server.addr, &Call::post("/client/game/profile/list", b"{}").session(SESSION)).await.unwrap().json();
    let items = profile["data"][0]["Inventory"]["items"].as_array().unwrap();
    let id = given[0].as_str().unwrap();
    let gift = items.iter().find(|i| i["_id"] == id).unwrap_or_else(|| panic!("gift {id} not in the stash"));
    assert_eq!(gift["_tpl"], "5449016a4bdc2d6f028b456f");
    // A blocked nickname is refused by the hook, in the game's place.
    let other = "aaaaaaaaaaaaaaaaaaaaaaaa";
    let blocked = br#"{"nickname": "Admin", "side": "Bear", "headId": "5cc084dd14c02e000b0550a3"}"#;
    let reply = send(server.addr, &Call::post("/client/game/profile/create", blocked).session(other)).await.unwrap();
    assert_eq!(reply.json()["err"], refusal, "{}", reply.text());
}

#[tokio::test]
async fn the_game_gives_an_item_to_a_new_player_through_the_welcome_pack_example() {
    let server = welcome_pack_server(guests::WELCOME_PACK).await;
    // SPT's `NicknameNotValid`.
    the_welcome_pack_works(&server, 226).await;
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_full_world_component_built_for_api_0_1_1_keeps_its_hooks_events_and_calls() {
    // The welcome pack as built before API 0.1.2 added `realtime`: its `guest` export (0.1.1) is
    // found, and it declares no realtime work.
    let wasm = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/compat/welcome-pack-0.1.1/welcome_pack.wasm");
    let server = welcome_pack_server(wasm).await;
    // This build predates the move to SPT's codes (226 since issue 20): it answers 256.
    the_welcome_pack_works(&server, 256).await;
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_component_built_for_api_0_1_0_loads_and_answers_unchanged() {
    let wasm = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/compat/hello-0.1.0/hello.wasm");
    let server = TestServer::builder().with_mod("hello", wasm, "").start().await.unwrap();
    assert_eq!(loaded(&server), ["hello"]);
    let reply = send(server.addr, &Call::get("/hello/item")).await.unwrap();
    assert_eq!(reply.json()["data"]["id"], "5449016a4bdc2d6f028b456f", "{}", reply.text());
    let visits = post(&server, "/hello/visits", b"").await.json();
    assert_eq!(visits["data"]["visits"], 1, "{visits}");
    assert_eq!(send(server.addr, &Call::get("/hello/fail")).await.unwrap().json()["err"], 1);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn call_for_session_takes_that_sessions_lock_and_answers_conflict_while_it_stays_taken() {
    let functions = json!(["whoami", "slow"]);
    let builder = peer(TestServer::builder(), "a", "[grants]\ncall = [\"b\"]", json!({"name": "a"}));
    let builder = peer(builder, "b", "", json!({"name": "b", "functions": functions}));
    let server = builder.start().await.unwrap();
    loaded(&server);
    let busy = "bbbbbbbbbbbbbbbbbbbbbbbb";
    // `busy`'s own request holds its lock for 3.5 s (b sleeps inside it).
    let addr = server.addr;
    let holder = tokio::spawn(async move {
        send(addr, &Call::post_raw("/peer/a/call/b/slow", b"3500").session(busy)).await.unwrap().json()
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let refused = post(&server, &format!("/peer/a/call-for/{busy}/b/whoami"), b"").await.json();
    assert_eq!(refused["error"]["kind"], "conflict", "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("stayed busy"), "{refused}");
    assert_eq!(holder.await.unwrap(), json!({"slept": 3500}));
    // Free now: the call runs for that session.
    let who = post(&server, &format!("/peer/a/call-for/{busy}/b/whoami"), b"").await.json();
    assert_eq!(who["session"], busy, "{who}");
    // The request's own session is held by the chain already: no wait, no deadlock.
    let own = post(&server, &format!("/peer/a/call-for/{SESSION}/b/whoami"), b"").await.json();
    assert_eq!(own["session"], SESSION, "{own}");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_reused_callee_lets_go_of_the_session_call_for_session_locked_when_the_call_ends() {
    // b keeps its instances for 8 calls: one goes back to the idle list after the call.
    let builder = peer(TestServer::builder(), "a", "[grants]\ncall = [\"b\"]", json!({"name": "a"}))
        .config(|c| c.session_lock_timeout = std::time::Duration::from_millis(2000));
    let builder = peer(builder, "b", "reuse = 8", json!({"name": "b", "functions": ["whoami"]}));
    let server = builder.start().await.unwrap();
    loaded(&server);
    let other = "bbbbbbbbbbbbbbbbbbbbbbbb";
    for round in 0..2 {
        let who = post(&server, &format!("/peer/a/call-for/{other}/b/whoami"), b"").await.json();
        assert_eq!(who["session"], other, "round {round}: {who}");
        // That session's next request, to a (b is not called again): served, not held behind b's
        // idle instance until the lock's timeout (503).
        let reply = send(server.addr, &Call::post_raw("/peer/a/echo", b"{}").session(other)).await.unwrap();
        assert_eq!(reply.status, 200, "round {round}: {}", reply.text());
    }
    server.stop().await.unwrap();
}

const CREATE: &str = "/client/game/profile/create";

/// Creates a PMC named `nickname` for `session`: the game's answer.
async fn create_profile(server: &TestServer, session: &str, nickname: &str) -> modhost_tests::client::Reply {
    let body = json!({"nickname": nickname, "side": "Bear", "headId": "5cc084dd14c02e000b0550a3"}).to_string();
    send(server.addr, &Call::post(CREATE, body.as_bytes()).session(session)).await.unwrap()
}

/// What the welcome pack gave `session`.
async fn gifts(server: &TestServer, session: &str) -> Value {
    let gifts = send(server.addr, &Call::get("/welcome-pack/gifts").session(session)).await.unwrap().json();
    gifts["data"].clone()
}

/// The entry of `/modhost/mods` for mod `id`.
async fn mod_view(server: &TestServer, id: &str) -> Value {
    let mods = send(server.addr, &Call::get("/modhost/mods")).await.unwrap().json();
    let loaded = mods["loaded"].as_array().unwrap_or_else(|| panic!("{mods}"));
    loaded.iter().find(|m| m["id"] == id).unwrap_or_else(|| panic!("no {id} in {mods}")).clone()
}

#[tokio::test]
async fn a_mod_without_a_grant_cannot_speak_for_the_game_and_the_welcome_pack_gives_nothing_for_a_forged_event() {
    // A player made a profile before the welcome pack was installed: their session has no gift yet,
    // so a `profile.created` in its request would give one.
    let server = TestServer::builder().config(|c| c.builtin_mods = true).start().await.unwrap();
    assert_eq!(create_profile(&server, SESSION, "Early").await.json()["err"], 0);
    let again = server.restart_builder();
    server.stop().await.unwrap();
    let builder = with_welcome_pack(again, guests::WELCOME_PACK);
    // `forger` and `profile` hold no grants; `granted` may emit the game's topic, as a player allowed.
    let builder = peer(builder, "forger", "", json!({"name": "forger"}));
    let builder = peer(builder, "profile", "", json!({"name": "profile"}));
    let builder = peer(builder, "granted", "[grants]\nemit = [\"profile.created\"]", json!({"name": "granted"}));
    let server = builder.start().await.unwrap();
    loaded(&server);
    let payload = json!({"session": SESSION, "uid": "forged", "nickname": "Early", "side": "Bear"}).to_string();

    let forged = post(&server, "/peer/forger/emit/profile.created", payload.as_bytes()).await.json();
    assert_eq!(forged["error"]["kind"], "denied", "a grant-less mod emitted the game's topic: {forged}");
    let message = forged["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("emitting topic `profile.created` needs a grant")
            && message.contains("start with `forger.`")
            && message.contains("emit under [grants]"),
        "{message}"
    );
    // A mod whose id is the topic's first word does not own a topic the game's grant names.
    let taken = post(&server, "/peer/profile/emit/profile.created", payload.as_bytes()).await.json();
    assert_eq!(taken["error"]["kind"], "denied", "{taken}");
    assert!(taken["error"]["message"].as_str().unwrap().contains("belongs to mod `emulator`"), "{taken}");
    assert_eq!(gifts(&server, SESSION).await, json!([]), "the welcome pack gave a gift for a forged event");

    // A mod granted the topic reaches the welcome pack, which sees who sent it and gives nothing.
    let granted = post(&server, "/peer/granted/emit/profile.created", payload.as_bytes()).await.json();
    assert_eq!(granted["count"], 1, "the welcome pack heard it and ignored it: {granted}");
    assert_eq!(gifts(&server, SESSION).await, json!([]), "the welcome pack trusted an event not from the game");
    // A mod's own topics need no grant.
    let own = post(&server, "/peer/forger/emit/forger.news", b"{}").await.json();
    assert_eq!(own, json!({"by": "forger", "count": 0}));
    // The game's own event still reaches it: a new player gets the gift.
    let other = "cccccccccccccccccccccccc";
    assert_eq!(create_profile(&server, other, "Later").await.json()["err"], 0);
    assert_eq!(gifts(&server, other).await.as_array().map(Vec::len), Some(1));
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_subscriber_that_spins_is_stopped_on_its_own_deadline_and_blamed_while_the_game_answers() {
    // The game gets 2 s a call, the spinner 3 s: the spinner outlasts the game's own deadline.
    let builder = TestServer::builder().config(|c| {
        c.builtin_mods = true;
        c.limits.call_deadline = std::time::Duration::from_secs(2);
        c.limits.quarantine_after = 2;
    });
    let builder = peer(builder, "spinner", "", json!({"name": "spinner", "spin_on": ["profile.created"]}));
    std::fs::write(builder.root().join("modhost.toml"), "[mods.spinner]\ncall_timeout_ms = 3000\n").unwrap();
    let server = builder.start().await.unwrap();
    loaded(&server);
    let sessions = ["dddddddddddddddddddddddd", "eeeeeeeeeeeeeeeeeeeeeeee", "ffffffffffffffffffffffff"];
    for (i, session) in sessions.into_iter().enumerate() {
        let reply = create_profile(&server, session, &format!("Player{i}")).await;
        assert_eq!((reply.status, reply.json()["err"].clone()), (200, json!(0)), "create {i}: {}", reply.text());
        let listed = send(server.addr, &Call::post("/client/game/profile/list", b"{}").session(session)).await.unwrap();
        assert_eq!(listed.json()["data"][0]["Info"]["Nickname"], format!("Player{i}"), "{}", listed.text());
    }
    // The spinner ran out its own deadline twice, was counted for it, and is quarantined (the third
    // event did not run it); the game is not.
    let spinner = mod_view(&server, "spinner").await;
    assert_eq!(spinner["events_failed"], 2, "{spinner}");
    let why = spinner["quarantined"].as_str().unwrap_or_else(|| panic!("the spinner is not quarantined: {spinner}"));
    assert!(why.contains("deadlines"), "{why}");
    let game = mod_view(&server, "emulator").await;
    assert_eq!((&game["quarantined"], &game["events_failed"]), (&Value::Null, &json!(0)), "{game}");
    server.stop().await.unwrap();
}
