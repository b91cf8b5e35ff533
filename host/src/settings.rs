//! The server's settings: [`ServerSettings`], everything a running server needs to know, validated,
//! with no I/O. `modhost serve` (`bin/modhost/serve.rs`) builds them from the command line; tests
//! build them directly. The player's `modhost.toml` ([`PlayerFile`]) is applied over them, checked
//! once, with typed errors. The limits are three structs: [`EngineLimits`] (the wasm engine and its
//! pool), [`FrontLimits`] (the HTTP front) and [`ModLimits`] (one mod's, what `[limits]` and
//! `[mods.<id>]` set).
//!
//! Not a mod's configuration: that is the player's settings for one mod (`config.json` over the
//! mod's defaults, `modhost_mods::config`), which the mod reads through the WIT `config` interface
//! (`sandbox/config.rs`) and the status page edits (`config_edit.rs`). Here "config" appears only in
//! names the public API already had (`App::config`, the test harness's `config(..)`).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The server's settings.
#[derive(Clone, Debug)]
pub struct ServerSettings {
    /// Where to listen. The default is 127.0.0.1:6969 (the SPT client's port); port 0 picks a free one.
    pub addr: SocketAddr,
    /// The root directory: `db.json`, `mods/`, `store/`, `cache/`. Created if missing.
    pub root: PathBuf,
    /// fsync each store commit (temp file and directory): survives power loss, costs a few ms a write.
    pub store_durable: bool,
    /// A PostgreSQL store shared by several hosts (`postgres://…`, `--store-url` or `[store] url`)
    /// instead of the SQLite one in `<root>/store`.
    pub store_url: Option<String>,
    /// With a shared store: how long a session's lease lasts (`--session-lease-ms`); `None`: twice the
    /// call deadline, at least 10 s. A host that dies or freezes keeps its sessions this long.
    pub session_lease: Option<Duration>,
    /// How long a request waits for its session's lock before it is answered 503.
    pub session_lock_timeout: Duration,
    /// Refuse to start when any mod fails to load, instead of starting without it.
    pub strict: bool,
    /// How long a request that arrives while the mods load waits before it is answered 503.
    pub boot_wait: Duration,
    /// Time every request's phases and write the table to `<root>/perf.txt` each second (`--perf`).
    pub perf: bool,
    /// Open the store in a throwaway directory instead of `<root>/store`: for `modhost mods` and
    /// `modhost check`, which must neither touch nor lock the player's profiles.
    pub scratch_store: bool,
    /// Whether to load the mods embedded in the binary (tests turn this off to load only fixtures).
    pub builtin_mods: bool,
    /// Reload when a mod's files or `db.json` change (`--watch`).
    pub watch: bool,
    /// What the wasm engine and its instance pool are built with, once, at boot.
    pub engine: EngineLimits,
    /// The HTTP front's size caps.
    pub front: FrontLimits,
    /// Every mod's limits (`[limits]` in `<root>/modhost.toml` applies over them).
    pub limits: ModLimits,
    /// Deadlines of the HTTP front.
    pub http: HttpDeadlines,
    /// The limits of the mods the player set apart (`[mods.<id>]` in `<root>/modhost.toml`), checked
    /// and applied over [`ServerSettings::limits`] when the file was taken.
    pub per_mod: BTreeMap<String, ModLimits>,
    /// Host names served besides loopback ones and `localhost` (`[http] allowed_hosts` in
    /// `<root>/modhost.toml`), normalised (lower case, no IPv6 brackets). Any other `Host` is answered
    /// 421, so a web page that rebinds its name to this machine reaches nothing.
    pub allowed_hosts: Vec<String>,
    /// The notifier's and mods' sockets' bounds and times.
    pub realtime: crate::realtime::RealtimeLimits,
    /// Connections open at once, websockets included: at most this, and fewer under a low open-file
    /// limit (`nofile.rs`). The next one is closed at once.
    pub max_connections: usize,
}

/// Limits the player sets in `<root>/modhost.toml`: `[limits]` for every mod, `[mods.<id>]` for one.
/// A mod's own `mod.toml` cannot hold limits, so a mod cannot raise its own.
///
/// ```toml
/// [limits]
/// call_timeout_ms = 2000
///
/// [mods.untrusted-thing]
/// memory_mib = 32
/// instances = 4
/// ```
#[derive(Clone, Debug, Default, serde::Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LimitOverrides {
    /// Linear memory per instance, MiB (at most the server's `--mod-memory-mib`, the pool's slot size;
    /// under `[limits]` it is the pool's slot size too).
    pub memory_mib: Option<usize>,
    /// Deadline of one request's call, ms.
    pub call_timeout_ms: Option<u64>,
    /// Deadline of `routes` and of `init`, ms.
    pub init_timeout_ms: Option<u64>,
    /// Bytes one host call may copy out of the guest, MiB.
    pub hostcall_mib: Option<usize>,
    /// The largest answer, MiB.
    pub response_mib: Option<usize>,
    /// Instances alive at once (at most `--max-instances`).
    pub instances: Option<u32>,
    /// Table elements per instance (under `[limits]`, the pool's cap on a table too).
    pub table_elements: Option<usize>,
    /// Strikes of one cause within the window before quarantine (0: never).
    pub quarantine_after: Option<u32>,
    /// The server-wide budget of guest linear memory, MiB (`[limits]` only: it is one for all mods;
    /// read at boot). Default: a quarter of the machine's memory or of the cgroup's limit.
    pub guest_memory_mib: Option<usize>,
    /// Bytes the mod's store namespace may hold, MiB (values and pending document patches).
    pub store_mib: Option<u64>,
    /// Keys the mod's store namespace may hold.
    pub store_keys: Option<u64>,
    /// The largest `db.patch` document, MiB.
    pub db_patch_mib: Option<usize>,
    /// Bytes of pushed messages the mod may have queued for sessions without a socket, MiB: its share
    /// of the notifier's queues.
    pub push_queue_mib: Option<usize>,
    /// Its timers firing at once: its share of the scheduler's firings.
    pub timer_firings: Option<u32>,
    /// Cores' worth its calls that run longer than an epoch tick get between them.
    pub cpu_share: Option<u32>,
    /// What a failing hook of this mod does to the request: `"skip"` (the default: the hook is
    /// logged and passed over, so a broken add-on cannot take the game down) or `"fail"` (the
    /// request fails, naming the hook's mod).
    pub hook_errors: Option<HookErrors>,
}

/// What a failing hook does to its request (`hook_errors` in `modhost.toml`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HookErrors {
    /// Log it, count it, go on as if the hook had not been there.
    #[default]
    Skip,
    /// Fail the request with the hook's failure.
    Fail,
}

/// The player's `<root>/modhost.toml`.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayerFile {
    /// For every mod.
    #[serde(default)]
    pub limits: LimitOverrides,
    /// For one mod each, by id.
    #[serde(default)]
    pub mods: BTreeMap<modhost_mods::ModId, LimitOverrides>,
    /// The HTTP front.
    #[serde(default)]
    pub http: HttpOverrides,
    /// Where the store is.
    #[serde(default)]
    pub store: StoreOverrides,
}

/// `[store]` in `modhost.toml`: where the store is. Read at start (a restart applies it).
///
/// ```toml
/// [store]
/// url = "postgres://modhost:secret@db.lan/world"
/// ```
#[derive(Clone, Debug, Default, serde::Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct StoreOverrides {
    /// A PostgreSQL store shared by several hosts, instead of the SQLite one in `<root>/store`. The
    /// `--store-url` flag wins over it.
    pub url: Option<String>,
}

/// `[http]` in `modhost.toml`: what the HTTP front serves. Read at start (a restart applies it).
///
/// ```toml
/// [http]
/// allowed_hosts = ["gamebox.lan", "192.168.1.5"]
/// ```
#[derive(Clone, Debug, Default, serde::Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HttpOverrides {
    /// Names (or IP addresses) a request's `Host` may carry besides loopback ones and `localhost`,
    /// with any port: for a server the player reaches under another name.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
}

/// A limit in `modhost.toml` out of its range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key} = {value}: must be {range}")]
pub struct LimitError {
    /// The key, as the player writes it.
    pub key: &'static str,
    /// The value the player wrote.
    pub value: u64,
    /// The range it must be in, and what sets the range.
    pub range: String,
}

/// Why the player's `modhost.toml` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlayerFileError {
    /// Not TOML, or a key that does not exist (a misspelt limit is an error, never ignored).
    #[error("modhost.toml: {0}")]
    Syntax(String),
    /// A server-wide key in a `[mods.<id>]` table.
    #[error("[{table}] {key} is server-wide: set it under [limits]")]
    ServerWide {
        /// `mods.<id>`.
        table: String,
        /// The key.
        key: &'static str,
    },
    /// An `[http] allowed_hosts` entry that is not a host.
    #[error("[http] allowed_hosts: `{0}` is not a host name or IP address (write it without port or path)")]
    Host(String),
    /// A limit out of its range, in table `[limits]` or `[mods.<id>]`.
    #[error("[{table}] {error}")]
    Limit {
        /// `limits` or `mods.<id>`.
        table: String,
        /// Which limit, and its range.
        error: LimitError,
    },
}

/// The largest `hostcall_mib`: a host call copying more than this is a bug or an attack.
const MAX_HOSTCALL_MIB: u64 = 1024;
/// The largest `response_mib`.
const MAX_RESPONSE_MIB: u64 = 4096;
/// The largest `guest_memory_mib` (16 TiB): beyond any machine this runs on.
const MAX_GUEST_MEMORY_MIB: u64 = 1 << 24;

/// `value` MiB in bytes, when it is within `1..=max_mib`; checked, so a huge value is an error naming
/// `key`, never a wrapped shift that comes out as 0 and passes.
fn mib_bytes(key: &'static str, value: usize, max_mib: u64, what_sets_max: &str) -> Result<usize, LimitError> {
    let value64 = u64::try_from(value).unwrap_or(u64::MAX);
    let bytes = (1..=max_mib).contains(&value64).then(|| value.checked_mul(1 << 20)).flatten();
    bytes.ok_or_else(|| LimitError { key, value: value64, range: format!("1 to {max_mib}{what_sets_max}") })
}

impl LimitOverrides {
    /// A mod's `limits` with these overrides, checked against what the engine is built for (`pool`).
    /// `guest_memory_mib` is the engine's, not a mod's: [`ServerSettings::apply_player_file`] takes it.
    pub fn apply(&self, limits: &ModLimits, pool: &EngineLimits) -> Result<ModLimits, LimitError> {
        let mut out = limits.clone();
        if let Some(mib) = self.memory_mib {
            out.memory_bytes = mib_bytes("memory_mib", mib, (pool.memory_bytes >> 20) as u64, " (--mod-memory-mib)")?;
        }
        if let Some(n) = self.instances {
            if n == 0 || n > pool.max_instances {
                let range = format!("1 to {} (--max-instances)", pool.max_instances);
                return Err(LimitError { key: "instances", value: n.into(), range });
            }
            out.mod_instances = n;
        }
        let positive = |key: &'static str, value: u64| match value {
            0 => Err(LimitError { key, value, range: "at least 1".to_owned() }),
            _ => Ok(value),
        };
        if let Some(ms) = self.call_timeout_ms {
            out.call_deadline = Duration::from_millis(positive("call_timeout_ms", ms)?);
        }
        if let Some(ms) = self.init_timeout_ms {
            out.init_deadline = Duration::from_millis(positive("init_timeout_ms", ms)?);
        }
        if let Some(mib) = self.hostcall_mib {
            out.hostcall_bytes = mib_bytes("hostcall_mib", mib, MAX_HOSTCALL_MIB, "")?;
        }
        if let Some(mib) = self.response_mib {
            out.response_bytes = mib_bytes("response_mib", mib, MAX_RESPONSE_MIB, "")?;
        }
        if let Some(n) = self.table_elements {
            if n > pool.table_elements {
                let range = format!("at most {}", pool.table_elements);
                return Err(LimitError { key: "table_elements", value: n as u64, range });
            }
            out.table_elements = n;
        }
        if let Some(n) = self.quarantine_after {
            out.quarantine_after = n;
        }
        if let Some(n) = self.store_mib {
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            out.store_quota.bytes = mib_bytes("store_mib", n, MAX_STORE_MIB, "")? as u64;
        }
        if let Some(n) = self.store_keys {
            out.store_quota.keys = positive("store_keys", n)?;
        }
        if let Some(n) = self.db_patch_mib {
            out.db_patch_bytes = mib_bytes("db_patch_mib", n, MAX_DB_PATCH_MIB, "")?;
        }
        if let Some(policy) = self.hook_errors {
            out.hook_errors = policy;
        }
        if let Some(n) = self.push_queue_mib {
            out.push_queue_bytes = mib_bytes("push_queue_mib", n, MAX_PUSH_QUEUE_MIB, "")?;
        }
        if let Some(n) = self.timer_firings {
            if n == 0 || n > MAX_TIMER_FIRINGS {
                let range = format!("1 to {MAX_TIMER_FIRINGS}");
                return Err(LimitError { key: "timer_firings", value: n.into(), range });
            }
            out.timer_firings = n;
        }
        if let Some(n) = self.cpu_share {
            if n == 0 || n > MAX_CPU_SHARE {
                let range = format!("1 to {MAX_CPU_SHARE}");
                return Err(LimitError { key: "cpu_share", value: n.into(), range });
            }
            out.cpu_share = n;
        }
        Ok(out)
    }
}

/// `guest_memory_mib` in bytes, checked: at least one instance of `memory_bytes` must fit.
fn guest_memory_bytes(mib: usize, memory_bytes: usize) -> Result<usize, LimitError> {
    let bytes = mib_bytes("guest_memory_mib", mib, MAX_GUEST_MEMORY_MIB, "")?;
    if bytes < memory_bytes {
        let range = format!("at least memory_mib ({}): one instance must fit", memory_bytes >> 20);
        return Err(LimitError { key: "guest_memory_mib", value: mib as u64, range });
    }
    Ok(bytes)
}

impl PlayerFile {
    /// Parses `modhost.toml` text; unknown keys are errors, so a misspelt limit is never ignored.
    pub fn parse(text: &str) -> Result<PlayerFile, PlayerFileError> {
        toml::from_str(text).map_err(|e| PlayerFileError::Syntax(e.to_string()))
    }
}

/// The HTTP front's deadlines: what a slow or silent client may cost.
#[derive(Clone, Copy, Debug)]
pub struct HttpDeadlines {
    /// A kept-alive connection's wait for its next request's first byte.
    pub idle: std::time::Duration,
    /// From a request's first byte to its complete head (then 408 and close).
    pub head: std::time::Duration,
    /// From the head to the complete body (then 408 and close).
    pub body: std::time::Duration,
    /// The longest an answer may go without the client reading any of it (then close).
    pub write_stall: std::time::Duration,
}

impl Default for HttpDeadlines {
    fn default() -> Self {
        HttpDeadlines {
            idle: Duration::from_secs(5),
            head: Duration::from_secs(3),
            body: Duration::from_secs(5),
            write_stall: Duration::from_secs(10),
        }
    }
}

/// What the wasm engine and its instance pool are built with (`sandbox/engine.rs`), once, at boot:
/// engine-wide, so no mod has its own. With [`ModLimits`] (each mod's) and [`FrontLimits`] (the
/// HTTP front's), on by default: a mod cannot crash, stall or starve the server.
#[derive(Clone, Copy, Debug)]
pub struct EngineLimits {
    /// Linear memory one pool slot holds, in bytes: the most any mod's `memory_bytes` may be.
    pub memory_bytes: usize,
    /// The pool's cap on one table's elements: the most any mod's `table_elements` may be.
    pub table_elements: usize,
    /// Instances alive at once across all mods: the size of the pooling allocator, and so the number
    /// of requests that can be inside mods at the same time (the rest wait for a slot).
    pub max_instances: u32,
    /// Native stack a guest may use, in bytes; deeper recursion traps.
    pub wasm_stack_bytes: usize,
    /// The epoch tick: a looping guest is stopped within its deadline plus one tick, and yields to
    /// other requests at every tick.
    pub epoch_tick: Duration,
    /// Whether the deadlines, memory and table caps and the host-call copy cap are enforced at all.
    /// Only `--no-limits` turns this off, to measure what they cost; never with untrusted mods.
    pub enforce: bool,
    /// The server-wide budget of guest linear memory across all instances, in bytes; `None` sizes it
    /// from the machine at boot (`sandbox/budget.rs`).
    pub guest_memory_bytes: Option<usize>,
    /// How long a memory growth waits for room in the budget before the call is answered 503.
    pub memory_wait: Duration,
    /// One of the engine's speed levers turned the other way, to measure what it is worth
    /// (`modhost serve --engine-lever`, `route-cost --levers`); `None` in service.
    pub lever: Option<EngineLever>,
    /// Whether guests' compiled code is named in `/tmp/perf-<pid>.map` (wasmtime's perf map), so
    /// `perf report` names each guest function instead of an address: `modhost serve --perfmap`, for
    /// profiling mods. Off in service (the map grows with every module compiled or loaded).
    pub perfmap: bool,
}

/// One lever of the engine's instance allocation, turned against the default ([`EngineLimits::lever`]).
/// Each exists to measure what the default's choice saves (`sandbox/engine.rs`, docs/architecture.md
/// "What wasmtime costs"); none changes what a mod may do or see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineLever {
    /// No pool: each instance's memories, tables and stack are mapped on demand and unmapped after.
    OnDemand,
    /// The pool's memories and tables are not kept resident: a slot is reset by unmapping (`madvise`)
    /// its pages, and the next instance faults them back in.
    NoKeepResident,
    /// The pool's reset does not ask the kernel which pages were written (`PAGEMAP_SCAN`): it resets
    /// every page kept resident.
    NoPagemapScan,
    /// Linear memory is not initialised copy-on-write from the module's image: each instance copies
    /// its data segments.
    NoCow,
}

impl EngineLever {
    /// Every lever, with the name `--engine-lever` takes.
    pub const ALL: [(&'static str, EngineLever); 4] = [
        ("on-demand", EngineLever::OnDemand),
        ("no-keep-resident", EngineLever::NoKeepResident),
        ("no-pagemap-scan", EngineLever::NoPagemapScan),
        ("no-cow", EngineLever::NoCow),
    ];

    /// The lever named `name`, or an error listing the names.
    pub fn named(name: &str) -> Result<EngineLever, String> {
        let names: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
        Self::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, lever)| *lever)
            .ok_or_else(|| format!("no engine lever `{name}`; the levers are {}", names.join(", ")))
    }
}

/// The HTTP front's size caps, one for the whole server.
#[derive(Clone, Copy, Debug)]
pub struct FrontLimits {
    /// The largest request body accepted (compressed, and again inflated), and the largest body a
    /// before-hook may give the route's owner in its place.
    pub body_bytes: usize,
    /// Compressed answers kept for reuse, in bytes.
    pub body_cache_bytes: usize,
}

/// What one mod runs under: every mod's in [`ServerSettings::limits`] (`[limits]` in `modhost.toml`), one
/// mod's in [`ServerSettings::per_mod`] (`[mods.<id>]`), within what the engine was built for
/// ([`EngineLimits`]). The ones a call reads from its mod's `LoadedMod`.
#[derive(Clone, Debug)]
pub struct ModLimits {
    /// Linear memory one instance may grow to, in bytes (at most [`EngineLimits::memory_bytes`]).
    pub memory_bytes: usize,
    /// How long one `handle` call may run before it is stopped and answered 500.
    pub call_deadline: Duration,
    /// How long each of `routes` and `init` may run at load.
    pub init_deadline: Duration,
    /// How many bytes one host call may copy out of the guest (strings and lists it passes in).
    pub hostcall_bytes: usize,
    /// Table elements one instance may grow to (at most [`EngineLimits::table_elements`]).
    pub table_elements: usize,
    /// stdout plus stderr kept per call; the rest is dropped.
    pub output_bytes: usize,
    /// The largest answer the mod may produce, db references spliced in.
    pub response_bytes: usize,
    /// Instances the mod may have alive at once (its share of [`EngineLimits::max_instances`]): a mod
    /// whose calls hang cannot take every slot from the others.
    pub mod_instances: u32,
    /// Strikes of one cause (trap, memory, deadline, instantiation) within `quarantine_window`, with
    /// no success of the mod in that window, before it is quarantined (its routes answer 503 with the
    /// reason until it is loaded again); 0 never quarantines. What is a strike: `docs/architecture.md`.
    pub quarantine_after: u32,
    /// How long a strike counts, and how long a success keeps traps and deadlines from striking.
    pub quarantine_window: Duration,
    /// What the mod's store namespace may hold (bytes of values and pending patches, keys); its
    /// timers' namespace is held to the same, apart, and so are the backups of each.
    pub store_quota: modhost_store::Quota,
    /// The largest document one `db.patch` may carry: validating and merging cost its size, inside
    /// one call that its deadline cannot stop.
    pub db_patch_bytes: usize,
    /// What a failing hook of the mod does to the request.
    pub hook_errors: HookErrors,
    /// Bytes of pushed messages the mod may have queued for sessions without a socket (its share of
    /// the notifier's queues, within `RealtimeLimits::queue_total_bytes`): past it a push that must
    /// be queued is refused, so a mod pushing to sessions it made up fills only its own share.
    pub push_queue_bytes: usize,
    /// Its timers firing at once (its share of `RealtimeLimits::timer_firings`): more due ones wait
    /// for one of its own to end, so one mod's slow timers never hold the other mods' back.
    pub timer_firings: u32,
    /// Cores' worth its long calls (those still running at an epoch tick) get between them: more
    /// pause at each tick for the others' turns, so one mod's spinning or memory-hungry calls leave
    /// the other cores to everyone else. Short calls never see it.
    pub cpu_share: u32,
}

/// The largest `store_mib` a player may set (1 TiB): past that a quota is no bound at all.
const MAX_STORE_MIB: u64 = 1 << 20;
/// The largest `db_patch_mib` a player may set: the db's text offsets are 32-bit.
const MAX_DB_PATCH_MIB: u64 = 1 << 10;
/// The largest `push_queue_mib` a player may set.
const MAX_PUSH_QUEUE_MIB: u64 = 1 << 14;
/// The largest `timer_firings` a player may set.
const MAX_TIMER_FIRINGS: u32 = 1024;
/// The largest `cpu_share` a player may set.
const MAX_CPU_SHARE: u32 = 1024;

impl Default for EngineLimits {
    fn default() -> Self {
        EngineLimits {
            memory_bytes: 128 << 20,
            // Rust guests use a few hundred; JavaScript engines compiled to wasm some tens of thousands.
            table_elements: 50_000,
            max_instances: 256,
            wasm_stack_bytes: 512 << 10,
            epoch_tick: Duration::from_millis(10),
            enforce: true,
            guest_memory_bytes: None,
            memory_wait: Duration::from_secs(2),
            lever: None,
            perfmap: false,
        }
    }
}

impl Default for FrontLimits {
    fn default() -> Self {
        FrontLimits { body_bytes: 16 << 20, body_cache_bytes: 64 << 20 }
    }
}

impl Default for ModLimits {
    fn default() -> Self {
        let engine = EngineLimits::default();
        ModLimits {
            memory_bytes: engine.memory_bytes,
            call_deadline: Duration::from_secs(5),
            // Short: the boot (and a reload) waits for every init in turn, and a request arriving
            // meanwhile waits `boot_wait` (30 s); a looping init must end well within that, so
            // players see the game served, not 503. An init that needs longer is a player's choice
            // (`init_timeout_ms`). The built-in game has no init at all.
            init_deadline: Duration::from_secs(10),
            // The store's value cap plus room for the key: a `set` at the cap must reach the store and
            // get its clear `too-large`, not trap on this limit first.
            hostcall_bytes: modhost_store::MAX_VALUE_BYTES + (1 << 20),
            table_elements: engine.table_elements,
            output_bytes: 64 << 10,
            response_bytes: 256 << 20,
            mod_instances: 64,
            quarantine_after: 5,
            quarantine_window: Duration::from_secs(60),
            store_quota: modhost_store::Quota::default(),
            // Whole tables of a generated 3000-template db are a few MiB; a mod that adds items adds
            // far less. A 16 MiB table merged member by member into an existing one costs about 1.7 s
            // and 0.8 GB here (`patch-cost`), off the async workers; into nothing, its copy.
            db_patch_bytes: 16 << 20,
            hook_errors: HookErrors::Skip,
            // 64 messages of a few KiB for each of a thousand players offline; an eighth of the
            // server's bound on all queues (`RealtimeLimits::queue_total_bytes`).
            push_queue_bytes: 16 << 20,
            // A mod's periodic timers never overlap themselves; a burst of its one-shots (a restart
            // after downtime) fires four at a time, while a spinning one holds a core each.
            timer_firings: 4,
            // Half the machine's cores (1 on 2): the other half serves every other mod.
            cpu_share: std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1) as u32),
        }
    }
}

impl ServerSettings {
    /// The defaults for a given root: 127.0.0.1:6969, built-in mods on, default limits.
    pub fn new(root: impl Into<PathBuf>) -> ServerSettings {
        ServerSettings {
            addr: SocketAddr::from(([127, 0, 0, 1], 6969)),
            root: root.into(),
            store_durable: false,
            store_url: None,
            session_lease: None,
            perf: false,
            scratch_store: false,
            session_lock_timeout: Duration::from_secs(10),
            strict: false,
            boot_wait: Duration::from_secs(30),
            builtin_mods: true,
            watch: false,
            engine: EngineLimits::default(),
            front: FrontLimits::default(),
            limits: ModLimits::default(),
            http: HttpDeadlines::default(),
            per_mod: BTreeMap::new(),
            allowed_hosts: Vec::new(),
            realtime: crate::realtime::RealtimeLimits::default(),
            max_connections: crate::nofile::MAX_CONNECTIONS,
        }
    }

    /// Takes the player's file: `[limits]` changes every mod's, `[mods.<id>]` one mod's. `[limits]`'s
    /// `memory_mib` and `table_elements` size the engine's pool too (no mod may be given more than
    /// every mod has), and its `guest_memory_mib` is the engine's alone.
    pub fn apply_player_file(&mut self, file: &PlayerFile) -> Result<(), PlayerFileError> {
        let table = |table: String| move |error| PlayerFileError::Limit { table, error };
        self.limits = file.limits.apply(&self.limits, &self.engine).map_err(table("limits".to_owned()))?;
        if file.limits.memory_mib.is_some() {
            self.engine.memory_bytes = self.limits.memory_bytes;
        }
        if file.limits.table_elements.is_some() {
            self.engine.table_elements = self.limits.table_elements;
        }
        if let Some(mib) = file.limits.guest_memory_mib {
            let bytes = guest_memory_bytes(mib, self.limits.memory_bytes).map_err(table("limits".to_owned()))?;
            self.engine.guest_memory_bytes = Some(bytes);
        }
        for (id, overrides) in &file.mods {
            if overrides.guest_memory_mib.is_some() {
                return Err(PlayerFileError::ServerWide { table: format!("mods.{id}"), key: "guest_memory_mib" });
            }
            let limits = overrides.apply(&self.limits, &self.engine).map_err(table(format!("mods.{id}")))?;
            self.per_mod.insert(id.to_string(), limits);
        }
        if self.store_url.is_none() {
            self.store_url.clone_from(&file.store.url);
        }
        for name in &file.http.allowed_hosts {
            let host = host_name(name).ok_or_else(|| PlayerFileError::Host(name.chars().take(256).collect()))?;
            if !self.allowed_hosts.contains(&host) {
                self.allowed_hosts.push(host);
            }
        }
        Ok(())
    }

    /// The limits mod `id` runs under.
    pub fn limits_for(&self, id: &str) -> ModLimits {
        self.per_mod.get(id).unwrap_or(&self.limits).clone()
    }

    /// The store's quotas: `[limits]`'s for every namespace, `[mods.<id>]`'s for that mod's own and,
    /// apart, for its timers' (`timers.<id>`, where its pending timers are kept): a mod's quota bounds
    /// everything it can make the store hold, each namespace its own allowance of that size.
    pub fn store_quotas(&self) -> modhost_store::Quotas {
        let namespaces = self
            .per_mod
            .iter()
            .flat_map(|(id, limits)| {
                [(id.clone(), limits.store_quota), (crate::realtime::timers::namespace(id), limits.store_quota)]
            })
            .collect();
        modhost_store::Quotas { default: self.limits.store_quota, namespaces }
    }
}

/// A host as requests are compared by it: lower case, without IPv6 brackets or a trailing dot
/// (`localhost.` is `localhost`).
pub(crate) fn normalise_host(host: &str) -> String {
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

/// A player's `allowed_hosts` entry, normalised; `None` unless it is a bare host (no port, user or
/// path): what a request's `Host` could carry.
pub(crate) fn host_name(name: &str) -> Option<String> {
    let authority = name.parse::<hyper::http::uri::Authority>().ok()?;
    let host = normalise_host(authority.host());
    (authority.as_str() == authority.host() && !host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_players_file_sets_every_mods_limits_and_one_mods() {
        let file = PlayerFile::parse(
            "[limits]\ncall_timeout_ms = 2000\n[mods.x]\nmemory_mib = 32\ninstances = 4\nquarantine_after = 0\n",
        )
        .unwrap();
        let mut config = ServerSettings::new("r");
        config.apply_player_file(&file).unwrap();
        let x = config.limits_for("x");
        assert_eq!((x.memory_bytes, x.mod_instances, x.quarantine_after), (32 << 20, 4, 0));
        assert_eq!(x.call_deadline, Duration::from_millis(2000), "[limits] applies under [mods.x]");
        let other = config.limits_for("y");
        assert_eq!((other.memory_bytes, other.call_deadline), (128 << 20, Duration::from_millis(2000)));
    }

    #[test]
    fn allowed_hosts_are_bare_hosts_normalised() {
        for (name, host) in
            [("Game.LAN", "game.lan"), ("192.168.1.5", "192.168.1.5"), ("[FD00::1]", "fd00::1"), ("box.", "box")]
        {
            assert_eq!(host_name(name).as_deref(), Some(host), "{name}");
        }
        for bad in ["", "game.lan:6969", "u@game.lan", "game.lan/x", "[]", "a b", "[::1]:80"] {
            assert_eq!(host_name(bad), None, "{bad:?}");
        }
        let file = PlayerFile::parse("[http]\nallowed_hosts = [\"Game.lan\", \"game.LAN\"]").unwrap();
        let mut config = ServerSettings::new("r");
        config.apply_player_file(&file).unwrap();
        assert_eq!(config.allowed_hosts, ["game.lan"]);
    }

    #[test]
    fn a_bad_file_says_what_and_where() {
        assert!(PlayerFile::parse("[limits]\nmemory_mb = 3").unwrap_err().to_string().contains("memory_mb"));
        let mut config = ServerSettings::new("r");
        let too_big = PlayerFile::parse("[mods.x]\nmemory_mib = 4096").unwrap();
        let e = config.apply_player_file(&too_big).unwrap_err().to_string();
        assert!(e.contains("[mods.x]") && e.contains("--mod-memory-mib"), "{e}");
        let e = PlayerFile::parse("[mods.\"Not/A-Mod\"]\nmemory_mib = 3").unwrap_err().to_string();
        assert!(e.contains("is not a mod id"), "{e}");
        let port = PlayerFile::parse("[http]\nallowed_hosts = [\"game.lan:6969\"]").unwrap();
        assert!(config.apply_player_file(&port).unwrap_err().to_string().contains("game.lan:6969"));
        let zero = PlayerFile::parse("[limits]\ncall_timeout_ms = 0").unwrap();
        assert!(config.apply_player_file(&zero).unwrap_err().to_string().contains("call_timeout_ms"));
    }

    #[test]
    fn a_huge_mib_limit_is_refused_naming_its_key_instead_of_wrapping_to_zero() {
        // 2^44 MiB is 2^64 bytes: `mib << 20` came out as 0, which passed every check.
        for key in ["memory_mib", "hostcall_mib", "response_mib", "guest_memory_mib"] {
            let mut config = ServerSettings::new("r");
            let file = PlayerFile::parse(&format!("[limits]\n{key} = 17592186044416\n")).unwrap();
            let e = config.apply_player_file(&file).unwrap_err().to_string();
            assert!(e.contains(key) && e.contains("must be 1 to"), "{key}: {e}");
        }
        let mut config = ServerSettings::new("r");
        let file = PlayerFile::parse("[limits]\nresponse_mib = 5000\n").unwrap();
        assert!(config.apply_player_file(&file).unwrap_err().to_string().contains("1 to 4096"));
        let file = PlayerFile::parse("[mods.x]\nguest_memory_mib = 4096\n").unwrap();
        assert!(config.apply_player_file(&file).unwrap_err().to_string().contains("server-wide"));
        let file = PlayerFile::parse("[limits]\nguest_memory_mib = 100\n").unwrap();
        assert!(config.apply_player_file(&file).unwrap_err().to_string().contains("one instance must fit"));
        let file = PlayerFile::parse("[limits]\nguest_memory_mib = 4096\n").unwrap();
        config.apply_player_file(&file).unwrap();
        assert_eq!(config.engine.guest_memory_bytes, Some(4096 << 20));
    }

    #[test]
    fn store_quotas_are_set_for_every_namespace_and_per_mod_and_huge_ones_are_refused_not_wrapped() {
        let file =
            PlayerFile::parse("[limits]\nstore_mib = 10\n[mods.big]\nstore_mib = 1000\nstore_keys = 7\n").unwrap();
        let mut config = ServerSettings::new("r");
        config.apply_player_file(&file).unwrap();
        let quotas = config.store_quotas();
        assert_eq!(quotas.default, modhost_store::Quota { bytes: 10 << 20, keys: modhost_store::DEFAULT_QUOTA_KEYS });
        assert_eq!(quotas.namespaces["big"], modhost_store::Quota { bytes: 1000 << 20, keys: 7 });
        assert_eq!(quotas.namespaces["timers.big"], quotas.namespaces["big"], "its timers are held to it too");
        for bad in ["store_mib = 0", "store_mib = 18446744073709551615", "store_keys = 0", "db_patch_mib = 100000"] {
            let file = PlayerFile::parse(&format!("[limits]\n{bad}")).unwrap();
            let e = ServerSettings::new("r").apply_player_file(&file).unwrap_err().to_string();
            assert!(e.contains(bad.split(' ').next().unwrap()), "{bad}: {e}");
        }
    }
}
