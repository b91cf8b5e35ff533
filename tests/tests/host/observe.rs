//! What the host tells about itself: `/metrics` (always on) and `--perf`'s table of time per phase.

use super::fixture_server;
use modhost_tests::client::{Call, send};
use modhost_tests::{TestServer, guests};

#[tokio::test]
async fn metrics_count_each_route_mod_and_status_in_the_prometheus_format() {
    let server = fixture_server().await;
    let addr = server.addr;
    for _ in 0..3 {
        assert_eq!(send(addr, &Call::get("/fx/p/x")).await.unwrap().status, 200);
    }
    assert_eq!(send(addr, &Call::get("/fx/error")).await.unwrap().status, 500);
    assert_eq!(send(addr, &Call::get("/nowhere")).await.unwrap().status, 404);
    let reply = send(addr, &Call::get("/metrics")).await.unwrap();
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("content-type"), Some("text/plain; version=0.0.4"));
    assert_eq!(reply.header("content-encoding"), None, "a scraper reads it as text");
    let text = reply.text();
    for line in [
        "modhost_requests_total{route=\"/fx/p/\",mod=\"fx\",status=\"200\"} 3",
        "modhost_requests_total{route=\"/fx/error\",mod=\"fx\",status=\"500\"} 1",
        "modhost_requests_total{route=\"-\",mod=\"-\",status=\"404\"} 1",
        "modhost_request_duration_seconds_bucket{route=\"/fx/p/\",le=\"+Inf\"} 3",
        "modhost_request_duration_seconds_count{route=\"/fx/p/\"} 3",
    ] {
        assert!(text.lines().any(|l| l == line), "missing `{line}` in:\n{text}");
    }
}

#[tokio::test]
async fn perf_times_every_phase_of_a_request_per_route_and_mod() {
    let server =
        TestServer::builder().with_mod("fx", guests::FIXTURE, "").config(|c| c.perf = true).start().await.unwrap();
    let addr = server.addr;
    let session = "c0c0c0c0c0c0c0c0c0c0c0c0";
    for _ in 0..4 {
        assert_eq!(send(addr, &Call::post("/fx/counter", b"{}").session(session)).await.unwrap().status, 200);
        assert_eq!(send(addr, &Call::get("/fx/get/locales.languages")).await.unwrap().status, 200);
    }
    let text = server.app.perf.as_ref().expect("--perf is on").render();
    let section = |scope: &str| -> String {
        let start = text.find(&format!("[{scope}]")).unwrap_or_else(|| panic!("no [{scope}] in:\n{text}"));
        text[start..].split("\n\n").next().unwrap().to_owned()
    };
    let counter = section("route /fx/counter");
    assert!(counter.contains("requests 4"), "{counter}");
    for phase in [
        "head read",
        "route match",
        "body+inflate",
        "lock wait",
        "instance checkout",
        "guest",
        "store get",
        "store set",
        "deflate",
        "total",
    ] {
        assert!(counter.lines().any(|l| l.trim_start().starts_with(phase)), "no `{phase}` in:\n{counter}");
    }
    let get = section("route /fx/get/");
    assert!(get.lines().any(|l| l.trim_start().starts_with("db get")), "{get}");
    assert!(section("mod fx").contains("requests 8"), "{text}");
    assert!(section("all").contains("requests 8"), "{text}");

    // Without --perf, nothing is timed.
    let plain = super::fixture_server().await;
    assert!(plain.app.perf.is_none());
}
