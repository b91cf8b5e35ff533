//! Capability grants: a mod patches the db only under its `db_write` grants and reaches another mod's
//! store namespace only with `store_read` / `store_write`; everything else is `denied`, naming the grant,
//! and changes nothing.

use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, guests};
use serde_json::json;

async fn call(server: &TestServer, path: &str, body: &[u8]) -> serde_json::Value {
    let reply = send(server.addr, &Call::post_raw(path, body)).await.unwrap();
    assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    reply.json()
}

#[tokio::test]
async fn db_writes_outside_the_grants_are_denied_and_change_nothing() {
    let server = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "[grants]\ndb_write = [\"fx\", \"globals.config\"]")
        .start()
        .await
        .unwrap();
    assert_eq!(call(&server, "/fx/patch-at/fx.a", br#"{"b":1}"#).await, json!({"value": null}));
    assert_eq!(call(&server, "/fx/patch-at/globals.config", br#"{"mine":1}"#).await, json!({"value": null}));
    for path in ["templates.items", "globals", "fxa", "", "locales.global.en"] {
        let answer = call(&server, &format!("/fx/patch-at/{path}"), br#"{"hacked":1}"#).await;
        let error = answer["error"].as_str().unwrap_or_else(|| panic!("{path}: {answer}"));
        assert!(error.starts_with("denied: mod fx:") && error.contains("db_write"), "{path}: {error}");
    }
    let db = server.app.generation().db.get("globals").unwrap();
    assert!(!String::from_utf8_lossy(&db).contains("hacked"), "a denied patch changed the db");
    assert!(server.app.generation().db.exists("fx.a.b").unwrap());
}

/// A fixture server granted `grants`, whose store already holds `other`'s key `k` = `v`.
async fn with_other_namespace(grants: &str) -> TestServer {
    let builder = TestServer::builder().with_mod("fx", guests::FIXTURE, grants);
    let store = modhost_store::Store::open(&builder.root().join("store"), false).unwrap();
    store.set("other", "k", b"v").unwrap();
    drop(store);
    builder.start().await.unwrap()
}

fn denied(answer: &serde_json::Value, grant: &str) {
    let error = answer["error"].as_str().unwrap_or_else(|| panic!("not refused: {answer}"));
    assert!(error.starts_with("denied: mod fx:") && error.contains(grant) && error.contains("`other`"), "{error}");
}

#[tokio::test]
async fn other_namespaces_need_read_or_write_grants() {
    let none = with_other_namespace("").await;
    denied(&call(&none, "/fx/ns/get/other/k", b"").await, "store_read");
    denied(&call(&none, "/fx/ns/list/other/", b"").await, "store_read");
    denied(&call(&none, "/fx/ns/set/other/k", b"w").await, "store_write");
    assert_eq!(call(&none, "/fx/ns/set/fx/k", b"mine").await, json!({"value": "set"}), "its own needs no grant");
    assert_eq!(call(&none, "/fx/ns/get/fx/k", b"").await, json!({"value": "mine"}));

    let reader = with_other_namespace("[grants]\nstore_read = [\"other\"]").await;
    assert_eq!(call(&reader, "/fx/ns/get/other/k", b"").await, json!({"value": "v"}));
    assert_eq!(call(&reader, "/fx/ns/list/other/", b"").await, json!({"value": ["k"]}));
    denied(&call(&reader, "/fx/ns/set/other/k", b"w").await, "store_write");
    assert_eq!(call(&reader, "/fx/ns/get/other/k", b"").await, json!({"value": "v"}), "a denied write wrote");

    let writer = with_other_namespace("[grants]\nstore_write = [\"other\"]").await;
    assert_eq!(call(&writer, "/fx/ns/set/other/k", b"w").await, json!({"value": "set"}));
    assert_eq!(call(&writer, "/fx/ns/get/other/k", b"").await, json!({"value": "w"}));
}

#[tokio::test]
async fn documents_in_other_namespaces_need_the_same_grants() {
    let patch = |p: serde_json::Value| json!({"path": "a", "patch": p}).to_string().into_bytes();
    let none = with_other_namespace("").await;
    denied(&call(&none, "/fx/ns/doc-get/other/d", b"a").await, "store_read");
    denied(&call(&none, "/fx/ns/doc-keys/other/d", b"").await, "store_read");
    denied(&call(&none, "/fx/ns/doc-patch/other/d", &patch(json!({"b": 1}))).await, "store_write");
    // Its own namespace needs no grant: patch, read by path, list, and read whole.
    assert_eq!(
        call(&none, "/fx/ns/doc-patch/fx/d", &patch(json!({"b": 1, "c": [2]}))).await,
        json!({"value": "patched"})
    );
    assert_eq!(call(&none, "/fx/ns/doc-get/fx/d", b"a.c").await, json!({"value": [2]}));
    assert_eq!(call(&none, "/fx/ns/doc-get/fx/d", b"a.nothing").await, json!({"value": null}));
    assert_eq!(call(&none, "/fx/ns/doc-keys/fx/d", b"a").await, json!({"value": ["b", "c"]}));
    assert_eq!(call(&none, "/fx/ns/get/fx/d", b"").await, json!({"value": r#"{"a":{"b":1,"c":[2]}}"#}));
    assert_eq!(call(&none, "/fx/ns/doc-get/fx/missing", b"a").await, json!({"value": null}));
    let refused =
        call(&none, "/fx/ns/doc-patch/fx/d", &json!({"path": "a.b.x", "patch": 1}).to_string().into_bytes()).await;
    let error = refused["error"].as_str().unwrap_or_else(|| panic!("not refused: {refused}"));
    assert!(error.starts_with("invalid:") && error.contains("not an object"), "{error}");

    let reader = with_other_namespace("[grants]\nstore_read = [\"other\"]").await;
    denied(&call(&reader, "/fx/ns/doc-patch/other/d", &patch(json!({"b": 1}))).await, "store_write");
    assert_eq!(call(&reader, "/fx/ns/doc-get/other/d", b"a").await, json!({"value": null}));
    let writer = with_other_namespace("[grants]\nstore_write = [\"other\"]").await;
    assert_eq!(call(&writer, "/fx/ns/doc-patch/other/d", &patch(json!({"b": 1}))).await, json!({"value": "patched"}));
    assert_eq!(call(&writer, "/fx/ns/doc-get/other/d", b"a.b").await, json!({"value": 1}));
}

#[tokio::test]
async fn a_manifest_with_bad_grants_is_not_loaded_and_says_why() {
    let server = TestServer::builder()
        .with_mod("fx", guests::FIXTURE, "[grants]\nstore_read = [\"../etc\"]")
        .start()
        .await
        .unwrap();
    let modhost::LeftOut { reason: why, .. } = &server.report.failed[0];
    assert!(why.contains("not a mod id"), "{why}");
}
