//! What the host tells about itself: `/metrics` (always on) and `--perf`'s table of time per phase.

use super::fixture_server;
use modhost_tests::child::{ServeChild, modhost_under_test};
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

/// `--perfmap`: the mods' compiled functions are named in `/tmp/perf-<pid>.map` (perf's map format:
/// `start size name` per line, in hex), so a profile of the server names guest functions. Without the flag
/// there is no map: the control shows the map is the flag's doing.
#[tokio::test]
async fn perfmap_names_the_guests_functions_for_perf() {
    for flagged in [true, false] {
        let root = tempfile::tempdir().unwrap();
        let extra: &[&str] = if flagged { &["--perfmap"] } else { &[] };
        let mut server = ServeChild::spawn(&modhost_under_test(), root.path(), extra).unwrap();
        let reply = send(server.addr, &Call::get("/launcher/ping")).await.unwrap();
        assert_eq!(reply.status, 200, "{}", server.tail());
        let map = std::path::PathBuf::from(format!("/tmp/perf-{}.map", server.pid()));
        let text = std::fs::read_to_string(&map).unwrap_or_default();
        let _ = std::fs::remove_file(&map);
        let guest = |line: &str| {
            let mut parts = line.splitn(3, ' ');
            let (start, size, name) = (parts.next(), parts.next(), parts.next().unwrap_or_default());
            start.is_some_and(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).is_ok())
                && size.is_some_and(|s| u64::from_str_radix(s, 16).is_ok())
                && name.contains("emulator")
        };
        if flagged {
            assert!(
                text.lines().any(guest),
                "no emulator function in {}:\n{}",
                map.display(),
                text.chars().take(2000).collect::<String>()
            );
        } else {
            assert!(!text.lines().any(guest), "{} names guest functions without --perfmap", map.display());
        }
        assert!(server.running(), "{}", server.tail());
    }
}
