//! `/metrics`: per-route request counters and latency histograms in the Prometheus text format
//! (version 0.0.4), always on.
//!
//! One uncontended lock per request (a few tens of nanoseconds) keeps this simple. Nothing a client
//! or a mod chooses can grow the table without bound: the keys are route patterns, never raw URLs;
//! statuses are the codes of [`KNOWN_STATUSES`] and, for any other, their class (`4xx`), since a mod
//! may answer any of 800 codes on each of its 4096 routes; and the routes of a retired generation
//! are dropped when the next one serves ([`Metrics::retain_routes`]). The tables nest (route, then
//! mod, then status) so that counting a request of a route seen before looks its names up by
//! reference and allocates nothing.
//!
//! Each route also keeps its latency over the last ten minutes (`series.rs`), for the status page's
//! plots; it lives in the same table, so `retain_routes` bounds it too.
//!
//! Guest memory (`modhost_guest_memory_*`) comes from the sandbox's budget: what each mod holds now,
//! its peak, and how often its growth waited or was refused.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 14] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// One route's latency histogram.
#[derive(Debug, Default, Clone)]
struct Histogram {
    /// Observations per bucket (not cumulative; summed when rendered).
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum_seconds: f64,
}

/// Status codes counted under their own number; any other is counted under its class.
const KNOWN_STATUSES: [u16; 20] =
    [200, 201, 204, 301, 302, 304, 400, 401, 403, 404, 405, 408, 409, 413, 429, 431, 500, 502, 503, 504];

/// A status's key in the table: its code when it is known, else its class (`4` for `4xx`) plus 1000,
/// so classes sort after codes and a key never collides with a code.
fn status_key(status: u16) -> u16 {
    if KNOWN_STATUSES.contains(&status) { status } else { 1000 + status / 100 }
}

/// A status key as its label: `404`, or `4xx` for a folded class.
fn status_label(key: u16) -> String {
    if key >= 1000 { format!("{}xx", key - 1000) } else { key.to_string() }
}

/// Whether a status key means an error (4xx and up).
fn is_error(key: u16) -> bool {
    if key >= 1000 { key - 1000 >= 4 } else { key >= 400 }
}

/// The counters of every route.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Tables>,
    /// The server-wide guest memory budget, when there is one.
    memory: Option<std::sync::Arc<crate::sandbox::MemoryBudget>>,
}

#[derive(Debug, Default)]
struct Tables {
    routes: BTreeMap<String, RouteTable>,
}

/// One route's counters.
#[derive(Debug, Default)]
struct RouteTable {
    /// mod → status → requests.
    requests: BTreeMap<String, BTreeMap<u16, u64>>,
    /// Latency, head to answer ready.
    latency: Histogram,
    /// The same over time: the last ten minutes, in 10 s slots.
    series: crate::series::Series,
}

/// The entry of `key`, made only when it is new: `entry` would take an owned key on every call.
fn entry_of<'m, V: Default>(map: &'m mut BTreeMap<String, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.to_owned(), V::default());
    }
    map.get_mut(key).expect("inserted above")
}

impl Metrics {
    /// Metrics that also render the guest memory budget's figures.
    pub(crate) fn with_memory(memory: Option<std::sync::Arc<crate::sandbox::MemoryBudget>>) -> Metrics {
        Metrics { inner: Mutex::default(), memory }
    }

    /// Drops the series of every route `keep` does not name (host routes stay): called when a new
    /// generation serves, so the routes of retired mods do not stay in the table forever.
    pub(crate) fn retain_routes(&self, keep: impl Fn(&str) -> bool) {
        let mut tables = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        tables.routes.retain(|route, _| keep(route) || route == "-" || modhost_routes::host_path(route).is_some());
    }

    /// Counts one answered request. `route` is the matched pattern (`-` when none matched) and `mod_id`
    /// the mod that ran (`-` when none did).
    pub fn observe(&self, route: &str, mod_id: &str, status: u16, elapsed: Duration) {
        self.observe_at(route, mod_id, status, elapsed, std::time::SystemTime::now());
    }

    /// [`Metrics::observe`] at a given wall-clock time (the series' slot).
    fn observe_at(&self, route: &str, mod_id: &str, status: u16, elapsed: Duration, at: std::time::SystemTime) {
        let seconds = elapsed.as_secs_f64();
        let slot = crate::series::slot_of(at);
        let mut tables = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let table = entry_of(&mut tables.routes, route);
        *entry_of(&mut table.requests, mod_id).entry(status_key(status)).or_insert(0) += 1;
        let histogram = &mut table.latency;
        if let Some(bucket) = BUCKETS.iter().position(|b| seconds <= *b) {
            histogram.buckets[bucket] += 1;
        }
        histogram.count += 1;
        histogram.sum_seconds += seconds;
        table.series.observe(slot, seconds);
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let tables = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out = String::new();
        out.push_str("# HELP modhost_requests_total Requests answered, by route, mod and status.\n");
        out.push_str("# TYPE modhost_requests_total counter\n");
        for (route, table) in &tables.routes {
            for (mod_id, statuses) in &table.requests {
                for (status, n) in statuses {
                    let _ = writeln!(
                        out,
                        "modhost_requests_total{{route=\"{}\",mod=\"{}\",status=\"{}\"}} {n}",
                        escape(route),
                        escape(mod_id),
                        status_label(*status)
                    );
                }
            }
        }
        out.push_str("# HELP modhost_request_duration_seconds Time from a request's head to its answer, by route.\n");
        out.push_str("# TYPE modhost_request_duration_seconds histogram\n");
        for (route, table) in &tables.routes {
            let (route, h) = (escape(route), &table.latency);
            let mut cumulative = 0;
            for (bound, n) in BUCKETS.iter().zip(h.buckets) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "modhost_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {cumulative}"
                );
            }
            let _ =
                writeln!(out, "modhost_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}", h.count);
            let _ = writeln!(out, "modhost_request_duration_seconds_sum{{route=\"{route}\"}} {}", h.sum_seconds);
            let _ = writeln!(out, "modhost_request_duration_seconds_count{{route=\"{route}\"}} {}", h.count);
        }
        drop(tables);
        if let Some(memory) = &self.memory {
            render_memory(&mut out, memory);
        }
        out
    }
}

/// One route's totals, for the status page.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RouteStats {
    /// Requests answered.
    pub count: u64,
    /// Of those, answered with a status of 400 or more.
    pub errors: u64,
    /// Mean time from head to answer, in milliseconds.
    pub mean_ms: f64,
    /// The median is at most this (`le`, as Prometheus says): the upper bound of the histogram bucket
    /// it falls in, in milliseconds; `None` past the last bucket (10 s).
    pub p50_le_ms: Option<f64>,
    /// The 99th percentile, the same way.
    pub p99_le_ms: Option<f64>,
}

impl Metrics {
    /// Totals per route pattern.
    pub fn route_stats(&self) -> BTreeMap<String, RouteStats> {
        let tables = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let quantile = |h: &Histogram, q: f64| {
            let rank = (q * h.count as f64).ceil().max(1.0) as u64;
            let mut cumulative = 0;
            BUCKETS.iter().zip(h.buckets).find_map(|(bound, n)| {
                cumulative += n;
                (cumulative >= rank).then_some(bound * 1e3)
            })
        };
        tables
            .routes
            .iter()
            .map(|(route, table)| {
                let h = &table.latency;
                let errors =
                    table.requests.values().flat_map(|s| s.iter()).filter(|(k, _)| is_error(**k)).map(|(_, n)| n).sum();
                let stats = RouteStats {
                    count: h.count,
                    errors,
                    mean_ms: if h.count == 0 { 0.0 } else { h.sum_seconds * 1e3 / h.count as f64 },
                    p50_le_ms: quantile(h, 0.5),
                    p99_le_ms: quantile(h, 0.99),
                };
                (route.clone(), stats)
            })
            .collect()
    }
}

impl Metrics {
    /// Latency over the last ten minutes per route pattern (the status page's plots).
    pub fn route_series(&self) -> BTreeMap<String, crate::series::LatencySeries> {
        let now = crate::series::slot_of(std::time::SystemTime::now());
        let tables = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        tables.routes.iter().map(|(route, table)| (route.clone(), table.series.view(now))).collect()
    }
}

/// One per-mod series of the memory budget: its name, type, help, and how to read it.
type Series = (&'static str, &'static str, &'static str, fn(&crate::sandbox::ModUsage) -> u64);

/// The guest memory budget: its size and use, and per mod what it holds, its peak, its waits and
/// refusals (a mod id is a validated id, but escaped all the same).
fn render_memory(out: &mut String, memory: &crate::sandbox::MemoryBudget) {
    out.push_str("# HELP modhost_guest_memory_budget_bytes The server-wide budget of guest linear memory.\n");
    out.push_str("# TYPE modhost_guest_memory_budget_bytes gauge\n");
    let _ = writeln!(out, "modhost_guest_memory_budget_bytes {}", memory.total_bytes());
    out.push_str("# HELP modhost_guest_memory_in_use_bytes Guest linear memory held now, in all and by mod.\n");
    out.push_str("# TYPE modhost_guest_memory_in_use_bytes gauge\n");
    let _ = writeln!(out, "modhost_guest_memory_in_use_bytes {}", memory.in_use());
    let usage = memory.usage();
    for m in &usage {
        let _ = writeln!(out, "modhost_guest_memory_in_use_bytes{{mod=\"{}\"}} {}", escape(&m.id), m.in_use);
    }
    let series: [Series; 3] = [
        ("modhost_guest_memory_peak_bytes", "gauge", "The most guest memory a mod held at once.", |m| m.peak as u64),
        ("modhost_guest_memory_waits_total", "counter", "Memory growths that waited for the budget.", |m| m.waits),
        ("modhost_guest_memory_refusals_total", "counter", "Memory growths refused (503) for want of budget.", |m| {
            m.refusals
        }),
    ];
    for (name, kind, help, value) in series {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for m in &usage {
            let _ = writeln!(out, "{name}{{mod=\"{}\"}} {}", escape(&m.id), value(m));
        }
    }
}

/// A label value as the text format wants it: backslash, quote and newline escaped.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_cumulative_buckets() {
        let m = Metrics::default();
        m.observe("/a", "m", 200, Duration::from_micros(300));
        m.observe("/a", "m", 200, Duration::from_millis(3));
        m.observe("/a", "m", 500, Duration::from_secs(60));
        m.observe("/q\"", "-", 404, Duration::from_micros(1));
        let text = m.render();
        assert!(text.contains("modhost_requests_total{route=\"/a\",mod=\"m\",status=\"200\"} 2"), "{text}");
        assert!(text.contains("modhost_requests_total{route=\"/a\",mod=\"m\",status=\"500\"} 1"), "{text}");
        assert!(text.contains("bucket{route=\"/a\",le=\"0.0005\"} 1\n"), "{text}");
        assert!(text.contains("bucket{route=\"/a\",le=\"0.005\"} 2\n"), "{text}");
        assert!(text.contains("bucket{route=\"/a\",le=\"10\"} 2\n"), "{text}");
        assert!(text.contains("bucket{route=\"/a\",le=\"+Inf\"} 3\n"), "{text}");
        assert!(text.contains("count{route=\"/a\"} 3\n"), "{text}");
        assert!(text.contains("route=\"/q\\\"\""), "label values are escaped: {text}");
        let stats = m.route_stats();
        let a = &stats["/a"];
        assert_eq!((a.count, a.errors), (3, 1));
        assert_eq!((a.p50_le_ms, a.p99_le_ms), (Some(5.0), None), "{a:?}");
        assert!((a.mean_ms - 20001.1).abs() < 0.01, "{a:?}");
        assert_eq!(stats["/q\""].p50_le_ms, Some(0.5));
    }

    #[test]
    fn mod_chosen_statuses_fold_into_classes_and_retired_routes_are_dropped() {
        let m = Metrics::default();
        // A mod may answer any of 800 codes on each of its routes: the series stay a fixed set.
        for status in 200..1000 {
            m.observe("/a", "m", status, Duration::from_micros(1));
        }
        let text = m.render();
        let series = text.lines().filter(|l| l.starts_with("modhost_requests_total{")).count();
        assert_eq!(series, KNOWN_STATUSES.len() + 8, "{text}");
        assert!(text.contains("status=\"404\"} 1\n") && text.contains("status=\"4xx\"} 90\n"), "{text}");
        assert_eq!(m.route_stats()["/a"].errors, 600);
        m.observe("/b", "m", 200, Duration::from_micros(1));
        m.observe("/metrics", "-", 200, Duration::from_micros(1));
        m.retain_routes(|route| route == "/b");
        let routes: Vec<String> = m.route_stats().into_keys().collect();
        assert_eq!(routes, ["/b", "/metrics"]);
        let series: Vec<String> = m.route_series().into_keys().collect();
        assert_eq!(series, ["/b", "/metrics"], "a retired route's latency series goes with it");
    }

    #[test]
    fn latency_over_time_is_kept_per_route_in_slots() {
        use std::time::{SystemTime, UNIX_EPOCH};
        let m = Metrics::default();
        let now = SystemTime::now();
        let back = |secs| now - Duration::from_secs(secs);
        m.observe_at("/a", "m", 200, Duration::from_millis(2), back(30));
        m.observe_at("/a", "m", 200, Duration::from_millis(4), back(30));
        m.observe_at("/a", "m", 200, Duration::from_millis(1), now);
        m.observe_at("/b", "m", 200, Duration::from_millis(1), back(3600));
        let series = m.route_series();
        let a = &series["/a"];
        assert_eq!(a.points.len(), 2, "{a:?}");
        assert_eq!(a.points[0].count, 2);
        assert!((a.points[0].mean_ms - 3.0).abs() < 1e-6 && (a.points[0].max_ms - 4.0).abs() < 1e-6, "{a:?}");
        let slot_now = now.duration_since(UNIX_EPOCH).unwrap().as_secs() / crate::series::SLOT_SECS;
        assert_eq!(a.now, slot_now * crate::series::SLOT_SECS);
        assert!(series["/b"].points.is_empty(), "an hour ago is out of the window: {:?}", series["/b"]);
    }
}
