//! Mod packages as a player and an author use them, through the `modhost` binary against a real OCI
//! registry (Debian's `docker-registry`, the CNCF distribution server, started on 127.0.0.1 in a
//! temp folder) and a running `modhost serve`: pack, publish, install from the registry into the
//! running server, disable and enable, an update that adds a grant (shown before it is installed),
//! uninstall with the store namespace and config kept. Each refusal (tampered content, an API the
//! host does not serve, a missing requirement, a conflict, the player saying no) is one line and
//! leaves the installed mods byte for byte as they were.
//!
//! The registry's trust boundary (issue 49) is tried with registries of the test's own ([`Fake`]: a
//! few lines of HTTP/1.1 on tokio, 127.0.0.1): credentials reach their own registry alone, never a
//! token service it names elsewhere nor another registry's Basic challenge, and a 1 GiB manifest or
//! token answer is refused with the CLI's memory bounded. Nothing a folder or a package holds runs
//! before the player says yes, a package cannot take a built-in mod's id, and `--purge` removes a
//! mod's own namespaces (its timers' too) and never a built-in's.
//!
//! Needs `target/release/modhost` (`cargo build --release -p modhost`) and `/usr/bin/docker-registry`
//! (`make setup-registry`).

use modhost_tests::child::{ServeChild, modhost_under_test, wait_within};
use modhost_tests::client::{Call, send};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

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
    /// Its peak resident memory (`VmHWM`), in MiB, as last read before it exited.
    peak_mib: u64,
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "success: {}\nstdout:\n{}\nstderr:\n{}", self.success, self.out, self.err)
    }
}

/// Runs `modhost <args…>` with `stdin` as its input, to the end (killed past [`LIMIT`]).
fn modhost(args: &[&str], stdin: &str) -> Ran {
    modhost_with(args, stdin, &[])
}

/// [`modhost`] with `env` set (and none of the registry variables the test's own environment has).
fn modhost_with(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Ran {
    let scratch = tempfile::tempdir().unwrap();
    let (out, err) = (scratch.path().join("stdout"), scratch.path().join("stderr"));
    let mut cmd = Command::new(modhost_under_test());
    cmd.args(args)
        .env_remove("MODHOST_ROOT")
        .env("RUST_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    for var in REGISTRY_VARS {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let shown = format!("{cmd:?}");
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("starting {shown}: {e}"));
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    // The high-water mark only grows, so its last reading before the exit is the peak (a zombie has
    // none: it is read before each wait).
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0;
    let started = Instant::now();
    let status = loop {
        if let Some(kib) = std::fs::read_to_string(&status_file).ok().as_deref().and_then(high_water_kib) {
            peak_kib = peak_kib.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > LIMIT {
            break wait_within(&mut child, Duration::ZERO, &shown, &err);
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ran {
        success: status.success(),
        out: std::fs::read_to_string(&out).unwrap_or_default(),
        err: std::fs::read_to_string(&err).unwrap_or_default(),
        peak_mib: peak_kib >> 10,
    }
}

/// The environment variables that carry registry credentials.
const REGISTRY_VARS: [&str; 5] = [
    "MODHOST_REGISTRY_AUTH",
    "MODHOST_REGISTRY_HOST",
    "MODHOST_REGISTRY_USER",
    "MODHOST_REGISTRY_PASSWORD",
    "MODHOST_REGISTRY_REALM",
];

/// `VmHWM` of a `/proc/<pid>/status`, in KiB.
fn high_water_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn ok(args: &[&str]) -> Ran {
    let ran = modhost(args, "");
    assert!(ran.success, "modhost {args:?} failed:\n{ran}");
    ran
}

/// `modhost <args…>` refused: exit 1 and one `error:` line that contains `says`.
fn refused(args: &[&str], stdin: &str, says: &str) -> Ran {
    refused_with(args, stdin, &[], says)
}

/// [`refused`] with `env` set.
fn refused_with(args: &[&str], stdin: &str, env: &[(&str, &str)], says: &str) -> Ran {
    let ran = modhost_with(args, stdin, env);
    assert_refused(&ran, says);
    ran
}

/// A command that failed with one `error:` line that contains `says`.
fn assert_refused(ran: &Ran, says: &str) {
    assert!(!ran.success, "the command should have been refused:\n{ran}");
    let errors: Vec<&str> = ran.err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line:\n{ran}");
    assert!(errors[0].contains(says), "the error should say `{says}`:\n{ran}");
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

/// A mod folder as a player downloads one: `mod.toml` (`id`, `version`, no grants) beside the hello
/// example's component named `<id>.wasm`.
fn mod_folder(dir: &Path, id: &str, version: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("mod.toml"), format!("id = \"{id}\"\nversion = \"{version}\"\n")).unwrap();
    std::fs::copy(modhost_tests::guests::HELLO, dir.join(format!("{id}.wasm"))).unwrap();
    dir.to_owned()
}

#[test]
fn installing_a_folder_runs_its_build_only_after_the_player_says_yes() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    let root_s = root.to_str().unwrap();
    // A project with no component yet: installing it means running its build.sh, which leaves a mark.
    let folder = scratch.path().join("scripted");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("mod.toml"), "id = \"scripted\"\nversion = \"0.1.0\"\n").unwrap();
    let script =
        format!("touch ran-build\nmkdir -p build\ncp '{}' build/scripted.wasm\n", modhost_tests::guests::HELLO);
    std::fs::write(folder.join("build.sh"), script).unwrap();
    let marker = folder.join("ran-build");
    let shown = folder.canonicalize().unwrap().display().to_string();
    let folder_s = folder.to_str().unwrap();

    // "no", and no answer at all (a script piping nothing): nothing of the folder runs.
    for answer in ["n\n", ""] {
        let ran = modhost(&["install", folder_s, "--root", root_s], answer);
        assert!(!marker.exists(), "build.sh ran before the player said yes (answer {answer:?}):\n{ran}");
        assert_refused(&ran, "the answer was no");
        assert!(ran.out.contains("sh build.sh") && ran.out.contains(&shown), "the plan names what would run:\n{ran}");
        assert!(snapshot(&root).is_empty(), "a refused install changes nothing:\n{ran}");
    }
    let ran = ok(&["install", folder_s, "--root", root_s, "--yes"]);
    assert!(marker.exists(), "--yes runs the build:\n{ran}");
    assert!(root.join("mods/scripted/scripted.wasm").is_file(), "{ran}");
}

#[test]
fn a_package_cannot_take_a_built_in_mods_id() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    let root_s = root.to_str().unwrap();
    ok(&[
        "install",
        mod_folder(&scratch.path().join("hello"), "hello", "0.1.0").to_str().unwrap(),
        "--root",
        root_s,
        "--yes",
    ]);
    let before = snapshot(&root);
    // A well-formed package named after the built-in game, as a folder and as a package file.
    let folder = mod_folder(&scratch.path().join("emulator"), "emulator", "99.0.0");
    let file = pack(&folder, &scratch.path().join("packages"));
    for source in [folder, file] {
        refused(&["install", source.to_str().unwrap(), "--root", root_s, "--yes"], "", "built-in");
        assert_eq!(snapshot(&root), before, "a refused install changes nothing");
    }
}

#[test]
fn uninstall_purge_never_deletes_a_built_in_mods_namespace() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    let root_s = root.to_str().unwrap();
    {
        let store = modhost_store::Store::open(&root.join("store"), true).unwrap();
        store.set("emulator", "profiles", b"[\"a player\"]").unwrap();
    }
    // A folder of the game's id put in place by hand (discovery lets it replace the game), over the
    // game's own data.
    mod_folder(&root.join("mods/emulator"), "emulator", "99.0.0");
    refused(&["uninstall", "emulator", "--root", root_s, "--purge"], "", "built-in");
    let store = modhost_store::Store::open(&root.join("store"), true).unwrap();
    assert!(store.get("emulator", "profiles").unwrap().is_some(), "the game's namespace is the game's");
    assert!(root.join("mods/emulator/mod.toml").is_file(), "a refusal changes nothing");
}

#[test]
fn uninstall_purge_also_removes_the_mods_timers() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    let root_s = root.to_str().unwrap();
    ok(&[
        "install",
        mod_folder(&scratch.path().join("hello"), "hello", "0.1.0").to_str().unwrap(),
        "--root",
        root_s,
        "--yes",
    ]);
    {
        let store = modhost_store::Store::open(&root.join("store"), true).unwrap();
        store.set("hello", "given", b"[]").unwrap();
        store.set("timers.hello", "o.reminder", b"{}").unwrap();
        store.set("timers.other", "o.reminder", b"{}").unwrap();
    }
    ok(&["uninstall", "hello", "--root", root_s, "--purge"]);
    let store = modhost_store::Store::open(&root.join("store"), true).unwrap();
    assert!(store.get("hello", "given").unwrap().is_none(), "--purge empties the mod's namespace");
    assert_eq!(store.list("timers.hello", "").unwrap(), Vec::<String>::new(), "--purge empties its timers'");
    assert!(store.get("timers.other", "o.reminder").unwrap().is_some(), "and no other mod's");
}

/// One request a [`Fake`] server received.
#[derive(Debug, Clone)]
struct Seen {
    /// Its request line.
    line: String,
    /// Its `Authorization` header.
    authorization: Option<String>,
}

/// What a [`Fake`] server answers.
enum Reply {
    /// A whole answer: status, headers, body.
    Whole(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// 200 with this many bytes of JSON whitespace, chunked, as fast as the client reads: a 1 GiB
    /// answer is streamed, never held.
    Endless(u64),
}

/// What a [`Fake`] server is asked: the port it was reached on, the path (with its query) and the
/// `Authorization` header.
type Answer = dyn Fn(u16, &str, Option<&str>) -> Reply + Send + Sync;

/// HTTP/1.1 servers of the test's own on 127.0.0.1 (a registry, and a token service it names), each
/// answering every request with one [`Answer`] and closing the connection after it; what reached
/// them is kept. They stop when it is dropped.
struct Fake {
    ports: Vec<u16>,
    seen: Arc<Mutex<Vec<Seen>>>,
    _runtime: tokio::runtime::Runtime,
}

impl Fake {
    /// `count` servers; the answer is made knowing their ports, since a challenge names them.
    fn start(count: usize, answer: impl FnOnce(&[u16]) -> Box<Answer>) -> Fake {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listeners: Vec<tokio::net::TcpListener> =
            (0..count).map(|_| runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap()).collect();
        let ports: Vec<u16> = listeners.iter().map(|l| l.local_addr().unwrap().port()).collect();
        let answer: Arc<Answer> = Arc::from(answer(&ports));
        let seen = Arc::new(Mutex::new(Vec::new()));
        for (listener, port) in listeners.into_iter().zip(ports.iter().copied()) {
            let (answer, seen) = (answer.clone(), seen.clone());
            runtime.spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    tokio::spawn(Fake::serve(stream, port, answer.clone(), seen.clone()));
                }
            });
        }
        Fake { ports, seen, _runtime: runtime }
    }

    async fn serve(stream: tokio::net::TcpStream, port: u16, answer: Arc<Answer>, seen: Arc<Mutex<Vec<Seen>>>) {
        let mut stream = tokio::io::BufReader::new(stream);
        let mut line = String::new();
        if stream.read_line(&mut line).await.is_err() {
            return;
        }
        let mut authorization = None;
        for _ in 0..100 {
            let mut header = String::new();
            if !matches!(stream.read_line(&mut header).await, Ok(n) if n > 2) {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("authorization")
            {
                authorization = Some(value.trim().to_owned());
            }
        }
        let line = line.trim().to_owned();
        let path = line.split(' ').nth(1).unwrap_or("/").to_owned();
        let reply = answer(port, &path, authorization.as_deref());
        seen.lock().unwrap_or_else(PoisonError::into_inner).push(Seen { line, authorization });
        let stream = stream.get_mut();
        match reply {
            Reply::Whole(status, headers, body) => {
                let mut head =
                    format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n", body.len());
                for (name, value) in headers {
                    head.push_str(&format!("{name}: {value}\r\n"));
                }
                head.push_str("\r\n");
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(&body).await;
            }
            Reply::Endless(bytes) => {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/vnd.oci.image.manifest.v1+json\r\n\
                            transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                const CHUNK: usize = 64 << 10;
                let mut framed = format!("{CHUNK:x}\r\n").into_bytes();
                framed.extend_from_slice(&[b' '; CHUNK]);
                framed.extend_from_slice(b"\r\n");
                for _ in 0..bytes / CHUNK as u64 {
                    if stream.write_all(&framed).await.is_err() {
                        return; // the client stopped reading and hung up
                    }
                }
                let _ = stream.write_all(b"0\r\n\r\n").await;
            }
        }
        let _ = stream.shutdown().await;
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// A JSON answer.
fn json(status: u16, body: serde_json::Value) -> Reply {
    Reply::Whole(status, vec![("content-type", "application/json".to_owned())], body.to_string().into_bytes())
}

/// 401 with a `WWW-Authenticate` challenge.
fn challenge(value: &str) -> Reply {
    let body = serde_json::json!({"errors": [{"code": "UNAUTHORIZED", "message": "authentication required"}]});
    Reply::Whole(401, vec![("www-authenticate", value.to_owned())], body.to_string().into_bytes())
}

/// Base64 (RFC 4648, padded), for the Basic credentials the tests expect to see or not.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            match i <= chunk.len() {
                true => out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize])),
                false => out.push('='),
            }
        }
    }
    out
}

/// The author's credentials, in every test for the registry they belong to.
const USER: &str = "author";
const PASSWORD: &str = "hunter2-for-the-authors-registry";

/// The variables that give [`USER`]'s credentials to `registry` alone.
fn credentials_for(registry: &str) -> [(&'static str, String); 3] {
    [
        ("MODHOST_REGISTRY_HOST", registry.to_owned()),
        ("MODHOST_REGISTRY_USER", USER.to_owned()),
        ("MODHOST_REGISTRY_PASSWORD", PASSWORD.to_owned()),
    ]
}

fn as_env<'a>(vars: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    vars.iter().map(|(name, value)| (*name, value.as_str())).collect()
}

#[test]
fn registry_credentials_never_reach_a_token_service_elsewhere_nor_another_registrys_challenge() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    let root_s = root.to_str().unwrap();
    let basic = format!("Basic {}", base64(format!("{USER}:{PASSWORD}").as_bytes()));
    // What the hostile registry's challenge names, from its own port and the other server's.
    type Names = fn(u16, u16) -> String;
    let cases: [(&str, Names); 4] = [
        ("a token service on another port", |_, other| {
            format!("Bearer realm=\"http://127.0.0.1:{other}/token\",service=\"hostile\"")
        }),
        ("a token service on another host", |_, other| {
            format!("Bearer realm=\"http://localhost:{other}/token\",service=\"hostile\"")
        }),
        ("a token service on its own port under another name", |own, _| {
            format!("Bearer realm=\"http://localhost:{own}/token\",service=\"hostile\"")
        }),
        ("a Basic challenge", |_, _| "Basic realm=\"hostile\"".to_owned()),
    ];
    let (mut leaks, mut outcomes) = (Vec::new(), Vec::new());
    for (what, names) in cases {
        // The credentials are for the author's own registry, or (a token service elsewhere) for this one.
        for for_this_one in [false, true] {
            if for_this_one && what == "a Basic challenge" {
                continue; // its own credentials are for it to see
            }
            let fake = Fake::start(2, |ports| {
                let (own, other) = (ports[0], ports[1]);
                let challenged = names(own, other);
                Box::new(move |port: u16, path: &str, authorization: Option<&str>| {
                    if path.starts_with("/token") {
                        return json(200, serde_json::json!({"token": "anonymous"}));
                    }
                    match (port == own, path, authorization) {
                        (true, "/v2/", _) | (true, _, None) => challenge(&challenged),
                        _ => json(404, serde_json::json!({"errors": [{"code": "MANIFEST_UNKNOWN", "message": "no"}]})),
                    }
                })
            });
            let hostile = format!("127.0.0.1:{}", fake.ports[0]);
            let vars = credentials_for(if for_this_one { &hostile } else { "registry.author.example" });
            let ran = modhost_with(
                &["install", &format!("{hostile}/mods/bait:1.0.0"), "--root", root_s, "--yes"],
                "",
                &as_env(&vars),
            );
            let seen = fake.seen();
            let whose = if for_this_one { "this registry's" } else { "another registry's" };
            // Every case is tried before the verdict, which names each one that leaked.
            for leak in seen.iter().filter(|s| s.authorization.as_deref().is_some_and(|a| a.contains(&basic[6..]))) {
                leaks.push(format!("{what}, with {whose} credentials: they reached `{}`", leak.line));
            }
            assert!(!ran.success, "{what}: nothing was there to install:\n{ran}");
            assert!(seen.iter().any(|s| s.line.starts_with("GET /v2/")), "{what}: the registry was asked:\n{ran}");
            outcomes.push((for_this_one, ran));
        }
    }
    assert!(leaks.is_empty(), "the credentials went where a registry said:\n{}", leaks.join("\n"));
    for (for_this_one, ran) in &outcomes {
        if *for_this_one {
            assert_refused(ran, "token service");
        }
    }
    assert!(snapshot(&root).is_empty(), "nothing was installed");
}

#[test]
fn credentials_reach_their_own_registry_through_its_token_service_or_its_basic_challenge() {
    let scratch = tempfile::tempdir().unwrap();
    let package = pack(&mod_folder(&scratch.path().join("hello"), "hello", "0.1.0"), &scratch.path().join("packages"));
    let layer = std::fs::read(&package).unwrap();
    let config = b"{}".to_vec();
    let (layer_digest, config_digest) = (modhost::install::digest(&layer), modhost::install::digest(&config));
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.modhost.package.config.v1+json", "digest": config_digest, "size": config.len()},
        "layers": [{"mediaType": "application/vnd.modhost.package.v1.tar+gzip", "digest": layer_digest, "size": layer.len()}],
    })
    .to_string()
    .into_bytes();
    let basic = format!("Basic {}", base64(format!("{USER}:{PASSWORD}").as_bytes()));
    for by_token in [true, false] {
        let (layer, manifest, basic_header, layer_digest) =
            (layer.clone(), manifest.clone(), basic.clone(), layer_digest.clone());
        let fake = Fake::start(1, |ports| {
            let own = ports[0];
            let (challenged, granted) = match by_token {
                true => (
                    format!("Bearer realm=\"http://127.0.0.1:{own}/token\",service=\"own\""),
                    "Bearer granted".to_owned(),
                ),
                false => ("Basic realm=\"own\"".to_owned(), basic_header.clone()),
            };
            Box::new(move |_: u16, path: &str, authorization: Option<&str>| {
                if path.starts_with("/token") {
                    return match authorization == Some(basic_header.as_str()) {
                        true => json(200, serde_json::json!({"token": "granted"})),
                        false => challenge("Basic realm=\"own token service\""),
                    };
                }
                if authorization != Some(granted.as_str()) {
                    return challenge(&challenged);
                }
                let oci = ("content-type", "application/vnd.oci.image.manifest.v1+json".to_owned());
                match path {
                    "/v2/" => json(200, serde_json::json!({})),
                    p if p.ends_with("/manifests/0.1.0") => Reply::Whole(200, vec![oci], manifest.clone()),
                    p if p.ends_with(&format!("/blobs/{layer_digest}")) => Reply::Whole(200, vec![], layer.clone()),
                    _ => json(404, serde_json::json!({"errors": [{"code": "NOT_FOUND", "message": "no"}]})),
                }
            })
        });
        let registry = format!("127.0.0.1:{}", fake.ports[0]);
        // By token: the credentials file (docker's `config.json` shape); Basic: the variables.
        let file = scratch.path().join("auth.json");
        let mut auths = serde_json::Map::new();
        auths.insert("registry.author.example".to_owned(), serde_json::json!({"auth": base64(b"someone:else")}));
        auths.insert(registry.clone(), serde_json::json!({"auth": base64(format!("{USER}:{PASSWORD}").as_bytes())}));
        let auths = serde_json::json!({ "auths": auths });
        std::fs::write(&file, auths.to_string()).unwrap();
        let vars = match by_token {
            true => vec![("MODHOST_REGISTRY_AUTH", file.display().to_string())],
            false => credentials_for(&registry).to_vec(),
        };
        let root = scratch.path().join(if by_token { "by-token" } else { "by-basic" });
        let ran = modhost_with(
            &["install", &format!("{registry}/mods/hello:0.1.0"), "--root", root.to_str().unwrap(), "--yes"],
            "",
            &as_env(&vars),
        );
        assert!(ran.success, "by token: {by_token}\n{ran}\n{:?}", fake.seen());
        assert!(root.join("mods/hello/hello.wasm").is_file(), "{ran}");
    }
}

#[test]
fn a_gigabyte_manifest_or_token_answer_is_refused_before_it_is_read_whole() {
    const GIB: u64 = 1 << 30;
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("root");
    let mut outcomes = Vec::new();
    for what in ["manifest", "token"] {
        let fake = Fake::start(1, |ports| {
            let own = ports[0];
            Box::new(move |_: u16, path: &str, _: Option<&str>| match (what, path) {
                ("token", "/v2/") => challenge(&format!("Bearer realm=\"http://127.0.0.1:{own}/token\"")),
                ("token", p) if p.starts_with("/token") => Reply::Endless(GIB),
                ("manifest", "/v2/") => json(200, serde_json::json!({})),
                ("manifest", p) if p.contains("/manifests/") => Reply::Endless(GIB),
                _ => json(404, serde_json::json!({"errors": [{"code": "NOT_FOUND", "message": "no"}]})),
            })
        });
        let reference = format!("127.0.0.1:{}/mods/big:1.0.0", fake.ports[0]);
        let ran = modhost_with(&["install", &reference, "--root", root.to_str().unwrap(), "--yes"], "", &[]);
        eprintln!("a 1 GiB {what} answer: the CLI peaked at {} MiB", ran.peak_mib);
        outcomes.push((what, ran));
    }
    let peaks: Vec<String> = outcomes.iter().map(|(what, ran)| format!("{what}: {} MiB", ran.peak_mib)).collect();
    assert!(outcomes.iter().all(|(_, ran)| ran.peak_mib < 256), "a 1 GiB answer took the CLI to {peaks:?}");
    for (what, ran) in &outcomes {
        assert_refused(ran, &format!("its {what} answer is over"));
    }
}
