use modhost_tests::TestServer;
use modhost_tests::client::{Call, send};
use modhost_tests::guests;

#[tokio::test]
async fn the_hello_mod_answers_each_route_over_zlib() {
    let server = TestServer::builder()
        .with_mod("hello", guests::HELLO, "")
        .config(|c| c.builtin_mods = true)
        .start()
        .await
        .unwrap();

    let reply = send(server.addr, &Call::post("/hello/item", b"{}")).await.unwrap();
    assert!(modhost::wire::looks_like_zlib(&reply.raw));
    assert_eq!(
        reply.json(),
        serde_json::json!({"err": 0, "errmsg": null, "data": {"id": "5449016a4bdc2d6f028b456f", "name": "Roubles"}})
    );

    let reply = send(server.addr, &Call::post("/hello/visits", b"{}")).await.unwrap();
    assert_eq!(reply.json()["data"]["visits"], 1);

    let reply = send(server.addr, &Call::get("/hello/items")).await.unwrap();
    let body = reply.json();
    assert_eq!(body["err"], 0);
    assert_eq!(body["data"]["5449016a4bdc2d6f028b456f"]["_props"]["StackMaxSize"], 500000);

    let reply = send(server.addr, &Call::get("/hello/fail")).await.unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json(), serde_json::json!({"err": 1, "errmsg": "hello refuses politely", "data": null}));
}
