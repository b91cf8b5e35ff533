//! Mod packages as a player and an author use them, through the `modhost` binary against a real OCI
//! registry (Debian's `docker-registry`, the CNCF distribution server, started on 127.0.0.1 in a
//! temp folder) and a running `modhost serve`: pack, publish, install from the registry into the
//! running server, disable and enable, an update that adds a grant (shown before it is installed),
//! uninstall with the store namespace and config kept. Each refusal (tampered content, an API the
//! host does not serve, a missing requirement, a conflict, the player saying no) is one line and
//! leaves the installed mods byte for byte as they were.
//!
//! Needs `target/release/modhost` (`cargo build --release -p modhost`) and `/usr/bin/docker-registry`
//! (`make setup-registry`).

use modhost_tests::child::{ServeChild, modhost_under_test, wait_within};
use modhost_tests::client::{Call, send};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The longest one command may take (an install checks the mod in a throwaway root with the game).
const LIMIT: Duration = Duration::from_secs(180);
const REGISTRY_BIN: &str = "/usr/bin/docker-registry";

/// A `docker-registry serve` on 127.0.0.1, its storage in a temp folder; killed when dropped.
struct Registry {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Registry {
    fn start() -> Registry {
        assert!(Path::new(REGISTRY_BIN).exists(), "{REGISTRY_BIN} is missing: `make setup-registry` installs it");
        let dir = tempfile::tempdir().unwrap();
        // A free port: bound, released, then given to the registry (which cannot say what it picked).
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.path().join("data").display()
        );
        std::fs::write(dir.path().join("config.yml"), config).unwrap();
        let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
        let child = Command::new(REGISTRY_BIN)
            .arg("serve")
            .arg(dir.path().join("config.yml"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("starting docker-registry");
        let registry = Registry { child, port, dir };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the registry did not listen: {}",
                std::fs::read_to_string(registry.dir.path().join("registry.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        registry
    }

    fn repo(&self, name: &str) -> String {
        format!("127.0.0.1:{}/mods/{name}", self.port)
    }

    /// The blob files the registry stores (layers, configs, manifests).
    fn blobs(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![self.dir.path().join("data/docker/registry/v2/blobs")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                match entry.path() {
                    p if p.is_dir() => stack.push(p),
                    p if p.file_name().is_some_and(|n| n == "data") => found.push(p),
                    _ => {}
                }
            }
        }
        found
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A finished `modhost` command.
struct Ran {
    success: bool,
    out: String,
    err: String,
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "success: {}\nstdout:\n{}\nstderr:\n{}", self.success, self.out, self.err)
    }
}

/// Runs `modhost <args…>` with `stdin` as its input, to the end (killed past [`LIMIT`]).
fn modhost(args: &[&str], stdin: &str) -> Ran {
    let scratch = tempfile::tempdir().unwrap();
    let (out, err) = (scratch.path().join("stdout"), scratch.path().join("stderr"));
    let mut cmd = Command::new(modhost_under_test());
    cmd.args(args)
        .env_remove("MODHOST_ROOT")
        .env("RUST_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("starting {shown}: {e}"));
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    let status = wait_within(&mut child, LIMIT, &shown, &err);
    Ran {
        success: status.success(),
        out: std::fs::read_to_string(&out).unwrap_or_default(),
        err: std::fs::read_to_string(&err).unwrap_or_default(),
    }
}

fn ok(args: &[&str]) -> Ran {
    let ran = modhost(args, "");
    assert!(ran.success, "modhost {args:?} failed:\n{ran}");
    ran
}

/// `modhost <args…>` refused: exit 1 and one `error:` line that contains `says`.
fn refused(args: &[&str], stdin: &str, says: &str) -> Ran {
    let ran = modhost(args, stdin);
    assert!(!ran.success, "modhost {args:?} should have been refused:\n{ran}");
    let errors: Vec<&str> = ran.err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line:\n{ran}");
    assert!(errors[0].contains(says), "the error should say `{says}`:\n{ran}");
    ran
}

/// A mod project folder: welcome-pack's files with its built component, `mod.toml` edited by `edit`.
fn project(dir: &Path, edit: impl FnOnce(String) -> String) -> PathBuf {
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/welcome-pack");
    std::fs::create_dir_all(dir).unwrap();
    let toml = std::fs::read_to_string(example.join("mod.toml")).unwrap();
    std::fs::write(dir.join("mod.toml"), edit(toml)).unwrap();
    for name in ["config.default.json", "config.schema.json"] {
        std::fs::copy(example.join(name), dir.join(name)).unwrap();
    }
    std::fs::copy(modhost_tests::guests::WELCOME_PACK, dir.join("welcome-pack.wasm")).unwrap();
    dir.to_owned()
}

/// Every file under `dir` with its bytes: what a refused change must leave as it was.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.strip_prefix(dir).unwrap().to_owned(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// The mods the server at `addr` serves: id → version.
fn serving(addr: std::net::SocketAddr) -> BTreeMap<String, String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let reply = runtime.block_on(send(addr, &Call::get("/modhost/mods"))).unwrap();
    reply.json()["loaded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["id"].as_str().unwrap().to_owned(), m["version"].as_str().unwrap().to_owned()))
        .collect()
}

fn pack(project: &Path, out: &Path) -> PathBuf {
    let ran = ok(&["pack", project.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let path = ran.out.split(" -> ").nth(1).and_then(|rest| rest.split(" (").next()).unwrap();
    PathBuf::from(path)
}

#[test]
fn a_mod_is_published_installed_toggled_updated_and_uninstalled_on_a_running_server() {
    let registry = Registry::start();
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    let root_s = root.to_str().unwrap();
    let packages = scratch.path().join("packages");

    // The author packs and publishes 0.1.0, then 0.2.0, which may also write the db's globals.
    let v1 = pack(&project(&scratch.path().join("v1"), |t| t), &packages);
    assert!(v1.ends_with("welcome-pack-0.1.0.modhost"), "{}", v1.display());
    let repo = registry.repo("welcome-pack");
    let published = ok(&["publish", v1.to_str().unwrap(), &repo]);
    assert!(published.out.contains(&format!("{repo}:0.1.0")), "{published}");

    // The player's server runs; the mod comes from the registry into it.
    let server = ServeChild::spawn(&modhost_under_test(), &root, &[]).unwrap();
    assert!(!serving(server.addr).contains_key("welcome-pack"));
    let installed = modhost(&["install", &format!("{repo}:0.1.0"), "--root", root_s], "y\n");
    assert!(installed.success, "{installed}");
    assert!(installed.out.contains("welcome-pack 0.1.0 (new)"), "{installed}");
    assert!(installed.out.contains("grants: hook: /client/game/profile/create; call: emulator"), "{installed}");
    assert!(installed.out.contains("reloaded in"), "{installed}");
    assert_eq!(serving(server.addr).get("welcome-pack").map(String::as_str), Some("0.1.0"));

    // The player's own settings for it.
    let config = root.join("mods/welcome-pack/config.json");
    std::fs::write(&config, "{}").unwrap();

    ok(&["disable", "welcome-pack", "--root", root_s]);
    assert!(!serving(server.addr).contains_key("welcome-pack"));
    assert!(root.join("disabled/welcome-pack/config.json").is_file());
    ok(&["enable", "welcome-pack", "--root", root_s]);
    assert!(serving(server.addr).contains_key("welcome-pack"));

    // Disabling the game, which welcome-pack requires, names it and asks; "no" changes nothing.
    // (The game is built in: it cannot be disabled at all, which says so.)
    refused(&["disable", "emulator", "--root", root_s], "n\n", "emulator");

    // 0.2.0 adds a grant: `outdated` and `update` show it before anything changes.
    let v2 = pack(
        &project(&scratch.path().join("v2"), |t| {
            t.replace("version = \"0.1.0\"", "version = \"0.2.0\"")
                .replace("call = [\"emulator\"]", "call = [\"emulator\"]\ndb_write = [\"globals\"]")
        }),
        &packages,
    );
    ok(&["publish", v2.to_str().unwrap(), &repo]);
    let outdated = ok(&["outdated", "--root", root_s]);
    assert!(outdated.out.contains("welcome-pack 0.1.0 -> 0.2.0: safe; NEW grants: db write: globals"), "{outdated}");
    let before = snapshot(&root.join("mods"));
    let said_no = refused(&["update", "--root", root_s], "n\n", "the answer was no");
    assert!(said_no.out.contains("NEW: it may now db write: globals"), "{said_no}");
    assert_eq!(snapshot(&root.join("mods")), before, "a refused update changes nothing");
    let updated = modhost(&["update", "welcome-pack", "--root", root_s], "y\n");
    assert!(updated.success && updated.out.contains("NEW: it may now db write: globals"), "{updated}");
    assert_eq!(serving(server.addr).get("welcome-pack").map(String::as_str), Some("0.2.0"));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "{}", "the player's config survives the update");
    let outdated = ok(&["outdated", "--root", root_s]);
    assert!(outdated.out.contains("welcome-pack 0.2.0: up to date"), "{outdated}");

    // Uninstalled: gone from the server, its config kept for a reinstall.
    ok(&["uninstall", "welcome-pack", "--root", root_s]);
    assert!(!serving(server.addr).contains_key("welcome-pack"));
    assert!(!root.join("mods/welcome-pack").exists());
    assert_eq!(std::fs::read_to_string(root.join("kept/welcome-pack/config.json")).unwrap(), "{}");
    drop(server);

    // The store namespace outlives an uninstall, and --purge empties it (no server running).
    {
        let store = modhost_store::Store::open(&root.join("store"), true).unwrap();
        store.set("welcome-pack", "given", b"[]").unwrap();
    }
    ok(&["install", v1.to_str().unwrap(), "--root", root_s, "--yes"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "{}", "the kept config comes back");
    ok(&["uninstall", "welcome-pack", "--root", root_s]);
    {
        let store = modhost_store::Store::open(&root.join("store"), true).unwrap();
        assert!(store.get("welcome-pack", "given").unwrap().is_some(), "uninstall keeps the namespace");
    }
    ok(&["install", v1.to_str().unwrap(), "--root", root_s, "--yes"]);
    ok(&["uninstall", "welcome-pack", "--root", root_s, "--purge"]);
    let store = modhost_store::Store::open(&root.join("store"), true).unwrap();
    assert!(store.get("welcome-pack", "given").unwrap().is_none(), "--purge empties it");
    assert!(!root.join("kept/welcome-pack").exists());
}

#[test]
fn each_refusal_is_one_line_and_leaves_the_installed_mods_as_they_were() {
    let registry = Registry::start();
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    let root_s = root.to_str().unwrap();
    let packages = scratch.path().join("packages");
    let v1 = pack(&project(&scratch.path().join("v1"), |t| t), &packages);
    ok(&["install", v1.to_str().unwrap(), "--root", root_s, "--yes"]);
    let before = snapshot(&root);
    let unchanged = |what: &str| assert_eq!(snapshot(&root), before, "{what} changed the root");

    // A package whose layer the registry serves altered: the digest does not match.
    let repo = registry.repo("tampered");
    let v2 = pack(&project(&scratch.path().join("v2"), |t| t.replace("0.1.0", "0.2.0")), &packages);
    ok(&["publish", v2.to_str().unwrap(), &repo]);
    let size = std::fs::metadata(&v2).unwrap().len();
    let layer = registry.blobs().into_iter().find(|b| std::fs::metadata(b).unwrap().len() == size).unwrap();
    let mut bytes = std::fs::read(&layer).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&layer, bytes).unwrap();
    refused(&["install", &format!("{repo}:0.2.0"), "--root", root_s, "--yes"], "", "not what was published");
    unchanged("a tampered package");
    // Longer than the manifest says: cut off, never buffered whole.
    let mut longer = std::fs::read(&v2).unwrap();
    longer.extend(std::iter::repeat_n(0u8, 1 << 20));
    std::fs::write(&layer, longer).unwrap();
    refused(&["install", &format!("{repo}:0.2.0"), "--root", root_s, "--yes"], "", "not what was published");
    unchanged("an overlong package");

    // A package file altered on disk: its manifest of hashes (or its gzip check) refuses it.
    let mut bytes = std::fs::read(&v2).unwrap();
    let at = bytes.len() - 20;
    bytes[at] ^= 0x55;
    let broken = scratch.path().join("broken.modhost");
    std::fs::write(&broken, bytes).unwrap();
    refused(&["install", broken.to_str().unwrap(), "--root", root_s, "--yes"], "", "broken.modhost");
    unchanged("a damaged package");

    // A requirement that is not installed, and a conflict with the game.
    let needs = project(&scratch.path().join("needs"), |t| {
        t.replace("id = \"welcome-pack\"", "id = \"needy\"")
            .replace("emulator = \"^0.1\"", "emulator = \"^0.1\"\nmissing-mod = \"^1\"")
    });
    std::fs::rename(needs.join("welcome-pack.wasm"), needs.join("needy.wasm")).unwrap();
    refused(&["install", needs.to_str().unwrap(), "--root", root_s, "--yes"], "", "missing-mod");
    unchanged("a missing requirement");
    let conflicting = project(&scratch.path().join("conflicting"), |t| {
        t.replace("id = \"welcome-pack\"", "id = \"rival\"")
            .replace("[requires]", "conflicts = [\"welcome-pack\"]\n[requires]")
    });
    std::fs::rename(conflicting.join("welcome-pack.wasm"), conflicting.join("rival.wasm")).unwrap();
    refused(&["install", conflicting.to_str().unwrap(), "--root", root_s, "--yes"], "", "welcome-pack");
    unchanged("a conflict");

    // The player refusing the grants.
    refused(&["install", v2.to_str().unwrap(), "--root", root_s], "n\n", "the answer was no");
    unchanged("a refused grant");

    // A component built against an API this host does not serve: refused by pack, check and install.
    let future = scratch.path().join("future");
    std::fs::create_dir_all(&future).unwrap();
    std::fs::write(future.join("mod.toml"), "id = \"future\"\nversion = \"1.0.0\"\n").unwrap();
    let component = wat::parse_str("(component (import \"modhost:plugin/log@0.9.0\" (instance)))").unwrap();
    std::fs::write(future.join("future.wasm"), component).unwrap();
    let out = packages.to_str().unwrap();
    refused(
        &["pack", future.to_str().unwrap(), "--out", out],
        "",
        "modhost:plugin/log@0.9.0, an API version this host does not serve",
    );
    let checked = modhost(&["check", future.to_str().unwrap()], "");
    assert!(!checked.success && checked.out.contains("modhost:plugin/log@0.9.0"), "{checked}");
    refused(&["install", future.to_str().unwrap(), "--root", root_s, "--yes"], "", "log@0.9.0");
    unchanged("a component of another API");
}
