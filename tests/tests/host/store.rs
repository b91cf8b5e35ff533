use modhost_tests::TestServer;
use modhost_tests::client::{Call, send};
use modhost_tests::guests;

const SESSION: &str = "0123456789abcdef01234567";

#[tokio::test]
async fn store_values_survive_a_restart() {
    let server = TestServer::builder().with_mod("hello", guests::HELLO, "").start().await.unwrap();
    for expected in 1..=2 {
        let reply = send(server.addr, &Call::post("/hello/visits", b"{}").session(SESSION)).await.unwrap();
        assert_eq!(reply.json()["data"]["visits"], expected);
    }
    let again = server.restart_builder();
    server.stop().await.unwrap();

    let server = again.start().await.unwrap();
    let reply = send(server.addr, &Call::post("/hello/visits", b"{}").session(SESSION)).await.unwrap();
    assert_eq!(reply.json()["data"]["visits"], 3);
    // The value is an ordinary file a player can read and back up.
    let path = server.root().join("store/hello").join(format!("visits.{SESSION}"));
    assert_eq!(std::fs::read_to_string(path).unwrap(), "3");
}
