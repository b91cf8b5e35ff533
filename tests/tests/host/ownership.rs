//! Issue 29, item 0: no client takes another player's profile. Profile ids are not secrets
//! (`/launcher/profiles` lists characters), so every route that names a profile, an account or a raid
//! is tried here from a second player's client with the first player's ids; and a body nested past
//! the game's bound, or a raid configuration with members SPT does not have, is not kept.

use super::emulator::{Player, ROUBLES, emulator, post, put_profile};
use modhost_tests::TestServer;
use modhost_tests::client::{Call, send};
use serde_json::{Value, json};
use std::net::SocketAddr;

async fn text(addr: SocketAddr, path: &str, body: Value) -> String {
    let reply = send(addr, &Call::post(path, body.to_string().as_bytes())).await.unwrap();
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    reply.text()
}

/// Registers `username` with `password` and logs in: the session the launcher hands the client.
async fn account(addr: SocketAddr, username: &str, password: &str) -> String {
    let body = json!({"username": username, "password": password, "edition": "Standard"});
    assert_eq!(text(addr, "/launcher/profile/register", body).await, "OK");
    let session = text(addr, "/launcher/profile/login", json!({"username": username, "password": password})).await;
    assert_eq!(session.len(), 24, "{session}");
    session
}

#[tokio::test]
async fn no_route_lets_a_second_player_act_on_the_first_players_profile_account_or_raid() {
    let server = emulator().await;
    let addr = server.addr;
    let bob_session = account(addr, "Bob", "bob-secret").await;
    let bob = Player::new(addr, &bob_session, "BobChar").await;

    // A client that never logged in is not handed the only profile there is: it is Bob's.
    let stranger = "c1c1c1c1c1c1c1c1c1c1c1c1";
    assert_eq!(post(addr, "/client/game/profile/list", stranger, json!({})).await["data"], json!([]));

    let alice_session = account(addr, "Alice", "alice-secret").await;
    let alice = Player::new(addr, &alice_session, "AliceChar").await;

    // The launcher's list names the characters but not the accounts' sessions.
    let cards = send(addr, &Call::post("/launcher/profiles", b"{}")).await.unwrap().json();
    let ids: Vec<&str> = cards.as_array().unwrap().iter().map(|c| c["profileId"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{cards}");
    assert!(!ids.contains(&bob_session.as_str()) && !ids.contains(&alice_session.as_str()), "{cards}");

    // Select: Bob's uid from Alice's session, and from a session without an account.
    for session in [alice_session.as_str(), stranger] {
        let selected = post(addr, "/client/game/profile/select", session, json!({"uid": bob.uid})).await;
        assert_eq!(selected["err"], 1, "{session} took Bob's profile: {selected}");
        assert!(selected["errmsg"].as_str().unwrap().contains("another player's"), "{selected}");
    }
    assert_eq!(alice.profile().await["_id"], alice.uid.as_str(), "Alice still plays her own");
    assert_eq!(post(addr, "/client/game/profile/list", stranger, json!({})).await["data"], json!([]));

    // Items: Alice's actions name Bob's rouble stack; it is not in her profile, so nothing happens.
    let remove = alice.act(json!({"Action": "Remove", "item": bob.roubles})).await;
    assert!(remove.is_some(), "a Remove of another player's item applied");
    let merge = alice.act(json!({"Action": "Merge", "item": bob.roubles, "with": alice.roubles})).await;
    assert!(merge.is_some(), "a Merge of another player's money into one's own applied");
    assert_eq!(alice.units(ROUBLES).await, 500000, "Alice's money changed");
    assert_eq!(bob.units(ROUBLES).await, 500000, "Bob's money changed");

    // Raid: Bob's open raid cannot be ended from Alice's session.
    let started =
        post(addr, "/client/match/local/start", &bob.session, json!({"location": "bigmap", "playerSide": "pmc"})).await;
    let server_id = started["data"]["serverId"].as_str().unwrap().to_owned();
    let end = json!({"serverId": server_id, "results": {"result": "Killed", "profile": bob.profile().await,
        "exitName": null, "killerId": null, "inSession": true, "playTime": 600}, "lostInsuredItems": [], "transferItems": {}});
    let ended = post(addr, "/client/match/local/end", &alice.session, end).await;
    assert_ne!(ended["err"], 0, "Alice ended Bob's raid: {ended}");
    assert_eq!(bob.units(ROUBLES).await, 500000, "Bob's profile changed by Alice's raid end");

    // Launcher: Bob's account with Alice's password is nobody's to change or remove.
    let wrong = json!({"username": "Bob", "password": "alice-secret", "change": "Eve", "edition": "Standard"});
    for path in
        ["/launcher/profile/change/username", "/launcher/profile/change/password", "/launcher/profile/change/wipe"]
    {
        assert_eq!(text(addr, path, wrong.clone()).await, "FAILED", "{path}");
    }
    assert_eq!(text(addr, "/launcher/profile/remove", wrong.clone()).await, "false");
    assert_eq!(
        text(addr, "/launcher/profile/login", json!({"username": "Bob", "password": "bob-secret"})).await,
        bob_session
    );
    assert_eq!(bob.profile().await["Info"]["Nickname"], "BobChar");
}

#[tokio::test]
async fn a_profile_made_without_an_account_is_its_sessions_and_a_brought_one_goes_to_its_first_taker() {
    let builder = TestServer::builder().config(|c| c.builtin_mods = true);
    let brought = json!({"_id": "d0d0d0d0d0d0d0d0d0d0d0d0", "Info": {"Nickname": "Brought", "Level": 1},
        "Inventory": {"items": [{"_id": "d0d0d0d0d0d0d0d0d0d0e001", "_tpl": "566abbc34bdc2d92178b4576"}],
                      "stash": "d0d0d0d0d0d0d0d0d0d0e001"}});
    put_profile(builder.root(), &brought);
    let server = builder.start().await.unwrap();
    let addr = server.addr;
    let (first, second) = ("e1e1e1e1e1e1e1e1e1e1e1e1", "e2e2e2e2e2e2e2e2e2e2e2e2");
    // The only profile, with no owner: the first session to list takes it, the second does not.
    assert_eq!(post(addr, "/client/game/profile/list", first, json!({})).await["data"][0]["_id"], brought["_id"]);
    assert_eq!(post(addr, "/client/game/profile/list", second, json!({})).await["data"], json!([]));
    let selected = post(addr, "/client/game/profile/select", second, json!({"uid": brought["_id"]})).await;
    assert_eq!(selected["err"], 1, "{selected}");
    let own = post(addr, "/client/game/profile/select", first, json!({"uid": brought["_id"]})).await;
    assert_eq!(own["err"], 0, "{own}");

    // One made by a session without an account is that session's.
    let maker = Player::new(addr, second, "Maker").await;
    let taken = post(addr, "/client/game/profile/select", first, json!({"uid": maker.uid})).await;
    assert_eq!(taken["err"], 1, "{taken}");
    assert_eq!(post(addr, "/client/game/profile/select", second, json!({"uid": maker.uid})).await["err"], 0);
}

#[tokio::test]
async fn a_body_nested_past_the_games_bound_is_refused_even_in_members_it_never_reads() {
    let server = emulator().await;
    let p = Player::new(server.addr, super::emulator::A, "Deep").await;
    let depth = 100_000;
    let body = format!(r#"{{"data":[],"a":{}{}}}"#, "[".repeat(depth), "]".repeat(depth));
    let call = Call::post("/client/game/profile/items/moving", body.as_bytes()).session(&p.session);
    let reply = send(server.addr, &call).await.unwrap();
    assert_eq!(reply.status, 400, "{}", reply.text());
    assert!(reply.text().contains("nests deeper than"), "{}", reply.text());
}

#[tokio::test]
async fn a_raid_configuration_keeps_spts_members_only() {
    let server = emulator().await;
    let p = Player::new(server.addr, super::emulator::A, "Configured").await;
    let sent = json!({"location": "bigmap", "wavesSettings": {"botDifficulty": "Hard", "extra": "x"},
        "parked": {"anything": ["a client", "wants", "kept"]}, "side": "Pmc"});
    let answer = post(server.addr, "/client/raid/configuration", &p.session, sent).await;
    assert_eq!(answer["err"], 0, "{answer}");
    let stored = server.app.store.get("emulator", &format!("raidconfig.{}", p.uid)).unwrap().unwrap();
    let stored: Value = serde_json::from_slice(&stored).unwrap();
    assert_eq!(stored, json!({"location": "bigmap", "wavesSettings": {"botDifficulty": "Hard"}, "side": "Pmc"}));
    let long = json!({"location": "m".repeat(65)});
    let call = Call::post("/client/raid/configuration", long.to_string().as_bytes()).session(&p.session);
    assert_eq!(send(server.addr, &call).await.unwrap().status, 400);
}
