//! A generation: one consistent set of loaded mods, the db their `init`s built, and the routes they
//! claim. The boot builds the first; a reload builds the next beside it and swaps it in whole.
//!
//! Building one: find the mods (built-ins, then `<root>/mods/`), resolve their relations into a load
//! order (`modhost_mods::resolve`), read `db.json` into a fresh tree, then per mod in order: compile (off the
//! async workers: a JavaScript mod takes seconds), link, ask its routes, run its `init`. A mod that fails
//! any step is left out with the db patches it made (from `routes` or `init`) undone, and so is every later mod that
//! requires it. Nothing here touches the serving generation or the store's files beyond what `init`
//! writes through the usual API.
//!
//! Key types: [`Generation`], [`LoadReport`].

use crate::dblog::Follow;
use crate::sandbox::{Chain, CompileSource, LoadedMod, ModContext, Peers, Runtime, Step, WitMatchKind};
use crate::settings::ServerSettings;
use anyhow::Context as _;
use modhost_db::Db;
use modhost_mods::Origin;
use modhost_routes::{HookTable, MatchKind, RouteTable, RouteTableBuilder};
use modhost_store::Store;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Templates in the database a new root starts with: the generator's shape at a size that boots at
/// once (about 0.2 MB). A player's real database replaces `<root>/db.json`.
const DEFAULT_DB_ITEMS: u64 = 100;

/// Objects of at least this much text are indexed before a reloaded db serves (`Db::warm`).
const WARM_MIN_BYTES: usize = 64 << 10;

/// One loaded set of mods and the db they built. Immutable; requests hold it (an `Arc`) from route
/// lookup to the last db reference they splice, so a reload never changes a request's world midway.
#[derive(Debug)]
pub struct Generation {
    /// 1 for the boot's, then one more per successful reload.
    pub number: u64,
    /// The game database, as `db.json` plus this generation's `init` patches (and later runtime patches).
    pub db: Arc<Db>,
    /// On a store several hosts share, the db following the cluster's patch log (`dblog.rs`).
    pub(crate) follow: Option<Arc<Follow>>,
    /// Which mod answers which route.
    pub routes: RouteTable<Arc<LoadedMod>>,
    /// Which mod accepts websockets on which socket route (`realtime.declare-realtime`), with the
    /// route's index in the mod's list (it starts the connection ids: `realtime/modsock.rs`). A table
    /// of its own, so a mod may serve both a route and a socket route on one path.
    pub sockets: RouteTable<SocketOwner>,
    /// The hooks on routes, each with its rank in the one order they run in.
    pub hooks: HookTable<Arc<Hook>>,
    /// The mods as events and calls reach them.
    /// Held here, so the weak references the mods hold live as long as the generation.
    _peers: Arc<Peers>,
    /// The loaded mods, in load order.
    pub mods: Vec<Arc<LoadedMod>>,
    /// What was loaded and left out.
    pub report: LoadReport,
    /// When it was built (wall clock, for the status page).
    pub built_at: SystemTime,
    /// How long building it took.
    pub build_time: Duration,
}

/// The mod whose socket route it is, and the route's index in the mod's `declare-realtime` list.
pub(crate) type SocketOwner = (Arc<LoadedMod>, usize);

/// One hook of a loaded mod.
#[derive(Debug)]
pub struct Hook {
    /// The mod whose hook it is.
    pub module: Arc<LoadedMod>,
    /// As it declared it.
    pub spec: modhost_mods::HookSpec,
    /// Its place in the generation's one hook order (0 runs first).
    pub rank: usize,
}

/// One loaded mod, for the report.
#[derive(Debug, Clone)]
pub struct LoadedInfo {
    /// Its id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// Its display name, when it has one.
    pub name: Option<String>,
    /// Who wrote it.
    pub authors: Vec<String>,
    /// What it requires (`id range`).
    pub requires: Vec<String>,
    /// Built in, or from a folder.
    pub origin: Origin,
    /// Whether its compiled form came from the cache.
    pub compile: CompileSource,
    /// Time to compile or load it, link it, and run `routes` and `init`.
    pub load_time: Duration,
    /// Its configuration as loaded (`modhost_mods::config`): what it reads, its defaults, schema and
    /// the player's file. Empty for built-in mods.
    pub config: Arc<modhost_mods::ModConfig>,
}

/// What a build loaded and what it left out.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    /// The mods that loaded, in load order.
    pub loaded: Vec<LoadedInfo>,
    /// The mods left out, with why.
    pub failed: Vec<LeftOut>,
}

/// A mod a build left out, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LeftOut {
    /// Its id, or its folder when no manifest could be read.
    #[serde(rename = "mod")]
    pub id: String,
    /// Why it was left out.
    pub reason: String,
}

impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.id, self.reason)
    }
}

impl Generation {
    /// Builds generation `number` from the root's `db.json` and mods. `warm`: index the db's large
    /// objects before answering (a reload does, so the requests after the swap do not pay for the scan;
    /// the boot does not, so the first answer comes as early as it can).
    pub(crate) async fn build(
        number: u64,
        config: &ServerSettings,
        runtime: &Arc<Runtime>,
        store: &Arc<Store>,
        warm: bool,
    ) -> anyhow::Result<Generation> {
        let started = Instant::now();
        let root = config.root.clone();
        let db = Arc::new(tokio::task::spawn_blocking(move || load_db(&root)).await.context("reading the db")??);
        // On a store several hosts share, the db follows the cluster's patch log once built.
        let follow = store.exchange().map(|exchange| Arc::new(Follow::new(exchange, db.clone())));

        let mut found = Vec::new();
        if config.builtin_mods {
            found.extend(crate::builtin::builtins());
        }
        found.extend(modhost_mods::discover(&config.root.join("mods")));
        let mut report = LoadReport::default();
        let mut sources = Vec::new();
        for source in found {
            match source {
                Ok(source) => sources.push(source),
                Err(e) => report.failed.push(LeftOut { id: e.folder.display().to_string(), reason: e.reason }),
            }
        }
        let manifests: Vec<&modhost_mods::Manifest> = sources.iter().map(|s| &s.manifest).collect();
        let resolution = modhost_mods::resolve(&manifests, &modhost_mods::API_VERSION);
        for (i, why) in &resolution.refused {
            tracing::error!("mod {} was not loaded: {why}", sources[*i].manifest.id);
            report.failed.push(LeftOut { id: sources[*i].manifest.id.to_string(), reason: why.clone() });
        }

        let mut sources: Vec<Option<modhost_mods::ModSource>> = sources.into_iter().map(Some).collect();
        let mut failed: HashSet<modhost_mods::ModId> = HashSet::new();
        let mut loaded = Vec::new();
        let mut manifests = Vec::new();
        let peers = Arc::new(Peers::new(runtime.sessions().clone(), runtime.realtime().clone()));
        let mut builder = RouteTableBuilder::default();
        let mut sockets = RouteTableBuilder::default();
        for i in resolution.order {
            let Some(mut source) = sources[i].take() else { continue };
            // Moved into the compile task, not copied: a JavaScript mod is tens of megabytes.
            let wasm = std::mem::take(&mut source.wasm);
            let id = source.manifest.id.clone();
            let t0 = Instant::now();
            // The player's config for it, checked before anything compiles: a bad file refuses the
            // mod with the file, the key and the rule (docs/config.md).
            let mod_config = match &source.origin {
                Origin::Builtin => Ok(modhost_mods::ModConfig::empty()),
                Origin::Folder(folder) => modhost_mods::config::load(folder),
            };
            let outcome = match (source.manifest.requires.keys().find(|dep| failed.contains(*dep)), &mod_config) {
                (Some(dep), _) => Err(anyhow::anyhow!("it requires `{dep}`, which failed to load")),
                (None, Err(e)) => Err(anyhow::anyhow!("its configuration: {e}")),
                (None, Ok(mod_config)) => {
                    let effective = Arc::new(mod_config.effective.clone());
                    let limits = config.limits_for(&id);
                    let builders = (&mut builder, &mut sockets);
                    let db = (&db, follow.as_ref());
                    load_one(runtime, &source.manifest, wasm, effective, limits, db, store, &peers, builders).await
                }
            };
            match outcome.and_then(|loaded| Ok((loaded, Arc::new(mod_config?)))) {
                Ok(((module, compile), mod_config)) => {
                    let m = &source.manifest;
                    let info = LoadedInfo {
                        id: id.to_string(),
                        version: m.version.to_string(),
                        name: m.name.clone(),
                        authors: m.authors.clone(),
                        requires: m.requires.iter().map(|(id, range)| format!("{id} {range}")).collect(),
                        origin: source.origin.clone(),
                        compile,
                        load_time: t0.elapsed(),
                        config: mod_config,
                    };
                    tracing::info!(
                        "loaded mod {id} {} ({:?}, {:?}) in {:.1} ms",
                        info.version,
                        info.origin,
                        compile,
                        info.load_time.as_secs_f64() * 1e3
                    );
                    report.loaded.push(info);
                    peers.add(module.clone());
                    loaded.push(module);
                    manifests.push(source.manifest);
                }
                Err(e) => {
                    tracing::error!("mod {id} was not loaded: {e:#}");
                    report.failed.push(LeftOut { id: id.to_string(), reason: format!("{e:#}") });
                    failed.insert(id);
                }
            }
        }
        if let Some(follow) = &follow {
            // The runtime patches other hosts made, in their order, over this host's `init`s.
            let follow = follow.clone();
            let replayed = tokio::task::spawn_blocking(move || follow.arm())
                .await
                .context("replaying the cluster's db patches")?
                .context("replaying the cluster's db patches")?;
            if replayed > 0 {
                tracing::info!("generation {number}: replayed {replayed} db patches of the cluster");
            }
        }
        if warm {
            let db = db.clone();
            let indexed =
                tokio::task::spawn_blocking(move || db.warm(WARM_MIN_BYTES)).await.context("warming the db")?;
            tracing::debug!("generation {number}: {indexed} large objects indexed before serving");
        }
        Ok(Generation {
            number,
            db,
            follow,
            routes: builder.build(),
            sockets: sockets.build(),
            hooks: hook_table(&loaded, &manifests),
            _peers: peers,
            mods: loaded,
            report,
            built_at: SystemTime::now(),
            build_time: started.elapsed(),
        })
    }
}

fn load_db(root: &Path) -> anyhow::Result<Db> {
    // The db error already names the file, the line and the column; its source would repeat them.
    Db::load(&root.join("db.json")).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Writes the default `db.json` into a root that has none (at boot only: a reload must not replace a
/// db the player removed by mistake, it must say so).
pub(crate) fn write_default_db(root: &Path) -> anyhow::Result<()> {
    let path = root.join("db.json");
    if !path.exists() {
        // Written aside and renamed, so a crash here never leaves a half database to fail the next boot.
        let text = serde_json::to_vec(&modhost_gamedb::database(DEFAULT_DB_ITEMS))?;
        let aside = root.join("db.json.new");
        std::fs::write(&aside, text)
            .and_then(|()| std::fs::rename(&aside, &path))
            .with_context(|| format!("writing the default {}", path.display()))?;
        tracing::info!("wrote a default database to {}", path.display());
    }
    Ok(())
}

/// Every hook of the loaded mods (`mods`, in load order, with their `manifests`) in one table, ranked
/// by `modhost_mods::order_hooks`.
fn hook_table(mods: &[Arc<LoadedMod>], manifests: &[modhost_mods::Manifest]) -> HookTable<Arc<Hook>> {
    let owners: Vec<modhost_mods::HookOwner<'_>> = mods
        .iter()
        .zip(manifests)
        .map(|(m, manifest)| modhost_mods::HookOwner { manifest, declarations: m.declarations() })
        .collect();
    let mut table = HookTable::default();
    for (rank, (m, h)) in modhost_mods::order_hooks(&owners).into_iter().enumerate() {
        let spec = mods[m].declarations().hooks[h].clone();
        let kind = if spec.prefix { MatchKind::Prefix } else { MatchKind::Exact };
        let path = spec.path.clone();
        table.insert(&path, kind, rank, Arc::new(Hook { module: mods[m].clone(), spec, rank }));
    }
    table
}

/// Compiles, links and initialises one mod against `db`; its routes and socket routes join
/// `builders` (routes, socket routes) only when its `init` succeeded.
#[expect(clippy::too_many_arguments, reason = "each is one thing a mod's load needs; a struct would only rename them")]
async fn load_one(
    runtime: &Arc<Runtime>,
    manifest: &modhost_mods::Manifest,
    wasm: Vec<u8>,
    mod_config: Arc<serde_json::Value>,
    limits: crate::settings::ModLimits,
    (db, follow): (&Arc<Db>, Option<&Arc<Follow>>),
    store: &Arc<Store>,
    peers: &Arc<Peers>,
    (builder, sockets): (&mut RouteTableBuilder<Arc<LoadedMod>>, &mut RouteTableBuilder<SocketOwner>),
) -> anyhow::Result<(Arc<LoadedMod>, CompileSource)> {
    let id = &manifest.id;
    let mut cx = ModContext::new(id, db.clone(), store.clone(), manifest.grants.clone());
    cx.config = mod_config;
    cx.follow = follow.cloned();
    let _ = cx.peers.set(Arc::downgrade(peers));
    let cx = Arc::new(cx);
    let own_id = cx.id.clone();
    let load_chain = || Chain::root(&own_id, Step::Load, None);
    // Cranelift is CPU-bound for up to seconds: off the async workers, so serving goes on beside it.
    let (runtime2, reuse) = (runtime.clone(), manifest.reuse);
    let (loaded, compile) = tokio::task::spawn_blocking(move || runtime2.load(&wasm, cx, reuse, limits))
        .await
        .context("the compile task")??;
    let loaded = Arc::new(loaded);
    // A mod that is left out leaves the db as it found it, whatever step refused it: `routes` may
    // patch the db too (nothing stops a mod doing it there instead of in `init`).
    let before = db.snapshot();
    let undo = |e: anyhow::Error| {
        db.restore(before.clone());
        e
    };
    let routes: Vec<(String, MatchKind)> = loaded
        .routes(load_chain())
        .await
        .context("asking for its routes")
        .map_err(undo)?
        .into_iter()
        .map(|r| {
            let kind = match r.kind {
                WitMatchKind::Exact => MatchKind::Exact,
                WitMatchKind::Prefix => MatchKind::Prefix,
            };
            (r.path, kind)
        })
        .collect();
    // Route conflicts are checked before `init` runs, so a refused mod's `init` never runs.
    builder.check(id, &routes).map_err(|e| undo(e.into()))?;
    // So are its declarations: hooks it has no grant for, bad topic or function names.
    let check = |d: &modhost_mods::Declarations| {
        d.check(&manifest.grants, &modhost_routes::RESERVED).map_err(anyhow::Error::from)
    };
    loaded.declare(load_chain(), check).await.context("its declarations").map_err(undo)?;
    // And its socket routes and periodic timers.
    loaded.declare_realtime(load_chain()).await.context("its realtime declarations").map_err(undo)?;
    // Two mods' socket routes conflict like their routes do (the error names both), checked before init.
    let socket_routes: Vec<(String, MatchKind)> = (loaded.realtime_declarations().sockets.iter())
        .map(|r| (r.path.clone(), if r.prefix { MatchKind::Prefix } else { MatchKind::Exact }))
        .collect();
    sockets.check(id, &socket_routes).map_err(|e| undo(anyhow::Error::from(e).context("its socket routes")))?;
    // A mod whose init fails is left out, and so are the patches it made before failing. What it
    // wrote to the store stays: the store is the players' durable state, shared with the serving
    // generation, and is never rolled back (docs/lifecycle.md, "Loading").
    if let Err(e) = loaded.init(load_chain()).await {
        return Err(undo(anyhow::Error::from(e).context("its init failed (its db patches were undone)")));
    }
    builder.add_all(id, &routes, loaded.clone()).map_err(|e| undo(e.into()))?;
    for (index, socket_route) in socket_routes.iter().enumerate() {
        sockets.add_all(id, std::slice::from_ref(socket_route), (loaded.clone(), index)).map_err(|e| undo(e.into()))?;
    }
    Ok((loaded, compile))
}
