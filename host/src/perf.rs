//! `--perf`: where a request's time goes, per phase, summed per endpoint, per mod and overall.
//!
//! A request carries a [`Trace`] (plain counters, no locks) through its phases; at its end the trace
//! is merged into the [`Perf`] table under one lock. With `--perf` off no trace exists: each phase
//! costs one branch on an `Option` that is always `None`, and no clock is read.
//!
//! The table is written to `<root>/perf.txt` every second (and at a clean exit): a load generator
//! kills the server rather than asking it to stop, so the file must already be current when it dies.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The phases of a request, in the order they happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// From the request's first byte to its complete head.
    Head,
    /// Finding the route.
    Route,
    /// Reading the body and inflating it.
    Inflate,
    /// Waiting for the session's lock.
    LockWait,
    /// Taking an instance (a fresh one from the pool, or an idle one).
    Checkout,
    /// Running guest code: the call's time minus its host calls.
    Guest,
    /// `db.get`.
    DbGet,
    /// `db.keys`.
    DbKeys,
    /// `db.patch`.
    DbPatch,
    /// `store.get` and `store.get-versioned`.
    StoreGet,
    /// `store.set`, `store.set-if-version` and `store.delete`.
    StoreSet,
    /// `store.list`.
    StoreList,
    /// Splicing db references and checking the answer.
    Assemble,
    /// Compressing the answer (a cache hit is a lookup).
    Deflate,
    /// From the answer's head being ready to its last byte handed to the kernel.
    Send,
    /// The whole request, head to answer ready (without `Send`).
    Total,
}

const PHASES: usize = Phase::Total as usize + 1;

impl Phase {
    const ALL: [Phase; PHASES] = [
        Phase::Head,
        Phase::Route,
        Phase::Inflate,
        Phase::LockWait,
        Phase::Checkout,
        Phase::Guest,
        Phase::DbGet,
        Phase::DbKeys,
        Phase::DbPatch,
        Phase::StoreGet,
        Phase::StoreSet,
        Phase::StoreList,
        Phase::Assemble,
        Phase::Deflate,
        Phase::Send,
        Phase::Total,
    ];

    fn name(self) -> &'static str {
        match self {
            Phase::Head => "head read",
            Phase::Route => "route match",
            Phase::Inflate => "body+inflate",
            Phase::LockWait => "lock wait",
            Phase::Checkout => "instance checkout",
            Phase::Guest => "guest",
            Phase::DbGet => "db get",
            Phase::DbKeys => "db keys",
            Phase::DbPatch => "db patch",
            Phase::StoreGet => "store get",
            Phase::StoreSet => "store set",
            Phase::StoreList => "store list",
            Phase::Assemble => "assemble",
            Phase::Deflate => "deflate",
            Phase::Send => "send",
            Phase::Total => "total",
        }
    }
}

/// Time spent per phase by one request (or one guest call).
#[derive(Clone, Debug, Default)]
pub struct Trace {
    nanos: [u64; PHASES],
    calls: [u32; PHASES],
}

impl Trace {
    /// Adds `elapsed` to `phase`.
    pub fn add(&mut self, phase: Phase, elapsed: Duration) {
        let i = phase as usize;
        self.nanos[i] = self.nanos[i].saturating_add(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX));
        self.calls[i] = self.calls[i].saturating_add(1);
    }

    /// Adds the time since `start` to `phase`, and answers now (the next phase's start).
    pub fn since(&mut self, phase: Phase, start: Instant) -> Instant {
        let now = Instant::now();
        self.add(phase, now - start);
        now
    }

    /// Adds every phase of `other`.
    pub fn merge(&mut self, other: &Trace) {
        for i in 0..PHASES {
            self.nanos[i] = self.nanos[i].saturating_add(other.nanos[i]);
            self.calls[i] = self.calls[i].saturating_add(other.calls[i]);
        }
    }

    /// The time spent in host calls (every db and store phase).
    pub fn host_calls(&self) -> Duration {
        let range = Phase::DbGet as usize..=Phase::StoreList as usize;
        Duration::from_nanos(self.nanos[range].iter().sum())
    }
}

/// One row of the table: a scope's requests and its summed phases.
#[derive(Clone, Debug, Default)]
struct Row {
    requests: u64,
    trace: Trace,
    max_total: u64,
}

/// The accumulated table, by scope (`all`, `route <pattern>`, `mod <id>`).
#[derive(Debug, Default)]
pub struct Perf {
    rows: Mutex<BTreeMap<String, Row>>,
}

impl Perf {
    /// Adds one finished request of `route`, served by `mod_id` (absent when no mod ran).
    pub fn record(&self, route: &str, mod_id: Option<&str>, trace: &Trace) {
        let mut rows = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
        let total = trace.nanos[Phase::Total as usize];
        let mut add = |scope: String| {
            let row = rows.entry(scope).or_default();
            row.requests += 1;
            row.trace.merge(trace);
            row.max_total = row.max_total.max(total);
        };
        add("all".to_owned());
        add(format!("route {route}"));
        if let Some(id) = mod_id {
            add(format!("mod {id}"));
        }
    }

    /// Adds a phase measured after its request was recorded (`Send`, which ends on the connection).
    pub fn record_late(&self, route: &str, phase: Phase, elapsed: Duration) {
        let mut rows = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
        for scope in ["all".to_owned(), format!("route {route}")] {
            rows.entry(scope).or_default().trace.add(phase, elapsed);
        }
    }

    /// The table as text: per scope, each phase's calls, total ms, mean µs per request and share of
    /// the scope's total time.
    pub fn render(&self) -> String {
        use std::fmt::Write;
        let rows = self.rows.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let mut out = String::from(
            "# modhost --perf: time per phase, per scope (all requests, each route, each mod).\n\
             # `total` runs from a head's first byte to the answer ready; `send` follows it (to the last\n\
             # byte written), so its share can pass 100%. `guest` excludes the host calls listed below it.\n",
        );
        for (scope, row) in &rows {
            let total = row.trace.nanos[Phase::Total as usize].max(1) as f64;
            let requests = row.requests.max(1) as f64;
            let _ = writeln!(
                out,
                "\n[{scope}] requests {}  mean {:.1} us  max {:.1} us",
                row.requests,
                total / requests / 1e3,
                row.max_total as f64 / 1e3
            );
            let _ = writeln!(
                out,
                "  {:<18} {:>9} {:>12} {:>12} {:>7}",
                "phase", "calls", "total ms", "us/request", "share"
            );
            for phase in Phase::ALL {
                let (nanos, calls) = (row.trace.nanos[phase as usize], row.trace.calls[phase as usize]);
                if calls == 0 {
                    continue;
                }
                let _ = writeln!(
                    out,
                    "  {:<18} {:>9} {:>12.2} {:>12.1} {:>6.1}%",
                    phase.name(),
                    calls,
                    nanos as f64 / 1e6,
                    nanos as f64 / requests / 1e3,
                    100.0 * nanos as f64 / total
                );
            }
        }
        out
    }

    /// Writes the table to `path`, beside and renamed, so a reader never sees half a file.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let aside = path.with_extension("txt.new");
        std::fs::write(&aside, self.render())?;
        std::fs::rename(&aside, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_sum_per_scope_and_render_every_phase_seen() {
        let perf = Perf::default();
        let mut trace = Trace::default();
        trace.add(Phase::Guest, Duration::from_micros(300));
        trace.add(Phase::DbGet, Duration::from_micros(100));
        trace.add(Phase::DbGet, Duration::from_micros(100));
        trace.add(Phase::Total, Duration::from_micros(1000));
        assert_eq!(trace.host_calls(), Duration::from_micros(200));
        perf.record("/a", Some("m"), &trace);
        perf.record("/a", Some("m"), &trace);
        perf.record_late("/a", Phase::Send, Duration::from_micros(50));
        let text = perf.render();
        assert!(text.contains("[route /a] requests 2  mean 1000.0 us"), "{text}");
        assert!(text.contains("[mod m] requests 2"), "{text}");
        let db = text.lines().find(|l| l.trim_start().starts_with("db get")).unwrap();
        assert_eq!(db.split_whitespace().collect::<Vec<_>>(), ["db", "get", "4", "0.40", "200.0", "20.0%"]);
        assert!(text.contains("send"), "{text}");
        assert!(!text.contains("store set"), "phases never seen are left out: {text}");
    }
}
