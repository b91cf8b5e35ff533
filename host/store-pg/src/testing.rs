//! A PostgreSQL server of a test's own: `initdb` into a temporary folder, started
//! on a Unix socket in that folder (no TCP port, so tests never collide), stopped when dropped.
//!
//! The binaries are Debian's (`postgresql`), found on `PATH` or under `/usr/lib/postgresql/<version>/bin`.
//! PostgreSQL refuses to run as root: as root, the folder is handed to the `postgres` user and the
//! server runs as that user (`runuser`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A running server; stopped (immediately, as a crash would) when dropped.
pub struct Server {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Server {
    /// Creates and starts a server; panics with what failed (a test fixture).
    pub fn start() -> Server {
        let bin = binaries().expect(
            "PostgreSQL's initdb was not found on PATH or under /usr/lib/postgresql/*/bin: install Debian's postgresql",
        );
        let dir = tempfile::Builder::new().prefix("modhost-pg-").tempdir().expect("a temporary folder");
        let root = is_root();
        if root {
            // The server's user must reach the folder; tempdir makes it 0700.
            run(Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()));
        }
        let data = dir.path().join("data");
        run(as_server(root, &bin.join("initdb"))
            .args(["--auth=trust", "--username=modhost", "--encoding=UTF8", "--locale=C", "-D"])
            .arg(&data));
        let server = Server { dir, bin };
        server.pg_ctl(&["start", "-w", "-t", "60", "-l"], Some(&server.dir.path().join("log")));
        server
    }

    /// The URL a store connects with: the `postgres` database over this server's socket.
    pub fn url(&self) -> String {
        format!("postgres://modhost@/postgres?host={}", self.dir.path().display())
    }

    /// The URL of database `name` on this server, created if it does not exist.
    pub fn database(&self, name: &str) -> String {
        let mut client =
            postgres::Client::connect(&self.url(), postgres::NoTls).expect("connecting to the test server");
        let exists = client.query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name]).expect("a query");
        if exists.is_none() {
            client.batch_execute(&format!("CREATE DATABASE \"{name}\"")).expect("creating a database");
        }
        format!("postgres://modhost@/{name}?host={}", self.dir.path().display())
    }

    /// Stops the server (fast: connections are closed, commits in flight finish or roll back).
    pub fn stop(&self) {
        self.pg_ctl(&["stop", "-m", "fast", "-w"], None);
    }

    /// Starts the server again after [`Server::stop`].
    pub fn restart(&self) {
        self.pg_ctl(&["start", "-w", "-t", "60", "-l"], Some(&self.dir.path().join("log")));
    }

    fn pg_ctl(&self, args: &[&str], log: Option<&Path>) {
        let data = self.dir.path().join("data");
        let socket = format!("-c listen_addresses='' -c unix_socket_directories='{}'", self.dir.path().display());
        let mut command = as_server(is_root(), &self.bin.join("pg_ctl"));
        command.args(args);
        if let Some(log) = log {
            command.arg(log);
        }
        command.arg("-D").arg(&data).arg("-o").arg(socket);
        run(&mut command);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = as_server(is_root(), &self.bin.join("pg_ctl"))
            .args(["stop", "-m", "immediate", "-w", "-D"])
            .arg(&data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn is_root() -> bool {
    std::env::var("USER").is_ok_and(|u| u == "root")
        || Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// `program` run as the `postgres` user when we are root.
fn as_server(root: bool, program: &Path) -> Command {
    if root {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn run(command: &mut Command) {
    let output = command.output().unwrap_or_else(|e| panic!("running {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The folder holding `initdb` and `pg_ctl`.
fn binaries() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file());
    on_path.or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|bin| bin.join("initdb").is_file())
            .collect();
        versions.sort();
        versions.pop()
    })
}
