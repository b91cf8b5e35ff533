//! `modhost new --lang ts <name>`: an npm project on the TypeScript SDK (`sdk-js/`) with one route and
//! a test, that builds (`npm install && npm run build`: tsc, esbuild, componentize-js) and tests
//! (`npm test`: the tests built into a WASI command and run under `modhost test-runner`).
//!
//! The SDK is not on npm, and a mod author may have no modhost checkout: its TypeScript sources, the
//! declarations jco generated from the wit (`sdk-js/types/`) and modhost's `wit/` are embedded in this
//! binary and written into the project as `modhost-sdk/`, which the project's `package.json` names as
//! `@modhost/sdk` (`file:./modhost-sdk`). The tests' world (`modhost-sdk/test-wit/`: modhost's imports
//! and the `wasi:cli/run` export) has modhost's wit as a dependency, copied under it.
//!
//! Must not break: every file under `sdk-js/src/` and `sdk-js/types/` is in `SDK_FILES` (a unit test
//! walks the directories), or a project gets an SDK that does not compile.

/// The SDK's sources and declarations, by path under the project's `modhost-sdk/`.
const SDK_FILES: &[(&str, &str)] = &[
    ("src/errors.ts", include_str!("../../sdk-js/src/errors.ts")),
    ("src/globals.d.ts", include_str!("../../sdk-js/src/globals.d.ts")),
    ("src/host.ts", include_str!("../../sdk-js/src/host.ts")),
    ("src/http.ts", include_str!("../../sdk-js/src/http.ts")),
    ("src/index.ts", include_str!("../../sdk-js/src/index.ts")),
    ("src/router.ts", include_str!("../../sdk-js/src/router.ts")),
    ("src/testing.ts", include_str!("../../sdk-js/src/testing.ts")),
    ("types/full.d.ts", include_str!("../../sdk-js/types/full.d.ts")),
    (
        "types/interfaces/modhost-plugin-config.d.ts",
        include_str!("../../sdk-js/types/interfaces/modhost-plugin-config.d.ts"),
    ),
    ("types/interfaces/modhost-plugin-db.d.ts", include_str!("../../sdk-js/types/interfaces/modhost-plugin-db.d.ts")),
    (
        "types/interfaces/modhost-plugin-guest.d.ts",
        include_str!("../../sdk-js/types/interfaces/modhost-plugin-guest.d.ts"),
    ),
    ("types/interfaces/modhost-plugin-log.d.ts", include_str!("../../sdk-js/types/interfaces/modhost-plugin-log.d.ts")),
    (
        "types/interfaces/modhost-plugin-mods.d.ts",
        include_str!("../../sdk-js/types/interfaces/modhost-plugin-mods.d.ts"),
    ),
    (
        "types/interfaces/modhost-plugin-push.d.ts",
        include_str!("../../sdk-js/types/interfaces/modhost-plugin-push.d.ts"),
    ),
    (
        "types/interfaces/modhost-plugin-realtime.d.ts",
        include_str!("../../sdk-js/types/interfaces/modhost-plugin-realtime.d.ts"),
    ),
    (
        "types/interfaces/modhost-plugin-sockets.d.ts",
        include_str!("../../sdk-js/types/interfaces/modhost-plugin-sockets.d.ts"),
    ),
    (
        "types/interfaces/modhost-plugin-store.d.ts",
        include_str!("../../sdk-js/types/interfaces/modhost-plugin-store.d.ts"),
    ),
    (
        "types/interfaces/modhost-plugin-timers.d.ts",
        include_str!("../../sdk-js/types/interfaces/modhost-plugin-timers.d.ts"),
    ),
    (
        "types/interfaces/modhost-plugin-types.d.ts",
        include_str!("../../sdk-js/types/interfaces/modhost-plugin-types.d.ts"),
    ),
    // The tests' world; its `deps/plugin` (a link to `wit/` in the repository) is written from `WIT_FILES`.
    ("test-wit/world.wit", include_str!("../../sdk-js/test-wit/world.wit")),
    ("test-wit/deps/cli/run.wit", include_str!("../../sdk-js/test-wit/deps/cli/run.wit")),
];

/// modhost's wit, by file name.
const WIT_FILES: &[(&str, &str)] = &[
    ("config.wit", include_str!("../../wit/config.wit")),
    ("db.wit", include_str!("../../wit/db.wit")),
    ("guest.wit", include_str!("../../wit/guest.wit")),
    ("log.wit", include_str!("../../wit/log.wit")),
    ("mods.wit", include_str!("../../wit/mods.wit")),
    ("push.wit", include_str!("../../wit/push.wit")),
    ("realtime.wit", include_str!("../../wit/realtime.wit")),
    ("sockets.wit", include_str!("../../wit/sockets.wit")),
    ("store.wit", include_str!("../../wit/store.wit")),
    ("timers.wit", include_str!("../../wit/timers.wit")),
    ("types.wit", include_str!("../../wit/types.wit")),
    ("world.wit", include_str!("../../wit/world.wit")),
];

/// The project's files: (path in the project, template text with `{{name}}` and `{{api}}`).
const TEMPLATE_FILES: &[(&str, &str)] = &[
    ("package.json", include_str!("../templates/new-mod-ts/package.json.tmpl")),
    ("tsconfig.json", include_str!("../templates/new-mod-ts/tsconfig.json.tmpl")),
    ("mod.toml", include_str!("../templates/new-mod-ts/mod.toml.tmpl")),
    (".gitignore", include_str!("../templates/new-mod-ts/gitignore.tmpl")),
    ("README.md", include_str!("../templates/new-mod-ts/README.md.tmpl")),
    ("src/mod.ts", include_str!("../templates/new-mod-ts/mod.ts.tmpl")),
    ("src/mod.test.ts", include_str!("../templates/new-mod-ts/mod.test.ts.tmpl")),
];

/// The SDK's own manifest in the repository, for its name and version.
const SDK_MANIFEST: &str = include_str!("../../sdk-js/package.json");

/// Every file of the project for `name`: (path relative to the project, contents).
pub(crate) fn files(name: &str) -> Vec<(String, String)> {
    let api = modhost_mods::API_VERSION.to_string();
    let fill = |template: &str| template.replace("{{name}}", name).replace("{{api}}", &api);
    let mut out: Vec<(String, String)> = TEMPLATE_FILES.iter().map(|(p, t)| ((*p).to_owned(), fill(t))).collect();
    out.extend(SDK_FILES.iter().map(|(p, t)| (format!("modhost-sdk/{p}"), (*t).to_owned())));
    for (file, text) in WIT_FILES {
        out.push((format!("modhost-sdk/wit/{file}"), (*text).to_owned()));
        // The tests' world imports modhost's interfaces from its `deps/`.
        out.push((format!("modhost-sdk/test-wit/deps/plugin/{file}"), (*text).to_owned()));
    }
    out.push(("modhost-sdk/package.json".to_owned(), sdk_manifest()));
    out
}

/// The copied SDK's `package.json`: the repository's name and version, its sources as the entry,
/// and none of its development tools (jco and tsc regenerate and check it in the repository).
fn sdk_manifest() -> String {
    let version = SDK_MANIFEST
        .lines()
        .find_map(|line| line.trim().strip_prefix("\"version\": \""))
        .and_then(|rest| rest.split('"').next())
        .unwrap_or(env!("CARGO_PKG_VERSION"));
    format!(
        r#"{{
  "name": "@modhost/sdk",
  "version": "{version}",
  "description": "The modhost SDK, copied by `modhost new --lang ts` from modhost {modhost} (it is not on npm)",
  "private": true,
  "type": "module",
  "main": "src/index.ts",
  "types": "src/index.ts",
  "exports": {{
    ".": "./src/index.ts"
  }}
}}
"#,
        modhost = env!("CARGO_PKG_VERSION"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_project_is_filled_in_and_its_json_parses() {
        let files = files("my-mod");
        let get = |path: &str| files.iter().find(|(p, _)| p == path).map(|(_, t)| t.clone()).unwrap();
        for (path, text) in &files {
            assert!(!text.contains("{{"), "{path} has a placeholder left");
        }
        let package: serde_json::Value = serde_json::from_str(&get("package.json")).unwrap();
        assert_eq!(package["name"], "my-mod");
        assert_eq!(package["dependencies"]["@modhost/sdk"], "file:./modhost-sdk");
        assert!(package["scripts"]["build"].as_str().unwrap().contains("-o dist/my-mod.wasm"));
        assert!(package["scripts"]["test"].as_str().unwrap().contains("test-runner dist/test.wasm"));
        let sdk: serde_json::Value = serde_json::from_str(&get("modhost-sdk/package.json")).unwrap();
        assert_eq!(sdk["name"], "@modhost/sdk");
        let _: serde_json::Value = serde_json::from_str(&get("tsconfig.json")).unwrap();
        let manifest = modhost_mods::Manifest::parse(&get("mod.toml")).expect("the manifest parses");
        assert_eq!(manifest.id, "my-mod");
        assert!(manifest.modhost.expect("an API range").matches(&modhost_mods::API_VERSION));
        assert!(get("src/mod.ts").contains("\"/my-mod/hello\""));
        let world = get("modhost-sdk/test-wit/world.wit");
        assert!(world.contains(&format!("modhost:plugin/db@{}", modhost_mods::API_VERSION)), "{world}");
        assert!(
            get("modhost-sdk/wit/world.wit")
                .contains(&format!("package modhost:plugin@{};", modhost_mods::API_VERSION))
        );
    }

    /// Adding a file to the SDK, its declarations or the wit without embedding it here must fail a
    /// test, not a user's build.
    #[test]
    fn every_sdk_type_and_wit_file_is_embedded() {
        fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
            if dir.is_file() {
                out.push(dir.strip_prefix(base).unwrap().to_string_lossy().into_owned());
                return;
            }
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, base, out);
                } else {
                    out.push(path.strip_prefix(base).unwrap().to_string_lossy().into_owned());
                }
            }
        }
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        assert!(
            repo.join("sdk-js/test-wit/deps/plugin/world.wit").exists(),
            "sdk-js/test-wit/deps/plugin must reach wit/ (a link to ../../../wit)"
        );
        let mut found = Vec::new();
        for dir in ["src", "types", "test-wit/world.wit", "test-wit/deps/cli"] {
            walk(&repo.join("sdk-js").join(dir), &repo.join("sdk-js"), &mut found);
        }
        for path in found {
            assert!(SDK_FILES.iter().any(|(p, _)| *p == path), "sdk-js/{path} is not in scaffold_ts::SDK_FILES");
        }
        for entry in std::fs::read_dir(repo.join("wit")).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(WIT_FILES.iter().any(|(p, _)| *p == name), "wit/{name} is not in scaffold_ts::WIT_FILES");
        }
    }
}
