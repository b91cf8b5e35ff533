//! [`ServeChild`]: `modhost serve` as a child process, as a player runs it, for the benchmarks; and
//! [`wait_within`], the bounded wait the CLI tests run their commands under. A server's
//! stderr is drained on a thread (a full pipe would stall the server) and its last lines are kept to
//! explain a failed start. Dropping it kills the process: benchmarks never leave servers behind.

use anyhow::{Context as _, bail};
use std::collections::VecDeque;
use std::io::BufRead;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a child may take to bind its port.
const BIND_WAIT: Duration = Duration::from_secs(120);
/// Log lines kept for error messages.
const TAIL_LINES: usize = 20;

/// A running `modhost serve`.
pub struct ServeChild {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    tail: Arc<Mutex<VecDeque<String>>>,
}

/// The modhost binary an integration test runs: `MODHOST_BIN`, else the one built into the same
/// target directory as the test (which runs from `target/<profile>/deps/`). Panics, saying how to build
/// it, when it is missing: a test cannot go on without it.
pub fn modhost_under_test() -> PathBuf {
    if let Some(path) = std::env::var_os("MODHOST_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let path = exe.parent().and_then(Path::parent).expect("target/<profile>/deps").join("modhost");
    assert!(
        path.exists(),
        "{} is missing: build it (`cargo build --release -p modhost`) or set MODHOST_BIN",
        path.display()
    );
    path
}

/// The `modhost` binary beside the running one (both are built into the same target directory).
pub fn sibling_modhost() -> anyhow::Result<PathBuf> {
    Ok(std::env::current_exe()?.with_file_name("modhost"))
}

impl ServeChild {
    /// Starts `modhost serve --port 0 --root <root> <extra…>` and waits until it listens.
    pub fn spawn(modhost: &Path, root: &Path, extra: &[&str]) -> anyhow::Result<ServeChild> {
        let mut child = Command::new(modhost)
            .args(["serve", "--port", "0", "--root"])
            .arg(root)
            .args(extra)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", modhost.display()))?;
        let stderr = child.stderr.take().context("the child's stderr")?;
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let kept = tail.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(at) = line.find("listening on ") {
                    let _ = tx.send(line[at + 13..].trim().to_owned());
                }
                let mut tail = kept.lock().unwrap_or_else(PoisonError::into_inner);
                if tail.len() == TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        });
        let mut server = ServeChild { child, addr: SocketAddr::from(([127, 0, 0, 1], 0)), tail };
        match rx.recv_timeout(BIND_WAIT) {
            Ok(addr) => server.addr = addr.parse().with_context(|| format!("the address `{addr}`"))?,
            Err(_) => {
                bail!("{} did not listen within {BIND_WAIT:?}; its log ended:\n{}", modhost.display(), server.tail())
            }
        }
        Ok(server)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last lines it logged.
    pub fn tail(&self) -> String {
        let tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for ServeChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for `child` (the command `shown`, its stderr going to the file `stderr`) to exit within
/// `limit`; past it the child is killed and the test fails with what it wrote to stderr. The one wait
/// the CLI tests share, so none of them can hang.
pub fn wait_within(child: &mut Child, limit: Duration, shown: &str, stderr: &Path) -> ExitStatus {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status,
            Ok(None) => {}
            Err(e) => panic!("waiting for {shown}: {e}"),
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{shown} ran past {limit:?}; its stderr:\n{}", std::fs::read_to_string(stderr).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
