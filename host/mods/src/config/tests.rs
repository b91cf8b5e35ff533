//! The configuration rules, each on a folder written for the test.

use super::*;
use serde_json::json;

/// A mod folder `<tmp>/mods/greeter` holding the given files.
fn folder(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let root = tempfile::tempdir().expect("a temp dir");
    let folder = root.path().join("mods").join("greeter");
    std::fs::create_dir_all(&folder).expect("the mod folder");
    for (name, text) in files {
        std::fs::write(folder.join(name), text).expect("a config file");
    }
    (root, folder)
}

const DEFAULTS: &str = r#"{"greeting": "hello", "gift": {"count": 2, "item": "bread"}, "loud": false}"#;
const SCHEMA: &str = r#"{
    "type": "object",
    "properties": {
        "greeting": {"type": "string"},
        "gift": {"type": "object", "properties": {"count": {"type": "integer", "minimum": 1}}},
        "loud": {"type": "boolean"}
    }
}"#;

fn refused(files: &[(&str, &str)]) -> String {
    let (_root, folder) = folder(files);
    match load(&folder) {
        Ok(config) => panic!("loaded {:?}", config.effective),
        Err(e) => e.to_string(),
    }
}

#[test]
fn no_files_is_the_empty_object() {
    let (_root, folder) = folder(&[]);
    let config = load(&folder).expect("loads");
    assert_eq!(config.effective, json!({}));
    assert!(config.schema.is_none() && config.player.is_none());
}

#[test]
fn the_players_file_is_merged_over_the_defaults() {
    let (_root, folder) = folder(&[(DEFAULTS_FILE, DEFAULTS), (PLAYER_FILE, r#"{"gift": {"count": 5}}"#)]);
    let config = load(&folder).expect("loads");
    assert_eq!(config.effective, json!({"greeting": "hello", "gift": {"count": 5, "item": "bread"}, "loud": false}));
    assert_eq!(config.player, Some(json!({"gift": {"count": 5}})));
    assert_eq!(config.player_file(), "mods/greeter/config.json");
}

#[test]
fn a_schema_rule_names_the_file_the_key_and_the_rule() {
    let e = refused(&[(DEFAULTS_FILE, DEFAULTS), (SCHEMA_FILE, SCHEMA), (PLAYER_FILE, r#"{"gift": {"count": -1}}"#)]);
    assert_eq!(
        e,
        r#"mods/greeter/config.json: key "gift.count": -1 is less than the minimum of 1 (config.schema.json)"#
    );
}

#[test]
fn bad_defaults_are_the_mods_fault() {
    let e = refused(&[(DEFAULTS_FILE, r#"{"gift": {"count": 0}}"#), (SCHEMA_FILE, SCHEMA)]);
    assert!(e.starts_with(r#"mods/greeter/config.default.json: key "gift.count": 0 is less than the minimum"#), "{e}");
}

#[test]
fn an_unknown_key_names_the_nearest_and_the_known_ones() {
    let e = refused(&[(DEFAULTS_FILE, DEFAULTS), (PLAYER_FILE, r#"{"gift": {"cuont": 3}}"#)]);
    assert!(e.starts_with(r#"mods/greeter/config.json: key "gift.cuont": not a key"#), "{e}");
    assert!(e.contains(r#"did you mean "count"?"#) && e.contains("the keys here are: count, item"), "{e}");
}

#[test]
fn a_wrong_kind_names_both_kinds() {
    let e = refused(&[(DEFAULTS_FILE, DEFAULTS), (PLAYER_FILE, r#"{"loud": "yes"}"#)]);
    assert_eq!(
        e,
        r#"mods/greeter/config.json: key "loud": a string where the default is a boolean (config.default.json)"#
    );
}

#[test]
fn null_says_to_remove_the_key() {
    let e = refused(&[(DEFAULTS_FILE, DEFAULTS), (SCHEMA_FILE, SCHEMA), (PLAYER_FILE, r#"{"greeting": null}"#)]);
    assert!(e.contains(r#"key "greeting": null is not a value here"#) && e.contains("remove the key"), "{e}");
}

#[test]
fn a_player_file_needs_defaults_or_a_schema() {
    let e = refused(&[(PLAYER_FILE, r#"{"a": 1}"#)]);
    assert!(e.starts_with("mods/greeter/config.json: this mod ships no config.default.json"), "{e}");
    // A schema alone allows it, and judges it.
    let (_root, folder) = folder(&[(SCHEMA_FILE, SCHEMA), (PLAYER_FILE, r#"{"loud": true}"#)]);
    assert_eq!(load(&folder).expect("loads").effective, json!({"loud": true}));
}

#[test]
fn keys_with_dots_are_shown_as_pointers() {
    let e = refused(&[(DEFAULTS_FILE, r#"{"a.b": {"c": 1}}"#), (PLAYER_FILE, r#"{"a.b": {"c": "x"}}"#)]);
    assert!(e.contains(r#"key "/a.b/c": a string where the default is a number"#), "{e}");
}

#[test]
fn bounds_size_nesting_and_shape() {
    let big = format!(r#"{{"a": "{}"}}"#, "x".repeat(MAX_FILE_BYTES as usize));
    let e = refused(&[(DEFAULTS_FILE, &big)]);
    assert!(e.starts_with("mods/greeter/config.default.json: ") && e.contains("over the cap of 1048576 bytes"), "{e}");
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let e = refused(&[(DEFAULTS_FILE, &deep)]);
    assert!(e.contains("config.default.json: not valid JSON: recursion limit exceeded"), "{e}");
    let e = refused(&[(DEFAULTS_FILE, "[1]")]);
    assert!(e.contains("the top level is an array"), "{e}");
    let e = refused(&[(DEFAULTS_FILE, DEFAULTS), (PLAYER_FILE, "{\"loud\": tru")]);
    assert!(e.starts_with("mods/greeter/config.json: not valid JSON: "), "{e}");
    let e = refused(&[(DEFAULTS_FILE, DEFAULTS), (SCHEMA_FILE, r#"{"type": 12}"#)]);
    assert!(e.starts_with("mods/greeter/config.schema.json: not a valid JSON Schema"), "{e}");
}

#[test]
fn check_then_write_is_atomic_and_round_trips() {
    let (_root, folder) = folder(&[(DEFAULTS_FILE, DEFAULTS), (SCHEMA_FILE, SCHEMA)]);
    let config = load(&folder).expect("loads");
    assert!(config.check_player(&json!({"gift": {"count": 0}})).is_err());
    let proposed = json!({"greeting": "hi"});
    let effective = config.check_player(&proposed).expect("valid");
    assert_eq!(effective["greeting"], "hi");
    write_player(&folder, &proposed).expect("written");
    assert!(!folder.join(".config.json.tmp").exists(), "the file aside is renamed away");
    let again = load(&folder).expect("loads");
    assert_eq!(again.player, Some(proposed));
    assert_eq!(again.effective, effective);
}
