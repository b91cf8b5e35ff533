//! `modhost new --lang python`: a Python mod project on the Python SDK (`sdk-python/`), built with
//! componentize-py. The SDK's sources are embedded in this binary (`SDK_FILES`) and written into the
//! project as `modhost-sdk/python/modhost/`, with modhost's `wit/` (embedded once, by `scaffold.rs`,
//! which hands it in) as `modhost-sdk/wit/`, so the project builds with no modhost checkout and no network.
//!
//! The project's test (`test.sh`) builds `tests.py` into a WASI command of the world in `test-wit/`
//! (modhost's imports, `wasi:cli/run` exported) and runs it under `modhost test-runner`.
//!
//! Must not break: every file under `sdk-python/modhost/` is in `SDK_FILES` (a unit test lists the
//! folder), or a project would import a module it was not given.

/// The Python SDK, as (path under `sdk-python/`, text).
const SDK_FILES: &[(&str, &str)] = &[
    ("modhost/__init__.py", include_str!("../../sdk-python/modhost/__init__.py")),
    ("modhost/_wit.py", include_str!("../../sdk-python/modhost/_wit.py")),
    ("modhost/calls.py", include_str!("../../sdk-python/modhost/calls.py")),
    ("modhost/config.py", include_str!("../../sdk-python/modhost/config.py")),
    ("modhost/db.py", include_str!("../../sdk-python/modhost/db.py")),
    ("modhost/envelope.py", include_str!("../../sdk-python/modhost/envelope.py")),
    ("modhost/errors.py", include_str!("../../sdk-python/modhost/errors.py")),
    ("modhost/events.py", include_str!("../../sdk-python/modhost/events.py")),
    ("modhost/http.py", include_str!("../../sdk-python/modhost/http.py")),
    ("modhost/log.py", include_str!("../../sdk-python/modhost/log.py")),
    ("modhost/push.py", include_str!("../../sdk-python/modhost/push.py")),
    ("modhost/router.py", include_str!("../../sdk-python/modhost/router.py")),
    ("modhost/sockets.py", include_str!("../../sdk-python/modhost/sockets.py")),
    ("modhost/store.py", include_str!("../../sdk-python/modhost/store.py")),
    ("modhost/testing.py", include_str!("../../sdk-python/modhost/testing.py")),
    ("modhost/timers.py", include_str!("../../sdk-python/modhost/timers.py")),
];

/// The project's own files: (path in the project, template text with `{{name}}` and `{{api}}`).
const TEMPLATE_FILES: &[(&str, &str)] = &[
    ("app.py", include_str!("../templates/new-mod-python/app.py.tmpl")),
    ("tests.py", include_str!("../templates/new-mod-python/tests.py.tmpl")),
    ("build.sh", include_str!("../templates/new-mod-python/build.sh.tmpl")),
    ("test.sh", include_str!("../templates/new-mod-python/test.sh.tmpl")),
    ("test-wit/world.wit", include_str!("../templates/new-mod-python/test-world.wit.tmpl")),
    ("test-wit/deps/cli/run.wit", include_str!("../templates/new-mod-python/cli-run.wit.tmpl")),
    ("mod.toml", include_str!("../templates/new-mod-python/mod.toml.tmpl")),
    (".gitignore", include_str!("../templates/new-mod-python/gitignore.tmpl")),
    ("README.md", include_str!("../templates/new-mod-python/README.md.tmpl")),
];

/// The scripts, which `scaffold.rs` writes as plain files: made executable by `make_executable`.
const SCRIPTS: &[&str] = &["build.sh", "test.sh"];

/// Every file of the project for `name`: (path relative to the project, contents). `wit`: modhost's
/// `wit/` files (name, text), which `scaffold.rs` embeds for every language and hands in (this module
/// names nothing of `scaffold`, which calls it).
pub(crate) fn files(name: &str, wit: impl Iterator<Item = (&'static str, &'static str)>) -> Vec<(String, String)> {
    let fill =
        |template: &str| template.replace("{{name}}", name).replace("{{api}}", &modhost_mods::API_VERSION.to_string());
    let mut out: Vec<(String, String)> = TEMPLATE_FILES.iter().map(|(p, t)| ((*p).to_owned(), fill(t))).collect();
    out.extend(SDK_FILES.iter().map(|(p, t)| (format!("modhost-sdk/python/{p}"), (*t).to_owned())));
    out.extend(wit.map(|(p, t)| (format!("modhost-sdk/wit/{p}"), t.to_owned())));
    out
}

/// Makes the project's scripts executable (`./build.sh`, `./test.sh`), as `chmod +x` would.
pub(crate) fn make_executable(dir: &std::path::Path) -> std::io::Result<()> {
    #[cfg(unix)]
    for script in SCRIPTS {
        use std::os::unix::fs::PermissionsExt as _;
        let path = dir.join(script);
        let mut permissions = std::fs::metadata(&path)?.permissions();
        permissions.set_mode(permissions.mode() | 0o111);
        std::fs::set_permissions(&path, permissions)?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{SDK_FILES, files};

    #[test]
    fn every_sdk_file_is_embedded() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk-python/modhost");
        for entry in std::fs::read_dir(&dir).expect("sdk-python/modhost") {
            let name = entry.expect("an entry").file_name().into_string().expect("a UTF-8 name");
            if name.ends_with(".py") {
                let path = format!("modhost/{name}");
                assert!(SDK_FILES.iter().any(|(p, _)| *p == path), "{path} is not in scaffold_python::SDK_FILES");
            }
        }
    }

    #[test]
    fn the_project_has_the_sdk_the_wit_and_its_name_filled_in() {
        let files = files("my-mod", [("world.wit", "world full {}")].into_iter());
        let file = |path: &str| {
            files.iter().find(|(p, _)| p == path).map(|(_, t)| t.as_str()).unwrap_or_else(|| panic!("no {path}"))
        };
        assert!(file("app.py").contains("@router.route(\"/my-mod/hello\")"));
        assert!(file("build.sh").contains("-o build/my-mod.wasm"));
        assert!(file("mod.toml").contains("id = \"my-mod\""));
        assert!(file("modhost-sdk/python/modhost/router.py").contains("class Router"));
        assert!(file("modhost-sdk/wit/world.wit").contains("world full"));
        assert!(!files.iter().any(|(_, t)| t.contains("{{")), "a placeholder is left unfilled");
    }
}
