//! A mod's configuration, the player's to edit: the defaults the mod ships (`config.default.json`
//! beside its `mod.toml`), an optional JSON Schema (`config.schema.json`), and the player's
//! `config.json`, applied over the defaults as an RFC 7396 merge patch so the player writes only what
//! they change. [`load`] reads a folder's effective configuration; [`load_shipped`] what the mod
//! ships, which [`ModConfig::check_player`] vets a proposed player file against; [`write_player`]
//! writes one atomically. (The server's own settings, `modhost.toml`, are another thing: the host's
//! `settings.rs`.)
//!
//! The rules, checked at load and before the status page writes anything:
//! - each file is at most [`MAX_FILE_BYTES`], a JSON object, nested at most 128 deep (serde_json's
//!   recursion limit, which refuses deeper text as an error, not a stack overflow);
//! - with a schema, the defaults must satisfy it alone (a mod shipping bad defaults is refused) and
//!   so must the merged result;
//! - without one, every key of the player's file must be a key of the defaults, of the same JSON
//!   kind; objects are checked member by member, anything else is replaced whole;
//! - a player's `null` (which a merge patch reads as "delete the key") is refused: removing the key
//!   is how the player gets the default back, and a deleted key is never what a mod expects;
//! - a player file with neither defaults nor a schema is refused: nothing says what it may hold.
//!
//! Every error names the file, the key (dotted, or a JSON pointer when a name holds a dot) and the
//! rule broken: the player reads it on the status page or in `modhost mods` and must be able to act.
//!
//! Nothing here runs a mod or knows of wasmtime or hyper.

use serde_json::{Map, Value};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The defaults a mod ships, beside its `mod.toml`.
pub const DEFAULTS_FILE: &str = "config.default.json";
/// The JSON Schema a mod may ship for its configuration.
pub const SCHEMA_FILE: &str = "config.schema.json";
/// The player's file, merged over the defaults.
pub const PLAYER_FILE: &str = "config.json";
/// The largest configuration file read or written, in bytes (1 MiB): a configuration is something a
/// person edits, and the page and every load hold it whole in memory.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file exists but could not be read, or could not be written.
    #[error("{file}: {doing}: {source}")]
    Io {
        /// The file, as the player knows it (`mods/<id>/config.json`).
        file: String,
        /// What was being done.
        doing: &'static str,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A file is larger than [`MAX_FILE_BYTES`].
    #[error("{file}: {size} bytes is over the cap of {cap} bytes (1 MiB) for a configuration file")]
    TooLarge {
        /// The file.
        file: String,
        /// Its size.
        size: u64,
        /// The cap.
        cap: u64,
    },
    /// A file is not JSON (serde_json's message gives the line and column, or says the nesting is
    /// over its limit of 128).
    #[error("{file}: not valid JSON: {reason}")]
    Syntax {
        /// The file.
        file: String,
        /// serde_json's message.
        reason: String,
    },
    /// A file's top level is not a JSON object.
    #[error("{file}: the top level is {kind}, but a configuration is a JSON object of keys")]
    NotObject {
        /// The file.
        file: String,
        /// What it is instead.
        kind: &'static str,
    },
    /// A key breaks a rule: the schema's, or one of the rules without a schema.
    #[error("{file}: key \"{key}\": {rule}")]
    Key {
        /// The file whose key it is.
        file: String,
        /// The key's path: dotted (`gift.count`), or a JSON pointer when a name holds a dot.
        key: String,
        /// The rule broken, and where it comes from (`(config.schema.json)` for the schema's).
        rule: String,
    },
    /// A rule about the whole file broken (a schema rule at its top level).
    #[error("{file}: {rule}")]
    Whole {
        /// The file.
        file: String,
        /// The rule broken.
        rule: String,
    },
    /// The schema itself is not a valid JSON Schema.
    #[error("{file}: not a valid JSON Schema: {reason}")]
    BadSchema {
        /// The schema file.
        file: String,
        /// Why.
        reason: String,
    },
    /// A player file with nothing to check it against.
    #[error(
        "{file}: this mod ships no {DEFAULTS_FILE} and no {SCHEMA_FILE}, so it takes no configuration: remove the file"
    )]
    Unexpected {
        /// The player's file.
        file: String,
    },
}

/// A mod folder's configuration, read and checked.
#[derive(Debug, Clone)]
pub struct ModConfig {
    /// What the mod reads: the defaults with the player's file merged over them; `{}` when it has
    /// neither.
    pub effective: Value,
    /// The mod's defaults (`{}` when it ships none).
    pub defaults: Value,
    /// Its schema, when it ships one.
    pub schema: Option<Value>,
    /// The player's file as it is on disk, when there is one.
    pub player: Option<Value>,
    /// Where the player's file is (or would be).
    pub player_path: PathBuf,
    /// The folder as the player knows it, for messages: `mods/<id>` under a root.
    shown: String,
    /// Whether the mod ships `config.default.json` (without it and a schema, no player file is allowed).
    has_defaults: bool,
}

impl ModConfig {
    /// The empty configuration of a mod with no folder (built-in mods): `{}`.
    pub fn empty() -> ModConfig {
        ModConfig {
            effective: Value::Object(Map::new()),
            defaults: Value::Object(Map::new()),
            schema: None,
            player: None,
            player_path: PathBuf::new(),
            shown: String::new(),
            has_defaults: false,
        }
    }

    /// The player's file as the player knows it (`mods/<id>/config.json`).
    pub fn player_file(&self) -> String {
        shown_file(&self.shown, PLAYER_FILE)
    }

    /// Checks `player` as this mod's player file, as [`load`] would, and returns the effective
    /// configuration it would give. Nothing is written.
    pub fn check_player(&self, player: &Value) -> Result<Value, ConfigError> {
        let file = self.player_file();
        if !player.is_object() {
            return Err(ConfigError::NotObject { file, kind: kind(player) });
        }
        no_nulls(player, &mut Vec::new(), &file)?;
        match &self.schema {
            None if !self.has_defaults => return Err(ConfigError::Unexpected { file }),
            None => like_defaults(&self.defaults, player, &mut Vec::new(), &file)?,
            Some(_) => {}
        }
        let mut effective = self.defaults.clone();
        merge(&mut effective, player);
        if let Some(schema) = &self.schema {
            check_schema(schema, &effective, &file, &shown_file(&self.shown, SCHEMA_FILE))?;
        }
        Ok(effective)
    }
}

/// The folder as messages show it: `mods/<id>` when it is a mod folder under a root, else its path.
fn shown_folder(folder: &Path) -> String {
    let name = folder.file_name().map(|n| n.to_string_lossy().into_owned());
    let parent = folder.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
    match (parent.as_deref(), name) {
        (Some("mods"), Some(name)) => format!("mods/{name}"),
        _ => folder.display().to_string(),
    }
}

fn shown_file(shown: &str, file: &str) -> String {
    if shown.is_empty() { file.to_owned() } else { format!("{shown}/{file}") }
}

/// Reads and checks the configuration of the mod in `folder`: see the module doc for the rules.
/// A folder with none of the three files has the configuration `{}`.
pub fn load(folder: &Path) -> Result<ModConfig, ConfigError> {
    let mut config = load_shipped(folder)?;
    if let Some(player) = read_json(&config.player_path, &config.player_file())? {
        config.effective = config.check_player(&player)?;
        config.player = Some(player);
    }
    Ok(config)
}

/// What the mod in `folder` ships, checked, without the player's file: its defaults are the
/// effective configuration. What a proposed player file is checked against
/// ([`ModConfig::check_player`]), so a player file that is broken now can be replaced.
pub fn load_shipped(folder: &Path) -> Result<ModConfig, ConfigError> {
    let shown = shown_folder(folder);
    let defaults_file = shown_file(&shown, DEFAULTS_FILE);
    let schema_file = shown_file(&shown, SCHEMA_FILE);
    let defaults = read_json(&folder.join(DEFAULTS_FILE), &defaults_file)?;
    let schema = read_json(&folder.join(SCHEMA_FILE), &schema_file)?;
    let has_defaults = defaults.is_some();
    let defaults = defaults.unwrap_or_else(|| Value::Object(Map::new()));
    if !defaults.is_object() {
        return Err(ConfigError::NotObject { file: defaults_file, kind: kind(&defaults) });
    }
    if let Some(schema) = &schema {
        // Bad defaults are the mod's fault, not the player's: name the mod's file.
        check_schema(schema, &defaults, &defaults_file, &schema_file)?;
    }
    Ok(ModConfig {
        effective: defaults.clone(),
        defaults,
        schema,
        player: None,
        player_path: folder.join(PLAYER_FILE),
        shown,
        has_defaults,
    })
}

/// Writes `player` as the player's file of the mod in `folder`, atomically: the text goes to a
/// hidden `.config.json.tmp` beside it (which `serve --watch` ignores, so only the rename counts),
/// is synced, renamed over `config.json`, and the folder is synced so the rename survives a crash.
/// Check it first ([`ModConfig::check_player`]): this writes what it is given.
pub fn write_player(folder: &Path, player: &Value) -> Result<(), ConfigError> {
    let shown = shown_folder(folder);
    let file = shown_file(&shown, PLAYER_FILE);
    let io = |doing: &'static str| {
        let file = file.clone();
        move |source| ConfigError::Io { file, doing, source }
    };
    let mut text = serde_json::to_vec_pretty(player)
        .map_err(|e| ConfigError::Syntax { file: shown_file(&shown, PLAYER_FILE), reason: e.to_string() })?;
    text.push(b'\n');
    let size = text.len() as u64;
    if size > MAX_FILE_BYTES {
        return Err(ConfigError::TooLarge { file: shown_file(&shown, PLAYER_FILE), size, cap: MAX_FILE_BYTES });
    }
    let aside = folder.join(format!(".{PLAYER_FILE}.tmp"));
    let mut out = std::fs::File::create(&aside).map_err(io("creating .config.json.tmp beside it"))?;
    out.write_all(&text).map_err(io("writing .config.json.tmp beside it"))?;
    out.sync_all().map_err(io("syncing .config.json.tmp beside it"))?;
    drop(out);
    std::fs::rename(&aside, folder.join(PLAYER_FILE)).map_err(io("renaming .config.json.tmp over it"))?;
    std::fs::File::open(folder).and_then(|dir| dir.sync_all()).map_err(io("syncing its folder after the rename"))?;
    Ok(())
}

/// Reads a JSON file if it exists, within the size cap.
fn read_json(path: &Path, file: &str) -> Result<Option<Value>, ConfigError> {
    let io = |doing: &'static str| move |source| ConfigError::Io { file: file.to_owned(), doing, source };
    let handle = match std::fs::File::open(path) {
        Ok(handle) => handle,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io("cannot open it")(e)),
    };
    let size = handle.metadata().map_err(io("cannot stat it"))?.len();
    if size > MAX_FILE_BYTES {
        return Err(ConfigError::TooLarge { file: file.to_owned(), size, cap: MAX_FILE_BYTES });
    }
    // Read at most one byte past the cap: the file may grow between the stat and the read.
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(handle, MAX_FILE_BYTES + 1), &mut text)
        .map_err(io("cannot read it"))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(ConfigError::TooLarge { file: file.to_owned(), size: text.len() as u64, cap: MAX_FILE_BYTES });
    }
    parse(&text, file).map(Some)
}

/// Parses a configuration file's text (serde_json's recursion limit of 128 bounds its nesting).
pub fn parse(text: &[u8], file: &str) -> Result<Value, ConfigError> {
    serde_json::from_slice(text).map_err(|e| ConfigError::Syntax { file: file.to_owned(), reason: e.to_string() })
}

/// RFC 7396 MergePatch on plain values. `modhost_db`'s merge works on its own persistent tree, not on
/// `serde_json::Value`, and converting both ways would cost more than these lines.
fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(members) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(into) = target {
        for (name, value) in members {
            if value.is_null() {
                into.remove(name);
            } else {
                merge(into.entry(name.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

/// The JSON kind of a value, as a message says it.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A key path as messages show it: dotted, or a JSON pointer when a name would make dots ambiguous.
fn show_key(path: &[String]) -> String {
    if path.iter().any(|name| name.contains('.') || name.is_empty()) {
        path.iter().map(|name| format!("/{}", name.replace('~', "~0").replace('/', "~1"))).collect()
    } else {
        path.join(".")
    }
}

/// Refuses a `null` anywhere in the player's file.
fn no_nulls(value: &Value, path: &mut Vec<String>, file: &str) -> Result<(), ConfigError> {
    if let Value::Object(members) = value {
        for (name, member) in members {
            path.push(name.clone());
            if member.is_null() {
                return Err(ConfigError::Key {
                    file: file.to_owned(),
                    key: show_key(path),
                    rule: "null is not a value here: to get the mod's default back, remove the key".to_owned(),
                });
            }
            no_nulls(member, path, file)?;
            path.pop();
        }
    }
    Ok(())
}

/// The rules without a schema: every key of `player` is a key of `defaults`, of the same kind.
fn like_defaults(defaults: &Value, player: &Value, path: &mut Vec<String>, file: &str) -> Result<(), ConfigError> {
    let (Value::Object(known), Value::Object(members)) = (defaults, player) else { return Ok(()) };
    for (name, member) in members {
        path.push(name.clone());
        let Some(default) = known.get(name) else {
            return Err(ConfigError::Key { file: file.to_owned(), key: show_key(path), rule: unknown(name, known) });
        };
        if std::mem::discriminant(default) != std::mem::discriminant(member) {
            return Err(ConfigError::Key {
                file: file.to_owned(),
                key: show_key(path),
                rule: format!("{} where the default is {} ({})", kind(member), kind(default), DEFAULTS_FILE),
            });
        }
        like_defaults(default, member, path, file)?;
        path.pop();
    }
    Ok(())
}

/// The message for a key the defaults do not have: the nearest known key, then all of them (at most
/// 20, so a message stays a line).
fn unknown(name: &str, known: &Map<String, Value>) -> String {
    let mut rule = format!("not a key of this mod's configuration ({DEFAULTS_FILE} has no such key)");
    let near = known.keys().map(|k| (edits(name, k), k)).filter(|(d, _)| *d <= 2).min_by_key(|(d, _)| *d);
    if let Some((_, near)) = near {
        rule.push_str(&format!("; did you mean \"{near}\"?"));
    }
    if known.is_empty() {
        rule.push_str("; there are no keys here");
    } else {
        let names: Vec<&str> = known.keys().take(20).map(String::as_str).collect();
        let more = if known.len() > 20 { ", …" } else { "" };
        rule.push_str(&format!("; the keys here are: {}{more}", names.join(", ")));
    }
    rule
}

/// Levenshtein distance, for "did you mean". Names longer than 64 characters are not compared: a
/// misspelling is a short key's, and the cost stays small.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len() > 64 || b.len() > 64 {
        return usize::MAX;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// Checks `value` against `schema`; the first error names `file`, the key and the rule.
fn check_schema(schema: &Value, value: &Value, file: &str, schema_file: &str) -> Result<(), ConfigError> {
    let validator = jsonschema::validator_for(schema)
        .map_err(|e| ConfigError::BadSchema { file: schema_file.to_owned(), reason: e.to_string() })?;
    let Some(error) = validator.iter_errors(value).next() else { return Ok(()) };
    let pointer = error.instance_path().as_str();
    let rule = format!("{error} ({SCHEMA_FILE})");
    if pointer.is_empty() {
        return Err(ConfigError::Whole { file: file.to_owned(), rule });
    }
    let path: Vec<String> =
        pointer.trim_start_matches('/').split('/').map(|s| s.replace("~1", "/").replace("~0", "~")).collect();
    Err(ConfigError::Key { file: file.to_owned(), key: show_key(&path), rule })
}

#[cfg(test)]
mod tests;
