//! `modhost check`: a well-behaved mod passes with a report per route; a hostile one fails, and the
//! report names its traps, timeouts and capability denials per route.

use modhost_tests::guests;
use std::path::Path;

fn manifest(text: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), text).unwrap();
    file
}

#[tokio::test]
async fn the_hello_example_passes_and_every_route_is_reported() {
    let toml = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/hello/mod.toml");
    let report = modhost::check::check(Path::new(guests::HELLO), Some(&toml), 2000).await.unwrap();
    assert_eq!(report["passed"], true, "{report:#}");
    let routes = report["routes"].as_array().unwrap();
    assert_eq!(routes.len(), 4, "{report:#}");
    for r in routes {
        assert_eq!(r["statuses"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum::<u64>(), 8, "{r}");
        assert!(r["peak_memory_kib"].as_u64().unwrap() > 0, "{r}");
    }
    assert!(modhost::check::text(&report).ends_with("PASS hello\n"));
}

#[tokio::test]
async fn the_hostile_fixture_fails_naming_each_trap_timeout_and_denial() {
    let toml = manifest("id = \"fx\"\nversion = \"0.1.0\"\n");
    let report = modhost::check::check(Path::new(guests::FIXTURE), Some(toml.path()), 150).await.unwrap();
    assert_eq!(report["passed"], false);
    let route = |path: &str| {
        report["routes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["route"] == path)
            .unwrap_or_else(|| panic!("{path}"))
            .clone()
    };
    // Eight probes a route; the malformed session is refused by the host before the mod runs.
    assert_eq!(route("/fx/trap")["traps"].as_array().unwrap().len(), 7);
    assert_eq!(route("/fx/trap")["statuses"]["400"], 1);
    assert_eq!(route("/fx/loop")["timeouts"].as_array().unwrap().len(), 7);
    assert!(route("/fx/memory")["peak_memory_kib"].as_u64().unwrap() >= 60 << 10, "the bomb reached the cap");
    assert_eq!(route("/fx/patch-at/")["denials"], 7, "a patch outside its grants, each time");
    assert_eq!(route("/fx/p/")["traps"].as_array().unwrap().len(), 0);
    let text = modhost::check::text(&report);
    assert!(text.contains("fixture panic on purpose") && text.ends_with("FAIL fx\n"), "{text}");
    assert!(modhost::check::verdict(&report).is_err());
}

#[tokio::test]
async fn a_mod_that_does_not_load_fails_with_the_reason() {
    let toml = manifest("id = \"fx\"\nversion = \"0.1.0\"\n");
    let report =
        modhost::check::check(&Path::new(guests::HELLO).with_extension("nothing"), Some(toml.path()), 2000).await;
    assert!(report.is_err(), "a missing file is an error");
    let not_wasm = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(not_wasm.path(), b"not a component").unwrap();
    let report = modhost::check::check(not_wasm.path(), Some(toml.path()), 2000).await.unwrap();
    assert_eq!((report["passed"].clone(), report["loaded"].clone()), (false.into(), false.into()));
    assert!(modhost::check::text(&report).starts_with("FAIL fx: it did not load"), "{report}");
}
