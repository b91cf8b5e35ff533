//! Several hosts serving one world from a PostgreSQL store (a server of the test's own): a
//! session's requests spread over two hosts run one at a time (the session's lease), so concurrent
//! purchases are each applied or refused and the money is exact; a profile written on one host is
//! what the other serves; PostgreSQL stopped costs a 503 that names it, and nothing acknowledged.

use crate::emulator::{A, Player, ROUBLES};
use crate::game_trade::db;
use modhost_gamedb::{RIFLE, TRADER};
use modhost_store_pg::testing::Server;
use modhost_tests::TestServer;
use serde_json::json;

/// Prapor's rifle offer, 25 000 roubles.
const OFFER: &str = "6000000000000000000000a1";

async fn host(url: &str) -> TestServer {
    let url = url.to_owned();
    TestServer::builder()
        .db_json(&db(0).to_string())
        .config(move |c| {
            c.builtin_mods = true;
            c.store_url = Some(url.clone());
        })
        .start()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forty_purchases_on_one_session_over_two_hosts_are_each_applied_or_refused_and_the_money_is_exact() {
    let pg = tokio::task::spawn_blocking(Server::start).await.unwrap();
    let (a, b) = (host(&pg.url()).await, host(&pg.url()).await);
    let player = Player::new(a.addr, A, "Cluster").await;
    let money = player.units(ROUBLES).await;
    assert_eq!(money, 500_000);
    // Both hosts serve the profile the first one created.
    let on_b = Player {
        addr: b.addr,
        session: player.session.clone(),
        uid: player.uid.clone(),
        stash: player.stash.clone(),
        roubles: player.roubles.clone(),
        pockets: player.pockets.clone(),
    };
    assert_eq!(on_b.profile().await["_id"], player.profile().await["_id"]);

    let buys = (0..40).map(|i| {
        let at = if i % 2 == 0 { &player } else { &on_b };
        let buy = json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": OFFER,
                         "count": 1, "scheme_id": 0, "scheme_items": [{"id": player.roubles, "count": 25_000}]});
        async move { at.act(buy).await }
    });
    let answers = futures_util::future::join_all(buys).await;
    // Each answered (`act` asserts every answer is the game's), applied or refused with a reason.
    let applied = answers.iter().filter(|a| a.is_none()).count() as u64;
    assert!(applied >= 10, "{answers:?}");
    for at in [&player, &on_b] {
        assert_eq!(at.of(RIFLE).await.len() as u64, applied);
        assert_eq!(at.units(ROUBLES).await, money - 25_000 * applied);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgresql_stopped_and_restarted_costs_a_clear_503_loses_nothing_acknowledged_and_service_resumes() {
    let pg = std::sync::Arc::new(tokio::task::spawn_blocking(Server::start).await.unwrap());
    let a = host(&pg.url()).await;
    let player = Player::new(a.addr, A, "Restart").await;
    let buy = json!({"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": OFFER,
                     "count": 1, "scheme_id": 0, "scheme_items": [{"id": player.roubles, "count": 25_000}]});
    assert_eq!(player.act(buy.clone()).await, None);
    let down = pg.clone();
    tokio::task::spawn_blocking(move || down.stop()).await.unwrap();
    // A request of the session during the outage: 503, naming the database.
    let during = modhost_tests::client::send(
        a.addr,
        &modhost_tests::client::Call::post("/client/game/profile/items/moving", b"{}").session(A),
    )
    .await
    .unwrap();
    assert_eq!(during.status, 503, "{}", during.text());
    assert!(during.text().contains("PostgreSQL"), "{}", during.text());
    let up = pg.clone();
    tokio::task::spawn_blocking(move || up.restart()).await.unwrap();
    // Back by itself: what was acknowledged before is there, and the next purchase applies.
    assert_eq!(player.of(RIFLE).await.len(), 1);
    assert_eq!(player.units(ROUBLES).await, 475_000);
    assert_eq!(player.act(buy).await, None);
    assert_eq!(player.units(ROUBLES).await, 450_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_status_shows_every_host_and_warns_when_they_serve_different_mods() {
    let pg = tokio::task::spawn_blocking(Server::start).await.unwrap();
    let a = host(&pg.url()).await;
    let url = pg.url();
    let b = TestServer::builder()
        .db_json(&db(0).to_string())
        .with_mod("fx", modhost_tests::guests::FIXTURE, "")
        .config(move |c| {
            c.builtin_mods = true;
            c.store_url = Some(url.clone());
        })
        .start()
        .await
        .unwrap();
    // Hosts announce themselves every 2 s: within 10 s, a sees both, and that b serves `fx` too.
    let started = std::time::Instant::now();
    let cluster = loop {
        let status = modhost_tests::client::send(a.addr, &modhost_tests::client::Call::get("/modhost/status"))
            .await
            .unwrap()
            .json();
        let cluster = status["cluster"].clone();
        if cluster["hosts"].as_array().is_some_and(|h| h.len() == 2) && !cluster["warning"].is_null() {
            break cluster;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{status}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let hosts = cluster["hosts"].as_array().unwrap();
    assert_eq!(hosts.iter().filter(|h| h["this"] == true).count(), 1, "{cluster}");
    assert!(hosts.iter().any(|h| h["mods"]["fx"] == "0.1.0"), "{cluster}");
    assert!(hosts.iter().all(|h| h["mods"]["emulator"].is_string() && h["generation"].is_u64()), "{cluster}");
    assert!(cluster["warning"].as_str().unwrap().contains("hosts serve different mods"), "{cluster}");
    drop(b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgresql_restarted_under_load_keeps_every_acknowledged_purchase_and_money_matches_rifles() {
    let pg = std::sync::Arc::new(tokio::task::spawn_blocking(Server::start).await.unwrap());
    let a = host(&pg.url()).await;
    let player = Player::new(a.addr, A, "Load").await;
    let buy = json!({"data": [{"Action": "TradingConfirm", "type": "buy_from_trader", "tid": TRADER, "item_id": OFFER,
                     "count": 1, "scheme_id": 0, "scheme_items": [{"id": player.roubles, "count": 25_000}]}], "tm": 1});
    // Purchases one after another (at most 15: the money's worth) while PostgreSQL restarts.
    let addr = a.addr;
    let load = tokio::spawn(async move {
        let (mut acknowledged, mut failed) = (0u64, 0u64);
        for _ in 0..15 {
            let call =
                modhost_tests::client::Call::post("/client/game/profile/items/moving", buy.to_string().as_bytes())
                    .session(A);
            match modhost_tests::client::send(addr, &call).await {
                Ok(reply) if reply.status == 200 && reply.json()["err"] == 0 => {
                    let warnings = &reply.json()["data"]["warnings"];
                    if warnings.as_array().is_none_or(Vec::is_empty) {
                        acknowledged += 1;
                    }
                }
                Ok(reply) => {
                    assert!(reply.status == 503 || reply.status == 200, "{} {}", reply.status, reply.text());
                    failed += 1;
                }
                Err(_) => failed += 1,
            }
            tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        }
        (acknowledged, failed)
    });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let restarting = pg.clone();
    tokio::task::spawn_blocking(move || {
        restarting.stop();
        std::thread::sleep(std::time::Duration::from_millis(300));
        restarting.restart();
    })
    .await
    .unwrap();
    let (acknowledged, failed) = load.await.unwrap();
    assert!(acknowledged > 0, "nothing applied ({failed} failed)");
    // Every acknowledged purchase is stored; one whose commit's outcome was unknown may be too, but
    // never half: the money spent is exactly the rifles held.
    let rifles = player.of(RIFLE).await.len() as u64;
    assert!(rifles >= acknowledged, "{rifles} rifles for {acknowledged} acknowledged purchases");
    assert_eq!(player.units(ROUBLES).await, 500_000 - 25_000 * rifles);
}
