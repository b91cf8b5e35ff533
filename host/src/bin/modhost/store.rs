//! `modhost store`: a player's hands on the durable store of a root while no server runs on it: list
//! namespaces and keys, get, put and delete one value, export a namespace as one file per key and import
//! such a folder back. A value is never reshaped: a file holds exactly the value's bytes.
//!
//! Everything goes through the store engine's API (`modhost_store::Store` on `<root>/store`, opened
//! durable: every write is on the device when the command answers), never through the files underneath,
//! so the commands work on whichever engine the store runs. Opening takes the store's lock: while a
//! server holds the root, every command refuses, naming the server's pid.
//!
//! What a player brings in is checked before anything is written: key names (`[A-Za-z0-9._-]`, no
//! leading dot: refused, never renamed), sizes (the store's cap), and for the emulator's profiles
//! (namespace `emulator`, keys `profile.*`) that the file is a JSON object whose `_id` matches the key,
//! since a profile the game cannot parse or find would be lost to the player (`--raw` skips these checks).
//! An import checks every file first and writes nothing when any is refused.
//!
//! Every command takes `--store-url postgres://…` (or `MODHOST_STORE_URL`, as `serve`) to work on a
//! PostgreSQL store instead of `<root>/store`. `copy --from A --to B` moves a whole store between the
//! engines, either way (a folder is a root's SQLite store, a `postgres://` URL a PostgreSQL one): every
//! namespace and key, values byte for byte, into a destination that holds no key (refused otherwise,
//! before anything is written); then it opens the destination afresh and checks it, re-reading every
//! key on both sides (the same keys, the same bytes). Backups and sessions' leases are not copied.
//! The PostgreSQL engine's synchronous client must not run on a thread that runs an async runtime:
//! these commands run on `main`'s thread, with no runtime.

use anyhow::{Context as _, anyhow, bail};
use modhost_store::{LockError, MAX_VALUE_BYTES, Store, StoreError, check_key};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{ErrorKind, Read as _, Write as _};
use std::path::{Path, PathBuf};

/// The emulator's namespace (its mod id), whose profiles `put` and `import` check.
const EMULATOR: &str = "emulator";
/// The prefix of the emulator's profile keys: `profile.<24 hex digits>`.
const PROFILE: &str = "profile.";

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

/// Where the store is: shared by every subcommand.
#[derive(clap::Args, Debug)]
struct Root {
    /// The server's root directory (as `serve --root`); its store is <root>/store. No server may be
    /// running on it.
    #[arg(long, env = "MODHOST_ROOT", default_value = "modhost-data")]
    root: PathBuf,
    /// A PostgreSQL store (postgres://user:password@host/database, or ?host=/socket/folder), as
    /// `serve --store-url`: the command works on it instead of <root>/store.
    #[arg(long, env = "MODHOST_STORE_URL")]
    store_url: Option<String>,
}

impl Root {
    /// The store the command works on: the PostgreSQL one when a URL is given, else the root's.
    fn at(&self) -> anyhow::Result<At> {
        match self.store_url.as_deref().filter(|url| !url.is_empty()) {
            Some(url) if is_pg_url(url) => Ok(At::Pg(url.to_owned())),
            Some(url) => bail!("--store-url takes a postgres://… URL, not `{}`", redact(url)),
            None => Ok(At::Root(self.root.clone())),
        }
    }
}

/// Where a store is: a root's SQLite store (`<root>/store`) or a PostgreSQL database.
enum At {
    Root(PathBuf),
    Pg(String),
}

impl At {
    /// `copy`'s `--from` and `--to`: a `postgres://` URL, or a root's folder.
    fn parse(arg: &Path) -> anyhow::Result<At> {
        match arg.to_str() {
            Some(url) if is_pg_url(url) => Ok(At::Pg(url.to_owned())),
            Some(other) if other.contains("://") => {
                bail!("`{}` is neither a root's folder nor a postgres://… URL", redact(other))
            }
            _ => Ok(At::Root(arg.to_owned())),
        }
    }

    /// Opens the store; `create` makes a missing root (its parent must exist), for a copy's destination.
    fn open(&self, create: bool) -> anyhow::Result<Store> {
        let store = match self {
            At::Root(root) => {
                if create && !root.exists() {
                    std::fs::create_dir(root).with_context(|| format!("cannot create the root {}", root.display()))?;
                }
                open(root)?
            }
            At::Pg(url) => match modhost_store_pg::connect(url) {
                Ok(store) => store,
                // Its reason already names the server (without a password) and what failed.
                Err(StoreError::Io { reason, .. }) => bail!("cannot open the PostgreSQL store: {reason}"),
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot open the PostgreSQL store at {}", redact(url)));
                }
            },
        };
        // Quotas hold mods back; the player's own tool is not held to them (an import refused
        // halfway would break its all-or-nothing promise). What it writes still counts.
        let unbounded = modhost_store::Quota { bytes: u64::MAX, keys: u64::MAX };
        store.set_quotas(modhost_store::Quotas { default: unbounded, namespaces: Default::default() });
        Ok(store)
    }

    /// The flag that names this store again, for a message's next command.
    fn flag(&self) -> String {
        match self {
            At::Root(root) => format!("--root {}", root.display()),
            At::Pg(url) => format!("--store-url {}", redact(url)),
        }
    }
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Root(root) => write!(f, "the store of the root {}", root.display()),
            At::Pg(url) => write!(f, "the PostgreSQL store at {}", redact(url)),
        }
    }
}

fn is_pg_url(s: &str) -> bool {
    s.starts_with("postgres://") || s.starts_with("postgresql://")
}

/// `url` without the password it may carry (`postgres://user:***@host/db`).
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => match url[scheme + 3..at].split_once(':') {
            Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
            None => url.to_owned(),
        },
        _ => url.to_owned(),
    }
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Print the namespaces that hold keys, or, given a namespace, its keys (one a line, sorted).
    List {
        #[command(flatten)]
        root: Root,
        /// The namespace (a mod's id) whose keys to print.
        namespace: Option<String>,
        /// Only the keys starting with this.
        #[arg(long, requires = "namespace")]
        prefix: Option<String>,
    },
    /// Write one value, exactly its bytes, to FILE (or to stdout without FILE, or with `-`).
    Get {
        #[command(flatten)]
        root: Root,
        /// The namespace (a mod's id).
        namespace: String,
        /// The key.
        key: String,
        /// Where to write it (replaced if it exists).
        file: Option<PathBuf>,
    },
    /// Store FILE's bytes (`-`: stdin) as one value, replacing any old one. An emulator profile
    /// (namespace `emulator`, key `profile.<uid>`) must be a JSON object whose `_id` is the uid.
    Put {
        #[command(flatten)]
        root: Root,
        /// The namespace (a mod's id).
        namespace: String,
        /// The key: 1-180 of A-Z a-z 0-9 . _ - (no leading dot).
        key: String,
        /// The file holding the value; `-` reads stdin.
        file: PathBuf,
        /// Store the bytes without the emulator's profile checks.
        #[arg(long)]
        raw: bool,
    },
    /// Remove one key (its value stays in the store's backups, as any overwritten value does).
    Delete {
        #[command(flatten)]
        root: Root,
        /// The namespace (a mod's id).
        namespace: String,
        /// The key.
        key: String,
    },
    /// Write every key of a namespace into DIR (created if missing) as a file named by the key holding
    /// exactly its value; files of the same names are replaced, other files are left alone.
    Export {
        #[command(flatten)]
        root: Root,
        /// The namespace (a mod's id).
        namespace: String,
        /// The folder to write into.
        dir: PathBuf,
    },
    /// Store each file of DIR under the key its name is (as `export` wrote them), replacing old values;
    /// keys without a file are left alone. Every file is checked first: when any name is not a key or
    /// any file is refused, nothing is written. Hidden files (a leading dot) are skipped.
    Import {
        #[command(flatten)]
        root: Root,
        /// The namespace (a mod's id).
        namespace: String,
        /// The folder to read.
        dir: PathBuf,
        /// Store the bytes without the emulator's profile checks.
        #[arg(long)]
        raw: bool,
    },
    /// Copy a whole store into another that holds no keys, either way between SQLite and PostgreSQL:
    /// every namespace and key, values byte for byte; then check the copy, re-reading every key on
    /// both sides. Refused, writing nothing, when the destination holds any key.
    Copy {
        /// The store to read: a root's folder (its store is <root>/store; no server may run on it) or
        /// a postgres://… URL. It is not changed.
        #[arg(long)]
        from: PathBuf,
        /// The store to write: a root's folder (created if missing; its parent must exist) or a
        /// postgres://… URL.
        #[arg(long)]
        to: PathBuf,
    },
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Command::List { root, namespace, prefix } => {
            if let Some(ns) = &namespace {
                namespace_ok(ns)?;
            }
            let store = root.at()?.open(false)?;
            let names = match &namespace {
                Some(ns) => store
                    .list(ns, prefix.as_deref().unwrap_or(""))
                    .with_context(|| format!("listing the namespace `{ns}`"))?,
                None => store.namespaces().context("listing the namespaces")?,
            };
            let mut out = String::new();
            for name in names {
                out.push_str(&name);
                out.push('\n');
            }
            to_stdout(out.as_bytes())
        }
        Command::Get { root, namespace, key, file } => {
            names_ok(&namespace, &key)?;
            let at = root.at()?;
            let store = at.open(false)?;
            let value = store
                .get(&namespace, &key)
                .with_context(|| format!("reading `{key}` in `{namespace}`"))?
                .ok_or_else(|| no_such_key(&at, &namespace, &key))?;
            match file.as_deref() {
                None => to_stdout(&value),
                Some(path) if path == Path::new("-") => to_stdout(&value),
                Some(path) => {
                    write_file(path, &value)?;
                    println!("wrote `{key}` of `{namespace}` to {} ({} bytes)", path.display(), value.len());
                    Ok(())
                }
            }
        }
        Command::Put { root, namespace, key, file, raw } => {
            names_ok(&namespace, &key)?;
            let at = root.at()?;
            let shown = if file == Path::new("-") { "stdin".to_owned() } else { file.display().to_string() };
            let value = read_value(&file, &shown)?;
            if !raw {
                check_value(&namespace, &key, &value, &shown)?;
            }
            warn_if_unplayable(&namespace, &key);
            let store = at.open(false)?;
            let old =
                store.get(&namespace, &key).with_context(|| format!("reading the old `{key}` in `{namespace}`"))?;
            store.set(&namespace, &key, &value).with_context(|| format!("storing `{key}` in `{namespace}`"))?;
            match old {
                Some(old) => {
                    println!("stored `{key}` in `{namespace}` ({} bytes; it replaced {} bytes)", value.len(), old.len())
                }
                None => println!("stored `{key}` in `{namespace}` ({} bytes; a new key)", value.len()),
            }
            Ok(())
        }
        Command::Delete { root, namespace, key } => {
            names_ok(&namespace, &key)?;
            let at = root.at()?;
            let store = at.open(false)?;
            if !store.delete(&namespace, &key).with_context(|| format!("deleting `{key}` in `{namespace}`"))? {
                return Err(no_such_key(&at, &namespace, &key));
            }
            println!("deleted `{key}` in `{namespace}`");
            Ok(())
        }
        Command::Export { root, namespace, dir } => {
            namespace_ok(&namespace)?;
            let store = root.at()?.open(false)?;
            export(&store, &namespace, &dir)
        }
        Command::Import { root, namespace, dir, raw } => {
            namespace_ok(&namespace)?;
            let at = root.at()?;
            // Checked before the store is opened: a refused folder needs no stopped server to say so.
            let files = import_plan(&namespace, &dir, raw)?;
            let store = at.open(false)?;
            import(&store, &namespace, &dir, &files, raw)
        }
        Command::Copy { from, to } => copy(&At::parse(&from)?, &At::parse(&to)?),
    }
}

/// Opens `<root>/store` (durable), turning the lock's refusal into what to do about it.
fn open(root: &Path) -> anyhow::Result<Store> {
    match std::fs::metadata(root) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => bail!("{} is not a directory: --root names a modhost root (as `serve --root`)", root.display()),
        Err(e) if e.kind() == ErrorKind::NotFound => bail!(
            "there is no modhost root at {}: --root names the folder `modhost serve --root` uses \
             (holding db.json, mods/ and store/)",
            root.display()
        ),
        Err(e) => return Err(e).with_context(|| format!("cannot read the root {}", root.display())),
    }
    let dir = root.join("store");
    match Store::open(&dir, true) {
        Ok(store) => Ok(store),
        Err(StoreError::Lock(LockError::Held { holder, .. })) => bail!(
            "a modhost (pid {holder}) holds the store in {}: stop it first, then run this command again \
             (the store has one user at a time, and a running server owns it)",
            dir.display()
        ),
        Err(e) => Err(e).with_context(|| format!("cannot open the store in {}", dir.display())),
    }
}

/// Every namespace of a store with its keys, sorted.
type Inventory = BTreeMap<String, Vec<String>>;

fn inventory(store: &Store, at: &At) -> anyhow::Result<Inventory> {
    let mut all = Inventory::new();
    for ns in store.namespaces().with_context(|| format!("listing the namespaces of {at}"))? {
        let keys = store.list(&ns, "").with_context(|| format!("listing the namespace `{ns}` of {at}"))?;
        all.insert(ns, keys);
    }
    Ok(all)
}

fn key_count(inventory: &Inventory) -> usize {
    inventory.values().map(Vec::len).sum()
}

/// At most `n` of a store's keys, as `namespace/key`, for a message.
fn some_keys(inventory: &Inventory, n: usize) -> String {
    let shown: Vec<String> =
        inventory.iter().flat_map(|(ns, keys)| keys.iter().map(move |key| format!("`{ns}/{key}`"))).take(n).collect();
    let more = if key_count(inventory) > n { ", …" } else { "" };
    format!("{}{more}", shown.join(", "))
}

/// `n` things, as a person writes it: `1 key`, `2 keys`.
fn count(n: usize, thing: &str) -> String {
    if n == 1 { format!("1 {thing}") } else { format!("{n} {thing}s") }
}

/// `copy`: every key of `from` into `to` (which must hold none), then the check.
fn copy(from: &At, to: &At) -> anyhow::Result<()> {
    let same = match (from, to) {
        (At::Pg(a), At::Pg(b)) => a == b,
        (At::Root(a), At::Root(b)) => {
            a == b || std::fs::canonicalize(a).ok().is_some_and(|a| std::fs::canonicalize(b).is_ok_and(|b| a == b))
        }
        _ => false,
    };
    if same {
        bail!("--from and --to are the same store ({from}): copy into another root or database");
    }
    let source = from.open(false)?;
    let plan = inventory(&source, from)?;
    let total = key_count(&plan);
    if total == 0 {
        bail!("{from} holds no keys: nothing to copy (is it the right {}?)", from.flag());
    }
    let destination = to.open(true)?;
    let held = inventory(&destination, to)?;
    if !held.is_empty() {
        bail!(
            "{to} already holds {} ({}): a copy goes only into a store without keys, so nothing was \
             written; use a fresh root or database, or delete its keys first",
            count(key_count(&held), "key"),
            some_keys(&held, 5)
        );
    }
    let mut copied = 0;
    for (ns, keys) in &plan {
        for key in keys {
            let result = (|| {
                let value = source
                    .get(ns, key)
                    .with_context(|| format!("reading it from {from}"))?
                    .ok_or_else(|| anyhow!("it was deleted from {from} while the store was being copied"))?;
                destination.set(ns, key, &value).with_context(|| format!("writing it to {to}"))?;
                anyhow::Ok(())
            })();
            if let Err(e) = result {
                bail!(
                    "copying `{key}` of `{ns}` failed, so the copy stopped: {e:#}\n{copied} of the {total} keys were \
                     copied before it: {to} now holds only part of the store; empty it (or use a fresh one) before \
                     copying again. {from} is unchanged."
                );
            }
            copied += 1;
        }
        println!("copied `{ns}` ({})", count(keys.len(), "key"));
    }
    // Checked through a fresh open: what the destination stored, not what this process remembers of it.
    drop(destination);
    let destination = to.open(false)?;
    check(&source, from, &destination, to, &plan)?;
    println!(
        "copied {} in {}, checked (every key reads back the same bytes)",
        count(total, "key"),
        count(plan.len(), "namespace")
    );
    Ok(())
}

/// `copy`'s check: both stores hold exactly the keys copied, and each key the same bytes on both sides.
fn check(source: &Store, from: &At, destination: &Store, to: &At, plan: &Inventory) -> anyhow::Result<()> {
    let mut wrong = Vec::new();
    for (at, store) in [(from, source), (to, destination)] {
        let now = inventory(store, at)?;
        if now != *plan {
            wrong.push(format!(
                "  {at} holds {} in {}, where {} in {} were copied",
                count(key_count(&now), "key"),
                count(now.len(), "namespace"),
                count(key_count(plan), "key"),
                count(plan.len(), "namespace")
            ));
        }
    }
    for (ns, keys) in plan {
        for key in keys {
            let read = |store: &Store, at: &At| {
                store.get(ns, key).with_context(|| format!("the check could not read `{key}` of `{ns}` in {at}"))
            };
            match (read(source, from)?, read(destination, to)?) {
                (Some(a), Some(b)) if a == b => {}
                (Some(a), Some(b)) => wrong.push(format!(
                    "  `{ns}/{key}`: {} bytes in {from}, {} different bytes in {to}",
                    a.len(),
                    b.len()
                )),
                (a, b) => wrong.push(format!(
                    "  `{ns}/{key}`: {} in {from}, {} in {to}",
                    if a.is_some() { "present" } else { "missing" },
                    if b.is_some() { "present" } else { "missing" }
                )),
            }
        }
    }
    if !wrong.is_empty() {
        let shown = wrong.len().min(20);
        bail!(
            "the copy failed its check: {to} does not read back what {from} holds ({}{}):\n{}",
            count(wrong.len(), "difference"),
            if shown < wrong.len() { ", the first 20" } else { "" },
            wrong[..shown].join("\n")
        );
    }
    Ok(())
}

fn namespace_ok(namespace: &str) -> anyhow::Result<()> {
    check_key(namespace).with_context(|| format!("`{namespace}` cannot be a namespace"))
}

fn names_ok(namespace: &str, key: &str) -> anyhow::Result<()> {
    namespace_ok(namespace)?;
    check_key(key).with_context(|| format!("`{key}` cannot be a key"))
}

fn no_such_key(at: &At, namespace: &str, key: &str) -> anyhow::Error {
    anyhow!(
        "there is no `{key}` in the namespace `{namespace}` (its keys: modhost store list {} {namespace})",
        at.flag()
    )
}

/// Writes to stdout; a reader that stopped early (`| head`) is not an error.
fn to_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(e).context("writing to stdout"),
        _ => Ok(()),
    }
}

/// Reads a value a player brings in: a file, or stdin for `-`, refused past the store's cap before
/// it is read whole.
fn read_value(file: &Path, shown: &str) -> anyhow::Result<Vec<u8>> {
    let too_large = |len: u64| {
        anyhow!(
            "{shown} is {len} bytes; a stored value may be at most {MAX_VALUE_BYTES} bytes ({} MiB)",
            MAX_VALUE_BYTES >> 20
        )
    };
    let cap = MAX_VALUE_BYTES as u64;
    let mut value = Vec::new();
    if file == Path::new("-") {
        std::io::stdin().lock().take(cap + 1).read_to_end(&mut value).context("reading stdin")?;
    } else {
        let meta = std::fs::metadata(file).with_context(|| format!("cannot read {shown}"))?;
        if meta.is_dir() {
            bail!("{shown} is a folder, not a file");
        }
        if meta.len() > cap {
            return Err(too_large(meta.len()));
        }
        let f = std::fs::File::open(file).with_context(|| format!("cannot read {shown}"))?;
        // `take`: a file that grew since its size was read is still read only to the cap.
        f.take(cap + 1).read_to_end(&mut value).with_context(|| format!("cannot read {shown}"))?;
    }
    if value.len() as u64 > cap {
        return Err(too_large(value.len() as u64));
    }
    Ok(value)
}

/// The emulator's profiles, checked as the game will read them: a `profile.*` value is a JSON object
/// (the emulator parses it, and one it cannot parse breaks its launcher's list of profiles), and under
/// `profile.<uid>` its `_id`, if any, is that uid (the game finds a profile by its `_id`). Other values
/// are not looked at.
fn check_value(namespace: &str, key: &str, value: &[u8], shown: &str) -> anyhow::Result<()> {
    let Some(uid) = key.strip_prefix(PROFILE).filter(|_| namespace == EMULATOR) else {
        return Ok(());
    };
    let skip = "or pass --raw to store it as it is";
    if value.starts_with(b"\xEF\xBB\xBF") {
        bail!(
            "{shown} starts with a UTF-8 byte order mark, which JSON does not allow and the emulator cannot \
             read: save it as UTF-8 without one, {skip}"
        );
    }
    let doc: serde_json::Value = serde_json::from_slice(value).map_err(|e| {
        anyhow!("{shown} is not JSON ({e}): the emulator reads its profiles as JSON and could not load it; fix the file, {skip}")
    })?;
    let Some(object) = doc.as_object() else {
        bail!("{shown} is JSON but not an object: a profile is an object (as `profile/list` answers it); {skip}");
    };
    if is_uid(uid) {
        match object.get("_id") {
            Some(serde_json::Value::String(id)) if id == uid => {}
            Some(serde_json::Value::String(id)) if is_uid(id) => bail!(
                "{shown} is the profile `{id}` (its `_id`), but the key is for `{uid}`: the game looks a profile \
                 up by its `_id`, so put it as `{PROFILE}{id}`, {skip}"
            ),
            Some(other) => bail!(
                "{shown} has the `_id` {other}, but the key is for `{uid}`: the game looks a profile up by its \
                 `_id`; set it to \"{uid}\", {skip}"
            ),
            None => {}
        }
    }
    Ok(())
}

/// Says so when `key` looks like an emulator profile the game will never select (printed once per key).
fn warn_if_unplayable(namespace: &str, key: &str) {
    if namespace == EMULATOR && key.strip_prefix(PROFILE).is_some_and(|uid| !is_uid(uid)) {
        eprintln!(
            "warning: the emulator plays only profiles under `{PROFILE}<24 hex digits>`: it will never \
             select `{key}`"
        );
    }
}

/// 24 hex digits: every profile id the game makes.
fn is_uid(id: &str) -> bool {
    id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Writes a file whole or not at all: a temp beside it (a hidden name, never a key), then a rename.
fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let name = path.file_name().with_context(|| format!("{} does not name a file", path.display()))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".modhost-{}.tmp", std::process::id()));
    let temp = path.with_file_name(temp_name);
    let result = std::fs::write(&temp, bytes).and_then(|()| std::fs::rename(&temp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}

fn export(store: &Store, namespace: &str, dir: &Path) -> anyhow::Result<()> {
    let keys = store.list(namespace, "").with_context(|| format!("listing the namespace `{namespace}`"))?;
    if keys.is_empty() {
        eprintln!(
            "the namespace `{namespace}` holds no keys: nothing exported (`modhost store list` shows the \
             namespaces that do)"
        );
        return Ok(());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create the folder {}", dir.display()))?;
    // Every key is tried, so a backup holds all that can be read; the failures are named at the end.
    let mut failed = Vec::new();
    let mut exported = 0;
    for key in &keys {
        let result = store
            .get(namespace, key)
            .map_err(anyhow::Error::from)
            .and_then(|value| value.ok_or_else(|| anyhow!("it was deleted while the namespace was being exported")))
            .and_then(|value| write_file(&dir.join(key), &value).map(|()| value.len()));
        match result {
            Ok(len) => {
                exported += 1;
                println!("exported `{key}` ({len} bytes)");
            }
            Err(e) => failed.push(format!("  `{key}`: {e:#}")),
        }
    }
    if !failed.is_empty() {
        bail!(
            "{} of the {} keys of `{namespace}` could not be exported to {}:\n{}",
            failed.len(),
            keys.len(),
            dir.display(),
            failed.join("\n")
        );
    }
    println!("exported {exported} keys of `{namespace}` to {}", dir.display());
    Ok(())
}

/// The keys a folder's files are to be stored under, each file checked (name, kind, size, and the
/// profile checks unless `raw`), sorted. Any refused file refuses the whole import, naming every one.
fn import_plan(namespace: &str, dir: &Path, raw: bool) -> anyhow::Result<Vec<String>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read the folder {}", dir.display()))?;
    let mut keys = Vec::new();
    let mut refused = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read the folder {}", dir.display()))?;
        let os_name = entry.file_name();
        let Some(name) = os_name.to_str() else {
            refused.push(format!("  {}: the name is not UTF-8, so it cannot be a key", os_name.to_string_lossy()));
            continue;
        };
        if name.starts_with('.') {
            eprintln!("skipped {name}: a hidden file is never a key");
            continue;
        }
        if let Err(e) = check_key(name) {
            refused.push(format!("  {name}: the name is not a key ({e}); rename the file or move it out"));
            continue;
        }
        match load_file(namespace, name, &entry.path(), raw) {
            Ok(_) => {
                warn_if_unplayable(namespace, name);
                keys.push(name.to_owned());
            }
            Err(e) => refused.push(format!("  {name}: {e:#}")),
        }
    }
    if !refused.is_empty() {
        refused.sort();
        bail!(
            "nothing was imported: {} of the files in {} cannot be imported:\n{}",
            refused.len(),
            dir.display(),
            refused.join("\n")
        );
    }
    if keys.is_empty() {
        bail!("{} holds no files to import", dir.display());
    }
    keys.sort();
    Ok(keys)
}

/// Reads one file of an import and checks it as `put` does.
fn load_file(namespace: &str, key: &str, path: &Path, raw: bool) -> anyhow::Result<Vec<u8>> {
    // `metadata` follows a symlink: a link to a file imports the file.
    let meta = std::fs::metadata(path).context("cannot read it")?;
    if !meta.is_file() {
        bail!("not a regular file");
    }
    let value = read_value(path, "the file")?;
    if !raw {
        check_value(namespace, key, &value, "the file")?;
    }
    Ok(value)
}

fn import(store: &Store, namespace: &str, dir: &Path, keys: &[String], raw: bool) -> anyhow::Result<()> {
    let (mut stored, mut unchanged) = (0, 0);
    for (n, key) in keys.iter().enumerate() {
        let result = (|| {
            // Read again (the plan kept no values, so a large folder is never held whole) and checked again.
            let value = load_file(namespace, key, &dir.join(key), raw)?;
            let old = store.get(namespace, key)?;
            if old.as_deref() == Some(&value[..]) {
                return Ok(None);
            }
            store.set(namespace, key, &value)?;
            anyhow::Ok(Some(value.len()))
        })();
        match result {
            Ok(Some(len)) => {
                stored += 1;
                println!("imported `{key}` ({len} bytes)");
            }
            Ok(None) => {
                unchanged += 1;
                println!("unchanged `{key}`");
            }
            Err(e) => {
                let rest = &keys[n + 1..];
                bail!(
                    "importing `{key}` failed, so the import stopped: {e:#}\n{stored} keys were imported before it; \
                     not imported: `{key}`{}",
                    rest.iter().map(|k| format!(", `{k}`")).collect::<String>()
                );
            }
        }
    }
    println!("imported {stored} keys into `{namespace}` from {} ({unchanged} unchanged)", dir.display());
    Ok(())
}
