use super::fixture_server;
use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, guests};

#[tokio::test]
async fn exact_beats_prefix_longest_prefix_wins_query_ignored() {
    let server = fixture_server().await;
    let cases = [
        ("/fx/p/long/exact", "/fx/p/long/exact", ""),
        ("/fx/p/long/exact?q=1", "/fx/p/long/exact", ""),
        ("/fx/p/long/exact/more", "/fx/p/long/", "exact/more"),
        ("/fx/p/long/x?y=/fx/p/long/exact", "/fx/p/long/", "x"),
        ("/fx/p/short", "/fx/p/", "short"),
    ];
    for (url, route, rest) in cases {
        let reply = send(server.addr, &Call::get(url)).await.unwrap();
        assert_eq!(reply.status, 200, "{url}: {}", reply.text());
        assert_eq!(reply.json(), serde_json::json!({"route": route, "rest": rest}), "{url}");
    }
}

#[tokio::test]
async fn no_route_is_404_naming_the_url() {
    let server = fixture_server().await;
    let reply = send(server.addr, &Call::get("/nothing/here?x=1")).await.unwrap();
    assert_eq!(reply.status, 404);
    assert_eq!(reply.json(), serde_json::json!({"err": "no route", "url": "/nothing/here?x=1"}));
}

#[tokio::test]
async fn two_mods_claiming_one_route_is_a_load_error_naming_both() {
    let server = TestServer::builder()
        .with_mod("fx-a", guests::FIXTURE, "")
        .with_mod("fx-b", guests::FIXTURE, "")
        .start()
        .await
        .unwrap();
    let loaded: Vec<_> = server.report.loaded.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(loaded, ["fx-a"]);
    let modhost::LeftOut { id, reason } = &server.report.failed[0];
    assert_eq!(id, "fx-b");
    assert!(reason.contains("`fx-a`") && reason.contains("`fx-b`"), "{reason}");
    // The first mod keeps its routes.
    let reply = send(server.addr, &Call::get("/fx/error")).await.unwrap();
    assert_eq!(reply.json()["mod"], "fx-a");

    let strict = TestServer::builder()
        .with_mod("fx-a", guests::FIXTURE, "")
        .with_mod("fx-b", guests::FIXTURE, "")
        .config(|c| c.strict = true)
        .start()
        .await;
    let err = format!("{:#}", strict.err().expect("strict refuses to start"));
    assert!(err.contains("`fx-a`") && err.contains("`fx-b`"), "{err}");
}
