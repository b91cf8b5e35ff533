//! The db's scanner against serde_json: any bytes that load as a db (a JSON object) must answer every
//! member, two levels down, with the text serde_json reads as the same value; keys must be the
//! members' names in order. Bytes that do not load must be refused, never panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use modhost_db::{Db, join_path};
use serde_json::Value;

fuzz_target!(|bytes: &[u8]| {
    let Ok(db) = Db::from_text(bytes.to_vec()) else { return };
    // The db validates with serde's `IgnoredAny`, which skips a number's digits without converting
    // them, so it keeps `1e999` as text where `Value` refuses it ("number out of range", found by this
    // target): such a document has no `Value` to compare with.
    let Ok(document) = serde_json::from_slice::<Value>(bytes) else { return };
    // The empty path is the root, which `get` does not answer: start at its members (a member named ""
    // would have the empty path too, so it is skipped).
    for (name, member) in document.as_object().expect("a db is an object") {
        if !name.is_empty() {
            check(&db, &mut vec![name.clone()], member, 2);
        }
    }
});

fn check(db: &Db, path: &mut Vec<String>, value: &Value, depth: usize) {
    let names: Vec<&str> = path.iter().map(String::as_str).collect();
    let at = join_path(&names);
    let text = db.get(&at).expect("a member the document has");
    let read: Value = serde_json::from_slice(&text).expect("the db answers JSON");
    assert_eq!(&read, value, "at `{at}`");
    if let (Value::Object(members), true) = (value, depth > 0) {
        let keys = db.keys(&at).expect("an object has keys");
        // A repeated name: serde_json keeps the last; the db answers one value per name too.
        let mut expected: Vec<&String> = members.keys().collect();
        expected.dedup();
        assert_eq!(keys.len(), expected.len(), "keys at `{at}`");
        for (name, member) in members {
            path.push(name.clone());
            check(db, path, member, depth - 1);
            path.pop();
        }
    }
}
