//! The hosts sharing a store (several hosts on PostgreSQL): every couple of seconds this host
//! announces itself in the store (its address, generation and mods with their versions) and reads
//! what the others announced; `/modhost/status` shows them (`cluster`), with a warning when the hosts
//! heard from lately do not serve the same mods at the same versions (each host's mods come from its
//! own root: a deployment that shipped one host a different set serves players differently).
//!
//! Off the request path: the status reads the last view this task kept ([`crate::session::Cluster`]).

use crate::app::App;
use crate::session::Cluster;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// How often a host announces itself.
const EVERY: Duration = Duration::from_secs(2);
/// Hosts heard from within this are compared (three announcements missed: gone).
const LIVE_MS: u64 = 7_000;

/// Announces this host every [`EVERY`] until the task is aborted.
pub(crate) fn start(app: Arc<App>, cluster: Arc<Cluster>, addr: String) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EVERY);
        loop {
            tick.tick().await;
            let generation = app.generation();
            let mods: BTreeMap<String, String> =
                generation.report.loaded.iter().map(|m| (m.id.clone(), m.version.clone())).collect();
            let report = json!({"addr": addr, "generation": generation.number, "mods": mods}).to_string();
            let (store, holder) = (app.store.clone(), cluster.holder().to_owned());
            match tokio::task::spawn_blocking(move || store.announce(&holder, &report)).await {
                Ok(Ok(seen)) => cluster.set_seen(view(cluster.holder(), &seen)),
                Ok(Err(e)) => tracing::warn!("announcing this host to the cluster: {e}"),
                Err(e) => tracing::warn!("announcing this host to the cluster: {e}"),
            }
        }
    })
}

/// The status's `cluster`: the hosts heard from lately and what each said, and a warning when the
/// live ones serve different mods.
fn view(me: &str, seen: &[modhost_store::HostSeen]) -> Value {
    let hosts: Vec<Value> = seen
        .iter()
        .map(|h| {
            let report: Value = serde_json::from_str(&h.report).unwrap_or(Value::Null);
            json!({"host": h.holder, "this": h.holder == me, "seen_ms_ago": h.age_ms,
                   "addr": report["addr"], "generation": report["generation"], "mods": report["mods"]})
        })
        .collect();
    let live: Vec<&Value> = hosts.iter().filter(|h| h["seen_ms_ago"].as_u64().is_some_and(|a| a <= LIVE_MS)).collect();
    let warning = live.windows(2).find(|pair| pair[0]["mods"] != pair[1]["mods"]).map(|pair| {
        format!(
            "hosts serve different mods: {} serves {}, {} serves {}",
            pair[0]["host"].as_str().unwrap_or("?"),
            pair[0]["mods"],
            pair[1]["host"].as_str().unwrap_or("?"),
            pair[1]["mods"]
        )
    });
    json!({"hosts": hosts, "warning": warning})
}

#[cfg(test)]
mod tests {
    use super::*;
    use modhost_store::HostSeen;

    fn host(name: &str, mods: Value, age_ms: u64) -> HostSeen {
        HostSeen {
            holder: name.into(),
            report: json!({"addr": "x", "generation": 1, "mods": mods}).to_string(),
            age_ms,
        }
    }

    #[test]
    fn hosts_serving_different_mods_are_warned_of_and_gone_ones_are_not_compared() {
        let same =
            view("a", &[host("a", json!({"emulator": "0.1.0"}), 0), host("b", json!({"emulator": "0.1.0"}), 100)]);
        assert_eq!(same["warning"], Value::Null);
        assert_eq!(same["hosts"][0]["this"], true);
        let differ =
            view("a", &[host("a", json!({"emulator": "0.1.0"}), 0), host("b", json!({"emulator": "0.2.0"}), 100)]);
        let warning = differ["warning"].as_str().unwrap();
        assert!(warning.contains("0.2.0") && warning.contains("b serves"), "{warning}");
        let gone = view("a", &[host("a", json!({"emulator": "0.1.0"}), 0), host("b", json!({}), 30_000)]);
        assert_eq!(gone["warning"], Value::Null, "b was last heard from 30 s ago");
        assert_eq!(gone["hosts"].as_array().unwrap().len(), 2);
    }
}
