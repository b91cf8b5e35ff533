//! `spt-routes SPT_GIT_DIR [COMMIT] > tests/data/spt-routes.json`: the route strings of SPT's static
//! and dynamic routers and the actions of its item-event routers, read from a clone of
//! `sp-tarkov/server-csharp` (a bare git dir is enough: files are read with `git show COMMIT:path`),
//! as the JSON `tests/tests/host/game_routes.rs` checks the game against. Regenerate it from a newer
//! SPT and the test names what the game does not answer yet.
//!
//! What it reads, and why it is enough:
//! - `Libraries/SPTarkov.Server.Core/Routers/{Static,Dynamic}/*.cs`: every `new RouteAction(…)` (and
//!   `RouteAction<T>`) names its route as its first argument, a string literal. Each is listed with its
//!   router file and kind, in file order, duplicates included (SPT lists two twice).
//! - `Routers/ItemEvents/*.cs`: `GetHandledRoutes` lists `new HandledRoute(Class.CONST, …)` (or
//!   `new(Class.CONST, …)`); the constants are resolved from `Models/Enums/ItemEventActions.cs` and
//!   `Models/Enums/HideoutEventActions.cs` (`public const string NAME = "Value";`).
//!   `TradingConfirm`'s `sell_to_trader` type (`ItemEventActions.SELL_TO_TRADER`) is added: SPT
//!   dispatches it inside `TradingConfirm`, and it is an action a client sends.

use anyhow::{Context, Result, bail};
use serde_json::json;
use std::collections::BTreeMap;
use std::process::Command;

const ROUTERS: &str = "Libraries/SPTarkov.Server.Core/Routers";
const ENUMS: &str = "Libraries/SPTarkov.Server.Core/Models/Enums";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if !(2..=3).contains(&args.len()) {
        bail!("usage: spt-routes SPT_GIT_DIR [COMMIT]   (the JSON goes to standard output)");
    }
    let git = Git { dir: args[1].clone() };
    let commit = git.run(&["rev-parse", args.get(2).map_or("HEAD", String::as_str)])?.trim().to_owned();
    let files = git.run(&["ls-tree", "-r", "--name-only", &commit, "--", ROUTERS])?;
    let mut routes = Vec::new();
    let mut actions = Vec::new();
    let constants = constants(&git, &commit)?;
    for path in files.lines() {
        let Some(name) = path.strip_suffix(".cs") else { continue };
        let file = name.rsplit('/').next().unwrap_or(name).to_owned();
        let kind = if path.contains("/Static/") {
            "static"
        } else if path.contains("/Dynamic/") {
            "dynamic"
        } else if path.contains("/ItemEvents/") {
            "item-event"
        } else {
            continue;
        };
        let source = git.show(&commit, path)?;
        if kind == "item-event" {
            for constant in handled_routes(&source) {
                let action = constants.get(&constant).with_context(|| format!("{path}: no constant {constant}"))?;
                actions.push(json!({ "action": action, "router": file }));
            }
        } else {
            for route in route_actions(&source) {
                routes.push(json!({ "route": route, "router": file, "kind": kind }));
            }
        }
    }
    let sell = constants.get("ItemEventActions.SELL_TO_TRADER").context("no ItemEventActions.SELL_TO_TRADER")?;
    actions.push(json!({ "action": sell, "router": "TradeItemEventRouter", "within": "TradingConfirm" }));
    let out = json!({
        "source": "sp-tarkov/server-csharp",
        "commit": commit,
        "generatedBy": "cargo run -p modhost-tests --bin spt-routes -- SPT_GIT_DIR [COMMIT]",
        "routes": routes,
        "actions": actions,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

struct Git {
    dir: String,
}

impl Git {
    fn run(&self, args: &[&str]) -> Result<String> {
        let out = Command::new("git").arg("--git-dir").arg(&self.dir).args(args).output().context("running git")?;
        if !out.status.success() {
            bail!("git {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
        }
        Ok(String::from_utf8(out.stdout)?)
    }

    fn show(&self, commit: &str, path: &str) -> Result<String> {
        // A BOM at the start of a C# file is not part of its text.
        Ok(self.run(&["show", &format!("{commit}:{path}")])?.trim_start_matches('\u{feff}').to_owned())
    }
}

/// The first string literal after each `RouteAction(` / `RouteAction<…>(` in `source`.
fn route_actions(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("RouteAction") {
        rest = &rest[at + "RouteAction".len()..];
        let mut tail = rest;
        if let Some(generic) = tail.strip_prefix('<') {
            let Some(end) = generic.find('>') else { break };
            tail = &generic[end + 1..];
        }
        let tail = tail.trim_start();
        let Some(args) = tail.strip_prefix('(') else { continue };
        let args = args.trim_start();
        let Some(literal) = args.strip_prefix('"') else { continue };
        if let Some(end) = literal.find('"') {
            out.push(literal[..end].to_owned());
        }
    }
    out
}

/// The constants (`Class.NAME`) that `GetHandledRoutes` in `source` lists, in order.
fn handled_routes(source: &str) -> Vec<String> {
    let Some(start) = source.find("GetHandledRoutes") else { return Vec::new() };
    let body = &source[start..];
    let end = body.find("HandleItemEvent").unwrap_or(body.len());
    let body = &body[..end];
    let mut out = Vec::new();
    for piece in body.split("new").skip(1) {
        let piece = piece.trim_start();
        let piece = piece.strip_prefix("HandledRoute").unwrap_or(piece).trim_start();
        let Some(args) = piece.strip_prefix('(') else { continue };
        let name: String =
            args.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.').collect();
        if name.contains('.') {
            out.push(name);
        }
    }
    out
}

/// `Class.NAME → value` for every `public const string NAME = "value";` of the two action enums.
fn constants(git: &Git, commit: &str) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for (class, path) in [
        ("ItemEventActions", format!("{ENUMS}/ItemEventActions.cs")),
        ("HideoutEventActions", format!("{ENUMS}/HideoutEventActions.cs")),
    ] {
        let source = git.show(commit, &path)?;
        for line in source.lines() {
            let Some(decl) = line.trim().strip_prefix("public const string ") else { continue };
            let Some((name, value)) = decl.split_once('=') else { continue };
            let value = value.trim().trim_end_matches(';').trim().trim_matches('"');
            out.insert(format!("{class}.{}", name.trim()), value.to_owned());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_literals_and_handled_constants_are_found() {
        let routes = r#"[ new RouteAction("/a", x), new RouteAction<T>(
                "/b/", y), new RouteAction(".jpg", z) ]"#;
        assert_eq!(route_actions(routes), ["/a", "/b/", ".jpg"]);
        let handled = "GetHandledRoutes() { return [ new HandledRoute(HideoutEventActions.HIDEOUT_UPGRADE, false),
            new(ItemEventActions.MOVE, false) ]; } HandleItemEvent(new Foo())";
        assert_eq!(handled_routes(handled), ["HideoutEventActions.HIDEOUT_UPGRADE", "ItemEventActions.MOVE"]);
    }
}
