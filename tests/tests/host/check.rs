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
    assert!(report.passed, "{report:#?}");
    assert_eq!(report.routes().len(), 4, "{report:#?}");
    for r in report.routes() {
        assert_eq!(r.statuses.values().sum::<u32>(), 8, "{r:?}");
        assert!(r.peak_memory_kib > 0, "{r:?}");
    }
    assert!(report.to_string().ends_with("PASS hello\n"));
}

#[tokio::test]
async fn the_hostile_fixture_fails_naming_each_trap_timeout_and_denial() {
    let toml = manifest("id = \"fx\"\nversion = \"0.1.0\"\n");
    let report = modhost::check::check(Path::new(guests::FIXTURE), Some(toml.path()), 150).await.unwrap();
    assert!(!report.passed);
    let route =
        |path: &str| report.routes().iter().find(|r| r.route == path).unwrap_or_else(|| panic!("{path}")).clone();
    // Eight probes a route; the malformed session is refused by the host before the mod runs.
    assert_eq!(route("/fx/trap").traps.len(), 7);
    assert_eq!(route("/fx/trap").statuses["400"], 1);
    assert_eq!(route("/fx/loop").timeouts.len(), 7);
    assert!(route("/fx/memory").peak_memory_kib >= 60 << 10, "the bomb reached the cap");
    assert_eq!(route("/fx/patch-at/").denials, 7, "a patch outside its grants, each time");
    assert_eq!(route("/fx/p/").traps.len(), 0);
    let text = report.to_string();
    assert!(text.contains("fixture panic on purpose") && text.ends_with("FAIL fx\n"), "{text}");
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
    assert_eq!((report.passed, report.loaded), (false, false));
    assert!(report.to_string().starts_with("FAIL fx: it did not load"), "{report}");
}
