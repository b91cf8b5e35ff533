//! [`Config`]: everything a running server needs to know, validated, with no I/O. `main.rs` builds it
//! from the command line; tests build it directly.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The server's configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where to listen. The default is 127.0.0.1:6969 (the SPT client's port); port 0 picks a free one.
    pub addr: SocketAddr,
    /// The root directory: `db.json`, `mods/`, `store/`, `cache/`. Created if missing.
    pub root: PathBuf,
    /// fsync each store commit (temp file and directory): survives power loss, costs a few ms a write.
    pub store_durable: bool,
    /// How long a request waits for its session's lock before it is answered 503.
    pub session_lock_timeout: Duration,
    /// Refuse to start when any mod fails to load, instead of starting without it.
    pub strict: bool,
    /// How long a request that arrives while the mods load waits before it is answered 503.
    pub boot_wait: Duration,
    /// Time every request's phases and write the table to `<root>/perf.txt` each second (`--perf`).
    pub perf: bool,
    /// Whether to load the mods embedded in the binary (tests turn this off to load only fixtures).
    pub builtin_mods: bool,
    /// Limits on every mod call.
    pub limits: Limits,
    /// Deadlines of the HTTP front.
    pub http: HttpDeadlines,
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

/// Limits on every mod, on by default: a mod cannot crash, stall or starve the server.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Linear memory one instance may grow to, in bytes.
    pub memory_bytes: usize,
    /// How long one `handle` call may run before it is stopped and answered 500.
    pub call_deadline: Duration,
    /// How long each of `routes` and `init` may run at load.
    pub init_deadline: Duration,
    /// How many bytes one host call may copy out of the guest (strings and lists it passes in).
    pub hostcall_bytes: usize,
    /// Table elements one instance may grow to.
    pub table_elements: usize,
    /// Instances alive at once across all mods: the size of the pooling allocator, and so the number
    /// of requests that can be inside mods at the same time (the rest wait for a slot).
    pub max_instances: u32,
    /// Native stack a guest may use, in bytes; deeper recursion traps.
    pub wasm_stack_bytes: usize,
    /// stdout plus stderr kept per call; the rest is dropped.
    pub output_bytes: usize,
    /// The epoch tick: a looping guest is stopped within its deadline plus one tick, and yields to
    /// other requests at every tick.
    pub epoch_tick: Duration,
    /// The largest request body accepted (compressed, and again inflated).
    pub body_bytes: usize,
    /// The largest answer a mod may produce, db references spliced in.
    pub response_bytes: usize,
    /// Compressed answers kept for reuse, in bytes.
    pub body_cache_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 128 << 20,
            call_deadline: Duration::from_secs(5),
            init_deadline: Duration::from_secs(60),
            // The store's value cap plus room for the key: a `set` at the cap must reach the store and
            // get its clear `too-large`, not trap on this limit first.
            hostcall_bytes: crate::store::MAX_VALUE_BYTES + (1 << 20),
            table_elements: 100_000,
            max_instances: 256,
            wasm_stack_bytes: 512 << 10,
            output_bytes: 64 << 10,
            epoch_tick: Duration::from_millis(10),
            body_bytes: 16 << 20,
            response_bytes: 256 << 20,
            body_cache_bytes: 64 << 20,
        }
    }
}

impl Config {
    /// The defaults for a given root: 127.0.0.1:6969, built-in mods on, default limits.
    pub fn new(root: impl Into<PathBuf>) -> Config {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 6969)),
            root: root.into(),
            store_durable: false,
            perf: false,
            session_lock_timeout: Duration::from_secs(10),
            strict: false,
            boot_wait: Duration::from_secs(30),
            builtin_mods: true,
            limits: Limits::default(),
            http: HttpDeadlines::default(),
        }
    }
}
