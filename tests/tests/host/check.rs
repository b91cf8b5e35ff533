//! `modhost check`: a well-behaved mod passes with a report per route; a hostile one fails, and the
//! report names its traps, timeouts and capability denials per route.

use modhost::check::Policy;
use modhost_tests::guests;
use std::path::Path;

fn policy(call_timeout_ms: u64) -> Policy {
    Policy { call_timeout_ms, ..Policy::default() }
}

fn manifest(text: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), text).unwrap();
    file
}

#[tokio::test]
async fn the_hello_example_passes_and_every_route_is_reported() {
    let toml = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/hello/mod.toml");
    let report = modhost::check::check(Path::new(guests::HELLO), Some(&toml), &Policy::default()).await.unwrap();
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
    let report = modhost::check::check(Path::new(guests::FIXTURE), Some(toml.path()), &policy(150)).await.unwrap();
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

    // Beyond traps and timeouts: a mod that answers 500, floods the log, or fills its store fails,
    // and the report says which rule each route broke.
    assert_eq!(route("/fx/error").errors.len(), 7, "{:?}", route("/fx/error"));
    assert!(route("/fx/chatty").log_bytes >= 7 * 12 * 1024, "{:?}", route("/fx/chatty"));
    let problem = |needle: &str| report.problems.iter().any(|p| p.contains(needle));
    assert!(problem("/fx/error: 7 of its probes got a server error"), "{:#?}", report.problems);
    assert!(problem("/fx/chatty: its probes logged"), "{:#?}", report.problems);
    assert!(problem("bytes in its store; the policy allows"), "{:#?}", report.problems);
    assert!(!problem("/fx/p/"), "a route that behaves is not named: {:#?}", report.problems);
    assert!(text.contains("problem: /fx/chatty"), "{text}");
}

#[tokio::test]
async fn a_looser_policy_reports_errors_log_and_store_without_failing_on_them() {
    let toml = manifest("id = \"fx\"\nversion = \"0.1.0\"\n");
    let loose = Policy {
        call_timeout_ms: 150,
        fail_on_server_errors: false,
        max_log_bytes: u64::MAX,
        max_store_bytes: u64::MAX,
    };
    let report = modhost::check::check(Path::new(guests::FIXTURE), Some(toml.path()), &loose).await.unwrap();
    let error = report.routes().iter().find(|r| r.route == "/fx/error").unwrap();
    assert_eq!(error.errors.len(), 7, "still reported: {error:?}");
    assert!(report.problems.iter().all(|p| !p.contains("/fx/error") && !p.contains("chatty") && !p.contains("store")));
    assert!(report.problems.iter().any(|p| p.contains("/fx/trap")), "traps always fail: {:#?}", report.problems);
}

#[tokio::test]
async fn a_mod_that_does_not_load_fails_with_the_reason() {
    let toml = manifest("id = \"fx\"\nversion = \"0.1.0\"\n");
    let report = modhost::check::check(
        &Path::new(guests::HELLO).with_extension("nothing"),
        Some(toml.path()),
        &Policy::default(),
    )
    .await;
    assert!(report.is_err(), "a missing file is an error");
    let not_wasm = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(not_wasm.path(), b"not a component").unwrap();
    let report = modhost::check::check(not_wasm.path(), Some(toml.path()), &Policy::default()).await.unwrap();
    assert_eq!((report.passed, report.loaded), (false, false));
    assert!(report.to_string().starts_with("FAIL fx: it did not load"), "{report}");
}
