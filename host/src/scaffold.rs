//! `modhost new <name>`: writes a new mod project, a Cargo crate on the SDK with one route and a test,
//! that builds (`cargo build --release`) and tests (`cargo test --release`) as it is.
//!
//! The SDK is not on crates.io, and a mod author may have no modhost checkout and no network: the SDK's
//! sources and modhost's `wit/` are embedded in this binary (`SDK_FILES`) and written into the project
//! as `modhost-sdk/sdk/` and `modhost-sdk/wit/`, the same relative layout as in this repository, so the
//! SDK's `wit_bindgen::generate!(path: "../wit")` resolves unchanged. Its `Cargo.toml` is generated with
//! the dependency versions of this workspace's `[workspace.dependencies]` (read from the embedded root
//! `Cargo.toml`), so the copy builds against what the SDK was tested with.
//!
//! Must not break: every file under `sdk/src/` and `wit/` is in `SDK_FILES` (a unit test lists the
//! directories), or a project gets an SDK that does not compile.

use std::path::{Path, PathBuf};

/// The SDK's sources and the wit, by path under the project's `modhost-sdk/` folder.
const SDK_FILES: &[(&str, &str)] = &[
    ("sdk/README.md", include_str!("../../sdk/README.md")),
    ("sdk/src/calls.rs", include_str!("../../sdk/src/calls.rs")),
    ("sdk/src/config.rs", include_str!("../../sdk/src/config.rs")),
    ("sdk/src/db.rs", include_str!("../../sdk/src/db.rs")),
    ("sdk/src/envelope.rs", include_str!("../../sdk/src/envelope.rs")),
    ("sdk/src/error.rs", include_str!("../../sdk/src/error.rs")),
    ("sdk/src/events.rs", include_str!("../../sdk/src/events.rs")),
    ("sdk/src/hooks.rs", include_str!("../../sdk/src/hooks.rs")),
    ("sdk/src/http.rs", include_str!("../../sdk/src/http.rs")),
    ("sdk/src/lib.rs", include_str!("../../sdk/src/lib.rs")),
    ("sdk/src/log.rs", include_str!("../../sdk/src/log.rs")),
    ("sdk/src/push.rs", include_str!("../../sdk/src/push.rs")),
    ("sdk/src/realtime.rs", include_str!("../../sdk/src/realtime.rs")),
    ("sdk/src/router.rs", include_str!("../../sdk/src/router.rs")),
    ("sdk/src/sockets.rs", include_str!("../../sdk/src/sockets.rs")),
    ("sdk/src/store.rs", include_str!("../../sdk/src/store.rs")),
    ("sdk/src/timers.rs", include_str!("../../sdk/src/timers.rs")),
    ("wit/config.wit", include_str!("../../wit/config.wit")),
    ("wit/db.wit", include_str!("../../wit/db.wit")),
    ("wit/guest.wit", include_str!("../../wit/guest.wit")),
    ("wit/log.wit", include_str!("../../wit/log.wit")),
    ("wit/mods.wit", include_str!("../../wit/mods.wit")),
    ("wit/push.wit", include_str!("../../wit/push.wit")),
    ("wit/realtime.wit", include_str!("../../wit/realtime.wit")),
    ("wit/sockets.wit", include_str!("../../wit/sockets.wit")),
    ("wit/store.wit", include_str!("../../wit/store.wit")),
    ("wit/timers.wit", include_str!("../../wit/timers.wit")),
    ("wit/types.wit", include_str!("../../wit/types.wit")),
    ("wit/world.wit", include_str!("../../wit/world.wit")),
];

/// modhost's `wit/` files embedded in this binary: (file name, text). The other languages'
/// scaffolds copy them too.
pub(crate) fn wit_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    SDK_FILES.iter().filter_map(|(path, text)| Some((path.strip_prefix("wit/")?, *text)))
}

/// The workspace manifest, for the versions of the SDK's dependencies.
const WORKSPACE_TOML: &str = include_str!("../../Cargo.toml");

/// The SDK's dependencies, as named in `[workspace.dependencies]`.
const SDK_DEPS: &[&str] = &["wit-bindgen", "serde", "serde_json"];

/// The template's own dependencies besides the SDK (same versions as the SDK's).
const TEMPLATE_DEPS: &[&str] = &["serde", "serde_json"];

/// The project's files: (path in the project, template text with `{{name}}`, `{{crate}}`, `{{deps}}`,
/// `{{api}}`).
const TEMPLATE_FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../templates/new-mod/Cargo.toml.tmpl")),
    ("mod.toml", include_str!("../templates/new-mod/mod.toml.tmpl")),
    (".cargo/config.toml", include_str!("../templates/new-mod/config.toml.tmpl")),
    (".gitignore", include_str!("../templates/new-mod/gitignore.tmpl")),
    ("README.md", include_str!("../templates/new-mod/README.md.tmpl")),
    ("src/lib.rs", include_str!("../templates/new-mod/lib.rs.tmpl")),
];

/// Names Cargo refuses for a package, or that would shadow a crate the mod needs.
const RESERVED: &[&str] = &[
    "test",
    "std",
    "core",
    "alloc",
    "proc_macro",
    "proc-macro",
    "modhost-sdk",
    "modhost_sdk",
    "serde",
    "serde_json",
    "wit-bindgen",
    "wit_bindgen",
];

/// Rust keywords, which Cargo refuses as package names too (the crate name is an identifier).
const KEYWORDS: &str = "as async await break const continue crate dyn else enum extern false fn for gen if impl in \
    let loop match mod move mut pub ref return self static struct super trait true try type unsafe use where while \
    yield abstract become box do final macro override priv typeof unsized virtual";

/// Why no project was written.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// The name is not usable as a mod id and a Cargo package name.
    #[error("`{name}` cannot name a mod: {why}")]
    BadName {
        /// The name given.
        name: String,
        /// Why it cannot be used.
        why: String,
    },
    /// The target directory exists and holds files.
    #[error("{} already exists and is not empty; choose another name or --dir", .0.display())]
    NotEmpty(PathBuf),
    /// Reading or writing the filesystem failed.
    #[error("{op} {}: {source}", path.display())]
    Io {
        /// What was being done (`creating`, `writing`…).
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The embedded workspace manifest lacks what the SDK's `Cargo.toml` needs: a build of modhost
    /// from a broken tree, never the user's doing.
    #[error("this modhost was built without the SDK's dependency versions: {0}")]
    Embedded(String),
}

/// Checks that `name` works as a mod id (`mod.toml`), a Cargo package name and a route segment.
pub fn validate_name(name: &str) -> Result<(), ScaffoldError> {
    let bad = |why: &str| Err(ScaffoldError::BadName { name: name.to_owned(), why: why.to_owned() });
    if modhost_mods::ModId::parse(name).is_err() {
        return bad("a mod id is 1-64 characters of a-z, 0-9, `-` and `_`, starting with a letter or digit");
    }
    if !name.as_bytes()[0].is_ascii_lowercase() {
        return bad("a Cargo package name starts with a letter");
    }
    if RESERVED.contains(&name) || KEYWORDS.split_whitespace().any(|k| k == name) {
        return bad("it is a Rust keyword or the name of a crate the mod depends on");
    }
    Ok(())
}

/// The language a new project is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    /// A Cargo crate on the Rust SDK (`sdk/`).
    #[default]
    Rust,
    /// An npm project on the TypeScript SDK (`sdk-js/`), built with componentize-js
    /// (`scaffold_ts.rs`).
    Ts,
    /// A Python project on the Python SDK (`sdk-python/`), built with componentize-py
    /// (`scaffold_python.rs`).
    Python,
}

/// Writes the Rust project for mod `name` into `dir` (default `./<name>`), which must not exist or be
/// empty. Answers the project's directory.
pub fn new_project(name: &str, dir: Option<&Path>) -> Result<PathBuf, ScaffoldError> {
    new_project_in(name, dir, Lang::Rust)
}

/// Writes the project for mod `name` in `lang` into `dir` (default `./<name>`), which must not exist or
/// be empty. Answers the project's directory.
pub fn new_project_in(name: &str, dir: Option<&Path>, lang: Lang) -> Result<PathBuf, ScaffoldError> {
    validate_name(name)?;
    let dir = dir.map_or_else(|| PathBuf::from(name), Path::to_owned);
    match std::fs::read_dir(&dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(ScaffoldError::NotEmpty(dir));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(ScaffoldError::Io { op: "reading", path: dir, source }),
    }
    let files = match lang {
        Lang::Rust => files(name)?,
        Lang::Ts => crate::scaffold_ts::files(name),
        Lang::Python => crate::scaffold_python::files(name, wit_files()),
    };
    for (path, text) in files {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ScaffoldError::Io {
                op: "creating",
                path: parent.to_owned(),
                source,
            })?;
        }
        std::fs::write(&path, text).map_err(|source| ScaffoldError::Io { op: "writing", path, source })?;
    }
    if lang == Lang::Python {
        crate::scaffold_python::make_executable(&dir).map_err(|source| ScaffoldError::Io {
            op: "making the scripts executable in",
            path: dir.clone(),
            source,
        })?;
    }
    Ok(dir)
}

/// Every file of the project for `name`: (path relative to the project, contents).
fn files(name: &str) -> Result<Vec<(String, String)>, ScaffoldError> {
    let versions = workspace_deps()?;
    let deps = |names: &[&str]| -> String {
        names
            .iter()
            .map(|n| format!("{n} = {}\n", versions.iter().find(|(k, _)| k == n).map_or("", |(_, v)| v)))
            .collect()
    };
    let fill = |template: &str| {
        template
            .replace("{{name}}", name)
            .replace("{{crate}}", &name.replace('-', "_"))
            .replace("{{deps}}", &deps(TEMPLATE_DEPS))
            // The whole version: the SDK imports what this API version added (`config`, `mods`)
            // and exports `guest`, so a host of an older patch level cannot load the mod.
            .replace("{{api}}", &modhost_mods::API_VERSION.to_string())
    };
    let mut out: Vec<(String, String)> = TEMPLATE_FILES.iter().map(|(p, t)| ((*p).to_owned(), fill(t))).collect();
    out.extend(SDK_FILES.iter().map(|(p, t)| (format!("modhost-sdk/{p}"), (*t).to_owned())));
    out.push(("modhost-sdk/sdk/Cargo.toml".to_owned(), sdk_manifest(&deps(SDK_DEPS))));
    Ok(out)
}

/// The vendored SDK's `Cargo.toml`: standalone (no `workspace = true`, no workspace lints).
fn sdk_manifest(deps: &str) -> String {
    format!(
        "# The modhost SDK, copied by `modhost new` from modhost {version} (it is not on crates.io).\n\
         [package]\n\
         name = \"modhost-sdk\"\n\
         version = \"{version}\"\n\
         edition = \"2024\"\n\
         publish = false\n\
         \n\
         [dependencies]\n\
         {deps}",
        version = env!("CARGO_PKG_VERSION"),
    )
}

/// `[workspace.dependencies]` entries of [`SDK_DEPS`], each as an inline TOML value.
fn workspace_deps() -> Result<Vec<(String, String)>, ScaffoldError> {
    let table: toml::Table = toml::from_str(WORKSPACE_TOML).map_err(|e| ScaffoldError::Embedded(e.to_string()))?;
    let deps = table
        .get("workspace")
        .and_then(|w| w.get("dependencies"))
        .and_then(toml::Value::as_table)
        .ok_or_else(|| ScaffoldError::Embedded("no [workspace.dependencies]".into()))?;
    SDK_DEPS
        .iter()
        .map(|name| {
            let value = deps.get(*name).ok_or_else(|| ScaffoldError::Embedded(format!("no `{name}`")))?;
            Ok(((*name).to_owned(), value.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_must_be_mod_ids_and_package_names() {
        for good in ["demo", "my-mod", "my_mod2", "a"] {
            validate_name(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        for bad in ["", "Demo", "2fast", "-x", "a b", "a/b", "../x", "test", "fn", "modhost-sdk", &"x".repeat(65)] {
            let e = validate_name(bad).expect_err(bad).to_string();
            assert!(e.contains("cannot name a mod"), "{bad}: {e}");
        }
    }

    #[test]
    fn refuses_a_non_empty_directory_and_fills_an_empty_one() {
        let root = tempfile::tempdir().unwrap();
        let taken = root.path().join("taken");
        std::fs::create_dir(&taken).unwrap();
        std::fs::write(taken.join("keep.txt"), "mine").unwrap();
        let e = new_project("demo", Some(&taken)).unwrap_err();
        assert!(matches!(e, ScaffoldError::NotEmpty(_)), "{e}");
        assert_eq!(std::fs::read_to_string(taken.join("keep.txt")).unwrap(), "mine", "nothing was touched");

        let empty = root.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        new_project("my-mod", Some(&empty)).unwrap();
        let manifest = std::fs::read_to_string(empty.join("mod.toml")).unwrap();
        let parsed = modhost_mods::Manifest::parse(&manifest).expect("today's manifest parses the template's");
        assert_eq!(parsed.id, "my-mod");
        assert!(parsed.modhost.expect("an API range").matches(&modhost_mods::API_VERSION));
        let lib = std::fs::read_to_string(empty.join("src/lib.rs")).unwrap();
        assert!(lib.contains("\"/my-mod/hello\"") && !lib.contains("{{"), "{lib}");
        assert!(empty.join("modhost-sdk/wit/world.wit").exists() && empty.join("modhost-sdk/sdk/src/lib.rs").exists());
    }

    #[test]
    fn the_manifests_are_valid_toml_with_the_workspace_versions() {
        let files = files("demo").unwrap();
        let get = |path: &str| files.iter().find(|(p, _)| p == path).map(|(_, t)| t.clone()).unwrap();
        let sdk: toml::Table = toml::from_str(&get("modhost-sdk/sdk/Cargo.toml")).unwrap();
        let workspace: toml::Table = toml::from_str(WORKSPACE_TOML).unwrap();
        for dep in SDK_DEPS {
            assert_eq!(sdk["dependencies"][dep], workspace["workspace"]["dependencies"][dep], "{dep}");
        }
        assert!(!get("modhost-sdk/sdk/Cargo.toml").contains("workspace"), "the copy stands alone");
        let project: toml::Table = toml::from_str(&get("Cargo.toml")).unwrap();
        assert_eq!(project["package"]["name"].as_str(), Some("demo"));
        assert!(project.contains_key("workspace"), "its own workspace");
        assert_eq!(project["lib"]["crate-type"][0].as_str(), Some("cdylib"));
        let cargo_config: toml::Table = toml::from_str(&get(".cargo/config.toml")).unwrap();
        assert_eq!(cargo_config["target"]["wasm32-wasip2"]["runner"].as_str(), Some("modhost test-runner"));
    }

    /// Adding a file to the SDK or the wit without embedding it here must fail a test, not a user's build.
    #[test]
    fn every_sdk_and_wit_file_is_embedded() {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        for dir in ["sdk/src", "wit"] {
            for entry in std::fs::read_dir(repo.join(dir)).unwrap() {
                let entry = entry.unwrap();
                assert!(entry.file_type().unwrap().is_file(), "{dir} has a subfolder: embed it too");
                let path = format!("{dir}/{}", entry.file_name().to_string_lossy());
                assert!(SDK_FILES.iter().any(|(p, _)| *p == path), "{path} is not in scaffold::SDK_FILES");
            }
        }
    }
}
