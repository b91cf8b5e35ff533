//! The contract says what the host does: the statuses `wit/*.wit` documents, read from its doc
//! comments, are the statuses the host answers. Each case of `types.error` says "answers NNN" for
//! what `handle` returning it answers; `types.response`'s status says the range the host accepts;
//! `world.wit`'s `handle` says what a trap answers. A fixture route returns each error case, and
//! another answers any status, so a doc and the code that disagree fail here, naming both.

use super::fixture_server;
use modhost_tests::client::{Call, send};
use std::path::PathBuf;

fn wit(file: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../wit").join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The text between `opening` (e.g. `variant error {`) and the next line that is only `}`.
fn block<'a>(text: &'a str, opening: &str) -> &'a str {
    let start = text.find(opening).unwrap_or_else(|| panic!("no `{opening}` in the WIT")) + opening.len();
    let rest = &text[start..];
    let end = rest.lines().take_while(|line| line.trim() != "}").map(|line| line.len() + 1).sum::<usize>();
    &rest[..end.min(rest.len())]
}

/// Each item of `block` with the doc comment above it: (the item's first line, its doc as one line).
fn documented(block: &str) -> Vec<(String, String)> {
    let mut items = Vec::new();
    let mut doc = String::new();
    for line in block.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match line.strip_prefix("///") {
            Some(text) => {
                doc.push_str(text.trim());
                doc.push(' ');
            }
            None => items.push((line.to_owned(), std::mem::take(&mut doc))),
        }
    }
    items
}

/// The three-digit numbers that follow `words` in `doc` (`"answers "` → each "answers NNN").
fn numbers_after(doc: &str, words: &str) -> Vec<u16> {
    doc.match_indices(words)
        .filter_map(|(at, _)| {
            let digits: String = doc[at + words.len()..].chars().take_while(char::is_ascii_digit).collect();
            (digits.len() == 3).then(|| digits.parse().unwrap())
        })
        .collect()
}

/// Each case of `types.error` with the one status its doc says `handle` returning it answers.
fn error_statuses(types: &str) -> Vec<(String, u16)> {
    documented(block(types, "variant error {"))
        .into_iter()
        .map(|(item, doc)| {
            let case = item.split('(').next().unwrap().to_owned();
            match numbers_after(&doc, "answers ").as_slice() {
                [status] => (case, *status),
                found => {
                    panic!("wit/types.wit: error case `{case}` must say once what it answers, found {found:?}: {doc}")
                }
            }
        })
        .collect()
}

/// The range `types.response`'s status documents: "NNN-NNN".
fn status_range(types: &str) -> (u16, u16) {
    let (_, doc) = documented(block(types, "record response {"))
        .into_iter()
        .find(|(item, _)| item.starts_with("status:"))
        .expect("wit/types.wit: response has a status");
    let range = doc.split_whitespace().find_map(|word| {
        let (low, high) = word.trim_matches(|c: char| !c.is_ascii_digit()).split_once('-')?;
        Some((low.parse().ok()?, high.parse().ok()?))
    });
    range.unwrap_or_else(|| panic!("wit/types.wit: response's status doc names no range NNN-NNN: {doc}"))
}

/// What `world.wit`'s `handle` says a trap answers.
fn trap_status(world: &str) -> u16 {
    let (_, doc) = documented(block(world, "world plugin {"))
        .into_iter()
        .find(|(item, _)| item.starts_with("export handle:"))
        .expect("wit/world.wit: the plugin world exports handle");
    match numbers_after(&doc, "trap answers ").as_slice() {
        [status] => *status,
        found => panic!("wit/world.wit: handle must say once what a trap answers, found {found:?}: {doc}"),
    }
}

#[test]
fn the_wit_documents_a_status_for_every_error_case_and_a_status_range() {
    let types = wit("types.wit");
    let cases: Vec<String> = error_statuses(&types).into_iter().map(|(case, _)| case).collect();
    assert_eq!(
        cases,
        ["not-found", "invalid", "wrong-kind", "unreadable", "too-large", "denied", "conflict", "io", "failed"],
        "the fixture's /fx/error-case/ returns these cases; a new one needs it there too"
    );
    assert_eq!(numbers_after("x answers 404, answers 4040 y", "answers "), [404]);
    assert!(status_range(&types).0 < status_range(&types).1);
}

#[tokio::test]
async fn each_error_case_answers_the_status_the_wit_says() {
    let server = fixture_server().await;
    for (case, documented) in error_statuses(&wit("types.wit")) {
        let reply = send(server.addr, &Call::get(&format!("/fx/error-case/{case}"))).await.unwrap();
        assert_eq!(
            reply.status,
            documented,
            "wit/types.wit says error `{case}` from `handle` answers {documented}; the host answered {}: {}",
            reply.status,
            reply.text()
        );
        let body = reply.json();
        assert_eq!(body["mod"], "fx", "the body names the mod: {body}");
        assert!(body["reason"].as_str().is_some_and(|r| r.contains(&format!("fixture {case} on purpose"))), "{body}");
    }
}

#[tokio::test]
async fn a_response_status_is_answered_within_the_range_the_wit_says_and_refused_outside_it() {
    let server = fixture_server().await;
    let (low, high) = status_range(&wit("types.wit"));
    for status in [low, 299, 404, high] {
        let reply = send(server.addr, &Call::get(&format!("/fx/status/{status}"))).await.unwrap();
        assert_eq!(reply.status, status, "wit/types.wit says {low}-{high} is answered: {}", reply.text());
    }
    for status in [100, 101, low - 1, high + 1, u16::MAX] {
        let reply = send(server.addr, &Call::get(&format!("/fx/status/{status}"))).await.unwrap();
        assert_eq!(
            reply.status, 500,
            "wit/types.wit says only {low}-{high} is answered; a mod's {status} was answered {}",
            reply.status
        );
        assert_eq!(reply.json()["mod"], "fx", "the refusal names the mod: {}", reply.text());
    }
    let trap = trap_status(&wit("world.wit"));
    let reply = send(server.addr, &Call::get("/fx/trap")).await.unwrap();
    assert_eq!(reply.status, trap, "wit/world.wit says a trap answers {trap}: {}", reply.text());
}
