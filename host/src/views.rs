//! Typed views of what is loaded, shared by the status JSON (`/modhost/mods`), `modhost mods` (text
//! and `--json`) and `modhost reload`: each mod's version, origin, grants, limits and routes, and the
//! mods left out with why. They serialize and deserialize, so a tool (or the CLI reading the server's
//! answer) reads the same structs the server wrote, never a `serde_json::Value` by string keys.

use crate::generation::{Generation, LeftOut};
use crate::metrics::RouteStats;
use crate::sandbox::LoadedMod;
use modhost_routes::MatchKind;
use serde::{Deserialize, Serialize};

/// Every mod a generation loaded, and every one it left out.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModsView {
    /// The loaded mods, in load order.
    pub loaded: Vec<ModView>,
    /// The mods left out, with why.
    pub failed: Vec<LeftOut>,
    /// The generation shown (set by the status page; absent from `modhost mods`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    /// Every hooked route's chain: the hooks that reach it, in the order they run.
    #[serde(default)]
    pub chains: Vec<ChainView>,
    /// The mods installed but disabled (`<root>/disabled/`), which the page can enable.
    #[serde(default)]
    pub disabled: Vec<DisabledView>,
}

/// A disabled mod.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DisabledView {
    /// Its id.
    pub id: String,
    /// Its version.
    pub version: String,
    /// Its grants in words.
    pub grants: Vec<String>,
}

/// One route's chain.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChainView {
    /// The route, as its owner claims it.
    pub route: String,
    /// `exact` or `prefix`.
    pub kind: String,
    /// The mod that owns it.
    pub owner: String,
    /// The hooks that reach some URL of it, in run order (the owner runs between the before- and
    /// the after-hooks; a mod's hooks never run on its own routes).
    pub hooks: Vec<HookView>,
}

/// One hook in a chain.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HookView {
    /// Whose.
    #[serde(rename = "mod")]
    pub module: String,
    /// `before` or `after`.
    pub phase: String,
    /// The path it hooks, as declared (`*` after a prefix).
    pub path: String,
    /// Its priority.
    pub priority: i32,
    /// Whether it reads the answer's body.
    pub body: bool,
}

/// One loaded mod.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModView {
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
    /// Where it came from: `Builtin`, or `Folder("<path>")`.
    pub origin: String,
    /// Its grants in words (empty: none).
    pub grants: Vec<String>,
    /// The limits its calls run under.
    pub limits: LimitsView,
    /// The routes it claims.
    pub routes: Vec<RouteView>,
    /// Why it is quarantined, when it is.
    pub quarantined: Option<String>,
    /// Guest linear memory its live instances hold now, in KiB (its share of the server's budget).
    #[serde(default)]
    pub memory_in_use_kib: usize,
    /// The topics it hears.
    #[serde(default)]
    pub subscriptions: Vec<String>,
    /// The functions it provides.
    #[serde(default)]
    pub functions: Vec<String>,
    /// Its websocket routes (a trailing `*`: a prefix).
    #[serde(default)]
    pub sockets: Vec<String>,
    /// Its hooks that failed and were skipped since it was loaded.
    #[serde(default)]
    pub hooks_skipped: u64,
    /// Events delivered to it that it failed on (an error, a trap, its own deadline) since it was
    /// loaded: a subscriber's failure is counted against it, never the emitter.
    #[serde(default)]
    pub events_failed: u64,
    /// Its timers that failed (an error, a trap, the deadline) since the server started.
    #[serde(default)]
    pub timers_failed: u64,
    /// Its timer firings put off for a retry (their session's lock was taken, no room) since the
    /// server started.
    #[serde(default)]
    pub timers_retried: u64,
    /// Its one-shot timers pending.
    #[serde(default)]
    pub timers_pending: usize,
    /// Its periodic timers, with their next due time.
    #[serde(default)]
    pub timers: Vec<TimerView>,
    /// Its effective configuration: what `config.get` reads (`{}` when it has none; docs/config.md).
    #[serde(default)]
    pub config: serde_json::Value,
    /// The defaults it ships (`config.default.json`), which the player's file is merged over.
    #[serde(default)]
    pub config_defaults: serde_json::Value,
    /// Its `config.schema.json`, when it ships one.
    #[serde(default)]
    pub config_schema: Option<serde_json::Value>,
    /// The player's file (`<root>/mods/<id>/config.json`, there or not); absent for a built-in mod,
    /// which has no folder and no configuration.
    #[serde(default)]
    pub config_file: Option<String>,
}

/// One periodic timer of a mod.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimerView {
    /// Its name.
    pub name: String,
    /// Seconds between firings.
    pub every_s: u32,
    /// When it fires next, in ms since the Unix epoch.
    pub next_due_ms: u64,
}

/// A mod's limits, in the units the player writes them in `modhost.toml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LimitsView {
    /// Linear memory per instance.
    pub memory_mib: usize,
    /// Deadline of one request's call.
    pub call_timeout_ms: u64,
    /// Deadline of `routes` and `init`.
    pub init_timeout_ms: u64,
    /// Bytes one host call may copy.
    pub hostcall_mib: usize,
    /// The largest answer.
    pub response_mib: usize,
    /// Its share of the instance pool.
    pub instances: u32,
    /// Table elements per instance.
    pub table_elements: usize,
    /// The wasm stack (engine-wide).
    pub wasm_stack_kib: usize,
    /// Failed calls in a row before quarantine (0: never).
    pub quarantine_after: u32,
}

/// One route a mod claims.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RouteView {
    /// The route as claimed.
    pub path: String,
    /// `exact` or `prefix`.
    pub kind: String,
    /// Its requests and latency since the server started. Absent from `modhost mods`; on the status
    /// page `Some(None)`, sent as `null`, for a route that has had no request yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<Option<RouteStats>>,
    /// Its latency over the last ten minutes, in 10 s slots (the status page's plot). Absent from
    /// `modhost mods` and for a route with no request yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_series: Option<crate::series::LatencySeries>,
}

impl ModsView {
    /// What `generation` loaded and left out (no request statistics).
    pub fn of(generation: &Generation) -> ModsView {
        ModsView {
            loaded: generation.mods.iter().map(|m| ModView::of(m, generation)).collect(),
            failed: generation.report.failed.clone(),
            generation: None,
            chains: chains(generation),
            disabled: Vec::new(),
        }
    }
}

fn kind_name(kind: MatchKind) -> &'static str {
    if kind == MatchKind::Exact { "exact" } else { "prefix" }
}

/// Each route that some hook reaches, with its hooks in run order.
fn chains(generation: &Generation) -> Vec<ChainView> {
    if generation.hooks.is_empty() {
        return Vec::new();
    }
    generation
        .routes
        .routes()
        .into_iter()
        .filter_map(|(route, kind, owner)| {
            let hooks: Vec<HookView> = generation
                .hooks
                .reaching(route, kind)
                .into_iter()
                .filter(|hook| hook.module.id() != owner)
                .map(|hook| HookView {
                    module: hook.module.id().to_owned(),
                    phase: match hook.spec.phase {
                        modhost_mods::Phase::Before => "before",
                        modhost_mods::Phase::After => "after",
                    }
                    .to_owned(),
                    path: format!("{}{}", hook.spec.path, if hook.spec.prefix { "*" } else { "" }),
                    priority: hook.spec.priority,
                    body: hook.spec.body,
                })
                .collect();
            let chain =
                ChainView { route: route.to_owned(), kind: kind_name(kind).to_owned(), owner: owner.to_owned(), hooks };
            (!chain.hooks.is_empty()).then_some(chain)
        })
        .collect()
}

impl ModView {
    fn of(module: &LoadedMod, generation: &Generation) -> ModView {
        let id = module.id();
        let info = generation.report.loaded.iter().find(|m| m.id == id);
        let limits = module.limits();
        let routes = generation
            .routes
            .routes()
            .into_iter()
            .filter(|(_, _, owner)| *owner == id)
            .map(|(path, kind, _)| RouteView {
                path: path.to_owned(),
                kind: kind_name(kind).to_owned(),
                stats: None,
                latency_series: None,
            })
            .collect();
        // The server's timers, reached as the mod's own calls reach them (none outside a server).
        let timers = module
            .context()
            .peers
            .get()
            .and_then(std::sync::Weak::upgrade)
            .map(|peers| peers.realtime.timers.view(id))
            .unwrap_or_default();
        ModView {
            id: id.to_owned(),
            version: info.map_or_else(|| "?".to_owned(), |i| i.version.clone()),
            name: info.and_then(|i| i.name.clone()),
            authors: info.map(|i| i.authors.clone()).unwrap_or_default(),
            requires: info.map(|i| i.requires.clone()).unwrap_or_default(),
            origin: info.map_or_else(|| "?".to_owned(), |i| format!("{:?}", i.origin)),
            grants: module.grants().describe(),
            limits: LimitsView {
                memory_mib: limits.memory_bytes >> 20,
                call_timeout_ms: limits.call_deadline.as_millis() as u64,
                init_timeout_ms: limits.init_deadline.as_millis() as u64,
                hostcall_mib: limits.hostcall_bytes >> 20,
                response_mib: limits.response_bytes >> 20,
                instances: limits.mod_instances,
                table_elements: limits.table_elements,
                wasm_stack_kib: module.engine_limits().wasm_stack_bytes >> 10,
                quarantine_after: limits.quarantine_after,
            },
            routes,
            quarantined: module.quarantined(),
            memory_in_use_kib: module.memory_in_use() >> 10,
            subscriptions: module.declarations().subscriptions.iter().cloned().collect(),
            functions: module.declarations().functions.iter().cloned().collect(),
            sockets: module
                .realtime_declarations()
                .sockets
                .iter()
                .map(|r| format!("{}{}", r.path, if r.prefix { "*" } else { "" }))
                .collect(),
            hooks_skipped: module.context().hooks_skipped.load(std::sync::atomic::Ordering::Relaxed),
            events_failed: module.context().events_failed.load(std::sync::atomic::Ordering::Relaxed),
            timers_failed: timers.failed,
            timers_retried: timers.retried,
            timers_pending: timers.pending,
            timers: timers
                .periodic
                .into_iter()
                .map(|(name, every_s, next_due_ms)| TimerView { name, every_s, next_due_ms })
                .collect(),
            config: info.map(|i| i.config.effective.clone()).unwrap_or_default(),
            config_defaults: info.map(|i| i.config.defaults.clone()).unwrap_or_default(),
            config_schema: info.and_then(|i| i.config.schema.clone()),
            config_file: info
                .filter(|i| matches!(i.origin, modhost_mods::Origin::Folder(_)))
                .map(|i| i.config.player_path.display().to_string()),
        }
    }
}

/// For people (`modhost mods`): a paragraph per loaded mod, then a line per mod left out.
impl std::fmt::Display for ModsView {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for m in &self.loaded {
            writeln!(out, "{} {} ({})", m.id, m.version, m.origin)?;
            if let Some(name) = &m.name {
                writeln!(out, "  name: {name}")?;
            }
            for (label, items) in [("authors", &m.authors), ("requires", &m.requires)] {
                if !items.is_empty() {
                    writeln!(out, "  {label}: {}", items.join(", "))?;
                }
            }
            let grants = match m.grants.is_empty() {
                true => "none (its own store namespace; reads the db)".to_owned(),
                false => m.grants.join("; "),
            };
            writeln!(out, "  grants: {grants}")?;
            let l = &m.limits;
            writeln!(
                out,
                "  limits: memory {} MiB, call {} ms, init {} ms, host call {} MiB, answer {} MiB, {} instances, \
                 {} table elements, stack {} KiB, quarantine after {}",
                l.memory_mib,
                l.call_timeout_ms,
                l.init_timeout_ms,
                l.hostcall_mib,
                l.response_mib,
                l.instances,
                l.table_elements,
                l.wasm_stack_kib,
                l.quarantine_after
            )?;
            let routes: Vec<String> =
                m.routes.iter().map(|r| format!("{}{}", r.path, if r.kind == "prefix" { "*" } else { "" })).collect();
            writeln!(out, "  routes ({}): {}", routes.len(), routes.join(" "))?;
            let timers: Vec<String> = m.timers.iter().map(|t| format!("{} every {} s", t.name, t.every_s)).collect();
            for (label, items) in
                [("hears", &m.subscriptions), ("provides", &m.functions), ("sockets", &m.sockets), ("timers", &timers)]
            {
                if !items.is_empty() {
                    writeln!(out, "  {label}: {}", items.join(", "))?;
                }
            }
            if let Some(file) = &m.config_file {
                // One line: a configuration is the player's to read in full in the file or on the page.
                let mut text = m.config.to_string();
                if text.len() > 200 {
                    let cut = (0..=200).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
                    text = format!("{} …", &text[..cut]);
                }
                writeln!(out, "  config ({file}): {text}")?;
            }
            if let Some(why) = &m.quarantined {
                writeln!(out, "  QUARANTINED: {why}")?;
            }
        }
        for chain in &self.chains {
            let hooks = |phase: &str| {
                let named: Vec<String> = chain
                    .hooks
                    .iter()
                    .filter(|h| h.phase == phase)
                    .map(|h| format!("{} ({}, priority {})", h.module, h.path, h.priority))
                    .collect();
                named.join(" → ")
            };
            let star = if chain.kind == "prefix" { "*" } else { "" };
            writeln!(
                out,
                "chain {}{star}: before [{}] → {} → after [{}]",
                chain.route,
                hooks("before"),
                chain.owner,
                hooks("after")
            )?;
        }
        for left in &self.failed {
            writeln!(out, "left out: {left}")?;
        }
        Ok(())
    }
}
