//! `/metrics`: per-route request counters and latency histograms in the Prometheus text format
//! (version 0.0.4), always on.
//!
//! One uncontended lock per request (a few tens of nanoseconds) keeps this simple; the keys are route
//! patterns and status codes, never raw URLs, so a client cannot grow the table without bound. The
//! tables nest (route, then mod, then status) so that counting a request of a route seen before looks
//! its names up by reference and allocates nothing.

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

/// The counters of every route.
#[derive(Debug, Default)]
pub struct Metrics {
    inner: Mutex<Tables>,
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
}

/// The entry of `key`, made only when it is new: `entry` would take an owned key on every call.
fn entry_of<'m, V: Default>(map: &'m mut BTreeMap<String, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.to_owned(), V::default());
    }
    map.get_mut(key).expect("inserted above")
}

impl Metrics {
    /// Counts one answered request. `route` is the matched pattern (`-` when none matched) and `mod_id`
    /// the mod that ran (`-` when none did).
    pub fn observe(&self, route: &str, mod_id: &str, status: u16, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let mut tables = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let table = entry_of(&mut tables.routes, route);
        *entry_of(&mut table.requests, mod_id).entry(status).or_insert(0) += 1;
        let histogram = &mut table.latency;
        if let Some(bucket) = BUCKETS.iter().position(|b| seconds <= *b) {
            histogram.buckets[bucket] += 1;
        }
        histogram.count += 1;
        histogram.sum_seconds += seconds;
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
                        "modhost_requests_total{{route=\"{}\",mod=\"{}\",status=\"{status}\"}} {n}",
                        escape(route),
                        escape(mod_id)
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
                let errors = table.requests.values().flat_map(|s| s.range(400..)).map(|(_, n)| n).sum();
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
}
