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

use anyhow::{Context as _, anyhow, bail};
use modhost_store::{LockError, MAX_VALUE_BYTES, Store, StoreError, check_key};
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
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Command::List { root, namespace, prefix } => {
            if let Some(ns) = &namespace {
                namespace_ok(ns)?;
            }
            let store = open(&root.root)?;
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
            let store = open(&root.root)?;
            let value = store
                .get(&namespace, &key)
                .with_context(|| format!("reading `{key}` in `{namespace}`"))?
                .ok_or_else(|| no_such_key(&root.root, &namespace, &key))?;
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
            let shown = if file == Path::new("-") { "stdin".to_owned() } else { file.display().to_string() };
            let value = read_value(&file, &shown)?;
            if !raw {
                check_value(&namespace, &key, &value, &shown)?;
            }
            warn_if_unplayable(&namespace, &key);
            let store = open(&root.root)?;
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
            let store = open(&root.root)?;
            if !store.delete(&namespace, &key).with_context(|| format!("deleting `{key}` in `{namespace}`"))? {
                return Err(no_such_key(&root.root, &namespace, &key));
            }
            println!("deleted `{key}` in `{namespace}`");
            Ok(())
        }
        Command::Export { root, namespace, dir } => {
            namespace_ok(&namespace)?;
            let store = open(&root.root)?;
            export(&store, &namespace, &dir)
        }
        Command::Import { root, namespace, dir, raw } => {
            namespace_ok(&namespace)?;
            // Checked before the store is opened: a refused folder needs no stopped server to say so.
            let files = import_plan(&namespace, &dir, raw)?;
            let store = open(&root.root)?;
            import(&store, &namespace, &dir, &files, raw)
        }
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
        Ok(store) => {
            // Quotas hold mods back; the player's own tool is not held to them (an import refused
            // halfway would break its all-or-nothing promise). What it writes still counts.
            let unbounded = modhost_store::Quota { bytes: u64::MAX, keys: u64::MAX };
            store.set_quotas(modhost_store::Quotas { default: unbounded, namespaces: Default::default() });
            Ok(store)
        }
        Err(StoreError::Lock(LockError::Held { holder, .. })) => bail!(
            "a modhost (pid {holder}) holds the store in {}: stop it first, then run this command again \
             (the store has one user at a time, and a running server owns it)",
            dir.display()
        ),
        Err(e) => Err(e).with_context(|| format!("cannot open the store in {}", dir.display())),
    }
}

fn namespace_ok(namespace: &str) -> anyhow::Result<()> {
    check_key(namespace).with_context(|| format!("`{namespace}` cannot be a namespace"))
}

fn names_ok(namespace: &str, key: &str) -> anyhow::Result<()> {
    namespace_ok(namespace)?;
    check_key(key).with_context(|| format!("`{key}` cannot be a key"))
}

fn no_such_key(root: &Path, namespace: &str, key: &str) -> anyhow::Error {
    anyhow!(
        "there is no `{key}` in the namespace `{namespace}` (its keys: modhost store list --root {} {namespace})",
        root.display()
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
