//! What the loaded mods are allowed and limited to, for people (`modhost mods`) and tools (`--json`):
//! each mod's version, origin, grants, limits and routes, and the mods left out with why.

use crate::generation::Generation;
use crate::sandbox::LoadedMod;
use modhost_routes::MatchKind;
use serde_json::{Value, json};

/// One mod as `modhost mods` shows it.
fn describe(module: &LoadedMod, generation: &Generation) -> Value {
    let id = module.id();
    let info = generation.report.loaded.iter().find(|m| m.id == id);
    let limits = module.limits();
    let routes: Vec<Value> = generation
        .routes
        .routes()
        .into_iter()
        .filter(|(_, _, owner)| *owner == id)
        .map(|(path, kind, _)| json!({"path": path, "kind": if kind == MatchKind::Exact { "exact" } else { "prefix" }}))
        .collect();
    json!({
        "id": id,
        "version": info.map(|i| i.version.clone()),
        "name": info.and_then(|i| i.name.clone()),
        "authors": info.map(|i| i.authors.clone()),
        "requires": info.map(|i| i.requires.clone()),
        "origin": info.map(|i| format!("{:?}", i.origin)),
        "grants": module.grants().describe(),
        "limits": {
            "memory_mib": limits.memory_bytes >> 20,
            "call_timeout_ms": limits.call_deadline.as_millis() as u64,
            "init_timeout_ms": limits.init_deadline.as_millis() as u64,
            "hostcall_mib": limits.hostcall_bytes >> 20,
            "response_mib": limits.response_bytes >> 20,
            "instances": limits.mod_instances,
            "table_elements": limits.table_elements,
            "wasm_stack_kib": limits.wasm_stack_bytes >> 10,
            "quarantine_after": limits.quarantine_after,
        },
        "routes": routes,
        "quarantined": module.quarantined(),
    })
}

/// Every loaded mod of `generation` and every mod it left out, as JSON.
pub fn mods_json(generation: &Generation) -> Value {
    let loaded: Vec<Value> = generation.mods.iter().map(|m| describe(m, generation)).collect();
    let failed: Vec<Value> =
        generation.report.failed.iter().map(|left| json!({"mod": left.id, "reason": left.reason})).collect();
    json!({"loaded": loaded, "failed": failed})
}

/// The same, for people.
pub fn mods_text(generation: &Generation) -> String {
    use std::fmt::Write;
    let all = mods_json(generation);
    let mut out = String::new();
    for m in all["loaded"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "{} {} ({})",
            m["id"].as_str().unwrap_or(""),
            m["version"].as_str().unwrap_or("?"),
            m["origin"].as_str().unwrap_or("?")
        );
        let list =
            |key: &str| -> Vec<&str> { m[key].as_array().into_iter().flatten().filter_map(Value::as_str).collect() };
        if let Some(name) = m["name"].as_str() {
            let _ = writeln!(out, "  name: {name}");
        }
        for (key, label) in [("authors", "authors"), ("requires", "requires")] {
            let items = list(key);
            if !items.is_empty() {
                let _ = writeln!(out, "  {label}: {}", items.join(", "));
            }
        }
        let grants = list("grants");
        let _ = writeln!(
            out,
            "  grants: {}",
            if grants.is_empty() {
                "none (its own store namespace; reads the db)".to_owned()
            } else {
                grants.join("; ")
            }
        );
        let l = &m["limits"];
        let _ = writeln!(
            out,
            "  limits: memory {} MiB, call {} ms, init {} ms, host call {} MiB, answer {} MiB, {} instances, {} table elements, stack {} KiB, quarantine after {}",
            l["memory_mib"],
            l["call_timeout_ms"],
            l["init_timeout_ms"],
            l["hostcall_mib"],
            l["response_mib"],
            l["instances"],
            l["table_elements"],
            l["wasm_stack_kib"],
            l["quarantine_after"]
        );
        let routes: Vec<String> = m["routes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| format!("{}{}", r["path"].as_str().unwrap_or(""), if r["kind"] == "prefix" { "*" } else { "" }))
            .collect();
        let _ = writeln!(out, "  routes ({}): {}", routes.len(), routes.join(" "));
        if let Some(why) = m["quarantined"].as_str() {
            let _ = writeln!(out, "  QUARANTINED: {why}");
        }
    }
    for f in all["failed"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "left out: {}: {}", f["mod"].as_str().unwrap_or(""), f["reason"].as_str().unwrap_or(""));
    }
    out
}
