//! [`TestServer`]: a modhost server in the test's own runtime, on 127.0.0.1:0, with a fresh root and the
//! fixture mods a test asks for. Stopping it waits for the server to finish.

use modhost::{LoadReport, Server, ServerSettings};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Builds a [`TestServer`].
pub struct TestServerBuilder {
    root: Arc<tempfile::TempDir>,
    config: ServerSettings,
    mods: Vec<(String, PathBuf, String)>,
}

impl TestServerBuilder {
    /// Installs `wasm` as `<root>/mods/<id>/` with a manifest (extra TOML lines appended).
    pub fn with_mod(mut self, id: &str, wasm: &str, extra_toml: &str) -> Self {
        self.mods.push((id.to_owned(), PathBuf::from(wasm), extra_toml.to_owned()));
        self
    }

    /// Writes `db.json` into the root before the server starts.
    pub fn db_json(self, text: &str) -> Self {
        std::fs::write(self.root.path().join("db.json"), text).expect("writing db.json");
        self
    }

    /// Listens on a port chosen now (instead of port 0), so a test knows the address before the boot
    /// finishes.
    pub fn known_port(mut self) -> Self {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("finding a free port");
        self.config.addr = probe.local_addr().expect("a bound address");
        self
    }

    /// The root directory the server will use (to prepare files before it starts).
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The address the server will listen on (meaningful after [`Self::known_port`]).
    pub fn addr(&self) -> SocketAddr {
        self.config.addr
    }

    /// Changes the configuration.
    pub fn config(mut self, f: impl FnOnce(&mut ServerSettings)) -> Self {
        f(&mut self.config);
        self
    }

    /// Starts the server; errors are the boot's.
    pub async fn start(self) -> anyhow::Result<TestServer> {
        for (id, wasm, extra) in &self.mods {
            install_mod(self.root.path(), id, Path::new(wasm), extra)?;
        }
        let server = Server::start(self.config.clone()).await?;
        let addr = server.local_addr()?;
        let report = server.report().clone();
        let app = server.app().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        Ok(TestServer { addr, root: self.root, config: self.config, report, app, stop: Some(stop), task: Some(task) })
    }
}

/// Writes `<root>/mods/<id>/mod.toml` and `<id>.wasm`.
pub fn install_mod(root: &Path, id: &str, wasm: &Path, extra_toml: &str) -> anyhow::Result<()> {
    let dir = root.join("mods").join(id);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("mod.toml"), format!("id = \"{id}\"\nversion = \"0.1.0\"\n{extra_toml}\n"))?;
    std::fs::copy(wasm, dir.join(format!("{id}.wasm")))?;
    Ok(())
}

/// A running server.
pub struct TestServer {
    /// Where it listens.
    pub addr: SocketAddr,
    root: Arc<tempfile::TempDir>,
    config: ServerSettings,
    /// What its boot loaded.
    pub report: LoadReport,
    /// The server's shared state (db, caches), for tests that look inside.
    pub app: Arc<modhost::App>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<anyhow::Result<()>>>,
}

impl TestServer {
    /// A builder with a fresh root, no built-in mods, port 0 and small pools.
    pub fn builder() -> TestServerBuilder {
        let root = Arc::new(tempfile::tempdir().expect("creating a temp dir"));
        let mut config = ServerSettings::new(root.path());
        config.addr = SocketAddr::from(([127, 0, 0, 1], 0));
        config.builtin_mods = false;
        config.engine.max_instances = 32;
        config.limits.call_deadline = Duration::from_secs(5);
        TestServerBuilder { root, config, mods: Vec::new() }
    }

    /// A builder for a server on the same root as this one (stop this one first).
    pub fn restart_builder(&self) -> TestServerBuilder {
        TestServerBuilder { root: self.root.clone(), config: self.config.clone(), mods: Vec::new() }
    }

    /// The server's root directory.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// Stops the server and waits for it to finish.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        self.shutdown().await
    }

    /// Stops the server and opens its store, as `modhost store` would: to look at what it wrote.
    pub async fn stop_and_open_store(mut self) -> anyhow::Result<StoppedStore> {
        self.shutdown().await?;
        // The app holds the store (and its lock) until it is dropped.
        let root = self.root.clone();
        drop(self);
        let store = modhost_store::Store::open(&root.path().join("store"), false)?;
        Ok(StoppedStore { store, _root: root })
    }

    async fn shutdown(&mut self) -> anyhow::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(30), task).await???;
        }
        Ok(())
    }
}

/// The store of a stopped [`TestServer`], with its root kept alive.
pub struct StoppedStore {
    /// The store.
    pub store: modhost_store::Store,
    _root: Arc<tempfile::TempDir>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
