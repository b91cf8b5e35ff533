//! `profile-bench`: what a `Move` costs as the profile grows. A new profile, then profiles padded with
//! SPT-shaped items to about 100 KB, 400 KB and 1 MB, each on its own `modhost serve --perf` child at
//! the same database; per size, the Move's client p50 on one kept-alive connection and the server's
//! own time per Move (`--perf`: total, guest, store calls), with ratios to the new profile.
//!
//! The padded profiles are written into the store in SPT's shape (`Inventory.items` an array, as
//! `profile/list` answers and as a player brings a character in) before the server starts, so the
//! emulator's conversion on first touch runs too (in the warm-up, which is not measured). The padding
//! sits in the stash below the rows the Moves use: the stash holds most of a late-game profile, so a
//! check that read all of the stash's children would show here.
//!
//! Not a test: it prints a table. `cargo run --release -p modhost-benches --bin profile-bench -- --help`.

use anyhow::{Context as _, bail, ensure};
use clap::Parser;
use modhost_benches::stats::median;
use modhost_store::Store;
use modhost_tests::child::{ServeChild, sibling_modhost};
use modhost_tests::client::{Call, Client, Reply};
use modhost_tests::gamedb::{self, ROUBLES, STASH};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Parser, Debug)]
#[command(about = "A Move's cost on a new profile and on profiles padded to ~100 KB, ~400 KB and ~1 MB")]
struct Args {
    /// The modhost binary. Default: the one beside this binary.
    #[arg(long)]
    modhost: Option<PathBuf>,
    /// Generated item templates in the database.
    #[arg(long, default_value_t = 3000)]
    items: u64,
    /// Padded sizes to measure, in KB of profile (the new profile is always measured first).
    #[arg(long, value_delimiter = ',', default_value = "100,400,1000")]
    sizes: Vec<usize>,
    /// Measured Moves per size.
    #[arg(long, default_value_t = 300)]
    moves: u32,
    /// Moves before measuring (the first converts a padded profile).
    #[arg(long, default_value_t = 30)]
    warmup: u32,
}

const SESSION: &str = "aaaaaaaaaaaaaaaaaaaaaaaa";
const MOVING: &str = "/client/game/profile/items/moving";
/// The stash's rows in the bench's database: the 68 a real stash has, where the Moves go, and room
/// below them for the padding.
const STASH_ROWS: i64 = 12_000;
/// The rows the Moves use (a standard stash's).
const MOVE_ROWS: u32 = 68;

fn post(path: &str, body: &Value) -> Call {
    Call::post(path, body.to_string().as_bytes()).session(SESSION)
}

/// The answer's JSON, checked: 200 and envelope `err` 0.
fn envelope(reply: &Reply, what: &str) -> anyhow::Result<Value> {
    ensure!(reply.status == 200, "{what}: status {}: {}", reply.status, reply.text());
    let value: Value = serde_json::from_slice(&reply.body()).with_context(|| format!("{what}: not JSON"))?;
    ensure!(value["err"] == 0, "{what}: err {}: {}", value["err"], value["errmsg"]);
    Ok(value)
}

/// One size's results.
struct Measured {
    label: String,
    profile_bytes: usize,
    items: usize,
    client_p50_ms: f64,
    /// Per `--perf` phase, over the measured Moves only: µs per Move and calls per Move.
    server: Vec<(String, f64, f64)>,
}

impl Measured {
    fn phase(&self, name: &str) -> f64 {
        self.server.iter().find(|(n, _, _)| n == name).map_or(0.0, |(_, us, _)| *us)
    }

    fn calls(&self, name: &str) -> f64 {
        self.server.iter().find(|(n, _, _)| n == name).map_or(0.0, |(_, _, calls)| *calls)
    }
}

/// A phase of a `--perf` block: its name, total ms and calls.
type PhaseTotal = (String, f64, f64);

/// The `[route …/items/moving]` block of a `--perf` table: requests, and per phase (total ms, calls).
fn perf_block(text: &str) -> Option<(u64, Vec<PhaseTotal>)> {
    let header = format!("[route {MOVING}] requests ");
    let mut lines = text.lines().skip_while(|l| !l.starts_with(&header));
    let first = lines.next()?;
    let requests = first[header.len()..].split_whitespace().next()?.parse().ok()?;
    let mut phases = Vec::new();
    for line in lines.skip(1).take_while(|l| !l.trim().is_empty()) {
        // `  <phase name, maybe with spaces> <calls> <total ms> <us/request> <share>%`
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() < 5 {
            continue;
        }
        let name = words[..words.len() - 4].join(" ");
        phases.push((name, words[words.len() - 3].parse().ok()?, words[words.len() - 4].parse().ok()?));
    }
    Some((requests, phases))
}

/// Waits until the server's `perf.txt` shows `requests` Moves, and answers its Move block.
async fn perf_at(root: &Path, requests: u64) -> anyhow::Result<Vec<PhaseTotal>> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        if let Ok(text) = std::fs::read_to_string(root.join("perf.txt"))
            && let Some((seen, phases)) = perf_block(&text)
            && seen == requests
        {
            return Ok(phases);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("perf.txt never showed {requests} Moves")
}

/// A player's profile padded with SPT-shaped items to at least `bytes`: items of the generated
/// templates (1-4 wide, 1-3 high) packed row by row into the stash below the Moves' rows, every
/// fourth with two parts inside it (as a weapon's mods sit, without a location).
fn padded(base: &Value, bytes: usize) -> Value {
    let mut profile = base.clone();
    let stash = profile["Inventory"]["stash"].as_str().expect("a stash").to_owned();
    let (mut x, mut y, mut shelf) = (0i64, MOVE_ROWS as i64, 1i64);
    let mut n = 0u64;
    let mut size = profile.to_string().len();
    let items = profile["Inventory"]["items"].as_array_mut().expect("SPT's array");
    while size < bytes {
        let template = n % 3000;
        let (w, h) = (1 + (template % 4) as i64, 1 + (template % 3) as i64);
        if x + w > 10 {
            (x, y, shelf) = (0, y + shelf, 1);
        }
        assert!(y + h <= STASH_ROWS, "the bench's stash is too small for the padding");
        let id = gamedb::hex_id(1 << 50 | n);
        let item = json!({
            "_id": id, "_tpl": gamedb::hex_id(template), "parentId": stash, "slotId": "hideout",
            "location": {"x": x, "y": y, "r": "Horizontal"},
            "upd": {"StackObjectsCount": 1, "SpawnedInSession": false},
        });
        size += item.to_string().len() + 1;
        items.push(item);
        if n.is_multiple_of(4) {
            for (k, slot) in ["mod_magazine", "mod_scope"].into_iter().enumerate() {
                let part = json!({
                    "_id": gamedb::hex_id(1 << 51 | n << 1 | k as u64), "_tpl": gamedb::hex_id((template + 1 + k as u64) % 3000),
                    "parentId": id, "slotId": slot, "upd": {"SpawnedInSession": false},
                });
                size += part.to_string().len() + 1;
                items.push(part);
            }
        }
        x += w;
        shelf = shelf.max(h);
        n += 1;
    }
    profile
}

/// The roubles' and stash's ids in a profile as `profile/list` answers it.
fn ids(profile: &Value) -> anyhow::Result<(String, String)> {
    let items = profile["Inventory"]["items"].as_array().context("profile/list answered no item array")?;
    let roubles = items.iter().find(|i| i["_tpl"] == ROUBLES).context("the profile has no roubles")?;
    let stash = profile["Inventory"]["stash"].as_str().context("the profile has no stash")?;
    Ok((roubles["_id"].as_str().context("roubles without an id")?.to_owned(), stash.to_owned()))
}

/// The session's profile as `profile/list` answers it (binding the session to the only profile there
/// is, the first time).
async fn list(client: &mut Client) -> anyhow::Result<Value> {
    let listed = envelope(&client.send(&post("/client/game/profile/list", &json!({}))).await?, "profile/list")?;
    Ok(listed["data"][0].clone())
}

/// Runs one size on a fresh root: `profile` (SPT's shape) written into the store first, or, when
/// `None`, a profile created over the wire. Answers the results and the profile as listed.
async fn measure(
    modhost: &Path,
    db: &[u8],
    label: &str,
    profile: Option<&Value>,
    args: &Args,
) -> anyhow::Result<(Measured, Value)> {
    let root = tempfile::tempdir()?;
    std::fs::write(root.path().join("db.json"), db)?;
    if let Some(profile) = profile {
        // As `modhost store put` would: the server is not running, so the store is ours to open.
        let store = Store::open(&root.path().join("store"), false)?;
        let uid = profile["_id"].as_str().context("the profile has no _id")?;
        store.set("emulator", &format!("profile.{uid}"), &serde_json::to_vec(profile)?)?;
    }
    let server = ServeChild::spawn(modhost, root.path(), &["--perf"])?;
    let mut client = Client::connect(server.addr).await?;
    let mut booted = false;
    for _ in 0..3000 {
        if let Ok(reply) = client.send(&post("/client/game/config", &json!({}))).await
            && envelope(&reply, "config").is_ok()
        {
            booted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        client = Client::connect(server.addr).await?;
    }
    ensure!(booted, "the server did not boot; its log ended:\n{}", server.tail());
    if profile.is_none() {
        let create = json!({"nickname": "BenchRunner", "side": "Usec", "headId": "x"});
        envelope(&client.send(&post("/client/game/profile/create", &create)).await?, "profile/create")?;
    }
    // Lists (binding the session to the only profile there is) in SPT's shape.
    let listed = list(&mut client).await?;
    let (roubles, stash) = ids(&listed)?;
    let profile_bytes = listed.to_string().len();
    let items = listed["Inventory"]["items"].as_array().map_or(0, Vec::len);

    let mut latencies = Vec::new();
    let mut perf_before = Vec::new();
    let (mut placed, mut last) = (1u32, (0, 0));
    for round in 0..args.warmup + args.moves {
        // The server closes a kept-alive connection after 512 requests: a fresh one, outside the
        // timing, well before that.
        if round % 400 == 0 {
            client = Client::connect(server.addr).await?;
        }
        if round == args.warmup {
            perf_before = perf_at(root.path(), u64::from(args.warmup)).await?;
        }
        let (x, y) = (placed % 10, (placed / 10) % MOVE_ROWS);
        placed += 1;
        let action = json!({"Action": "Move", "item": roubles,
            "to": {"id": stash, "container": "hideout", "location": {"x": x, "y": y, "r": "Horizontal"}}});
        let call = post(MOVING, &json!({"data": [action], "tm": 1}));
        let started = Instant::now();
        let reply = client.send(&call).await?;
        let took = started.elapsed();
        let answer = envelope(&reply, "Move")?;
        ensure!(answer["data"]["warnings"] == json!([]), "a Move was refused: {}", answer["data"]["warnings"]);
        let change = &answer["data"]["profileChanges"].as_object().and_then(|c| c.values().next()).cloned();
        let change = change.as_ref().map(|c| &c["items"]["change"][0]).cloned().unwrap_or_default();
        ensure!(
            change["_id"] == roubles.as_str() && change["location"] == json!({"x": x, "y": y, "r": "Horizontal"}),
            "the Move's answer does not show the roubles at ({x},{y}): {change}"
        );
        if round >= args.warmup {
            latencies.push(took.as_secs_f64() * 1e3);
        }
        last = (x, y);
    }
    let perf_after = perf_at(root.path(), u64::from(args.warmup + args.moves)).await?;
    let moves = f64::from(args.moves);
    let server_us: Vec<(String, f64, f64)> = perf_after
        .iter()
        .map(|(name, ms, calls)| {
            let (ms_before, calls_before) =
                perf_before.iter().find(|(n, _, _)| n == name).map_or((0.0, 0.0), |(_, m, c)| (*m, *c));
            (name.clone(), (ms - ms_before) * 1e3 / moves, (calls - calls_before) / moves)
        })
        .collect();

    // What the client reads afterwards is SPT's shape, holding every item, with the last move applied.
    client = Client::connect(server.addr).await?;
    let after = list(&mut client).await?;
    let listed_items = after["Inventory"]["items"].as_array().context("profile/list answered no item array")?;
    ensure!(listed_items.len() == items, "profile/list lost items: {} of {items}", listed_items.len());
    let moved = listed_items.iter().find(|i| i["_id"] == roubles.as_str()).context("the roubles are gone")?;
    ensure!(
        moved["location"] == json!({"x": last.0, "y": last.1, "r": "Horizontal"}),
        "profile/list does not show the last move: {moved}"
    );
    drop(server);
    let measured = Measured {
        label: label.to_owned(),
        profile_bytes,
        items,
        client_p50_ms: median(&latencies),
        server: server_us,
    };
    Ok((measured, listed))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let modhost = args.modhost.clone().map_or_else(sibling_modhost, Ok)?;
    let mut db = gamedb::database(args.items);
    db["templates"]["items"][STASH]["_props"]["Grids"][0]["_props"]["cellsV"] = json!(STASH_ROWS);
    let db = serde_json::to_vec(&db)?;

    eprintln!("new profile…");
    let (new, base) = measure(&modhost, &db, "new", None, &args).await?;
    let mut rows = vec![new];
    for kb in &args.sizes {
        eprintln!("padded to {kb} KB…");
        let profile = padded(&base, kb * 1000);
        rows.push(measure(&modhost, &db, &format!("~{kb} KB"), Some(&profile), &args).await?.0);
    }

    println!(
        "\nitems/moving, one Move a request, {} templates, {} measured Moves per size (after {} warm-up)",
        args.items, args.moves, args.warmup
    );
    println!(
        "{:<9} {:>10} {:>7} {:>13} {:>7} {:>15} {:>7} {:>10} {:>12} {:>12}",
        "profile",
        "bytes",
        "items",
        "client p50 ms",
        "ratio",
        "server total µs",
        "ratio",
        "guest µs",
        "store get µs",
        "store set µs"
    );
    let (base_client, base_server) = (rows[0].client_p50_ms, rows[0].phase("total"));
    for row in &rows {
        println!(
            "{:<9} {:>10} {:>7} {:>13.3} {:>6.2}x {:>15.1} {:>6.2}x {:>10.1} {:>12.1} {:>12.1}",
            row.label,
            row.profile_bytes,
            row.items,
            row.client_p50_ms,
            row.client_p50_ms / base_client,
            row.phase("total"),
            row.phase("total") / base_server,
            row.phase("guest"),
            row.phase("store get"),
            row.phase("store set"),
        );
    }
    // Every phase the server saw, per Move, for where the time goes.
    println!("\nserver time per Move by --perf phase, µs (calls per Move)");
    let mut phases: Vec<&str> = Vec::new();
    for row in &rows {
        for (name, _, _) in &row.server {
            if !phases.contains(&name.as_str()) {
                phases.push(name);
            }
        }
    }
    print!("{:<18}", "phase");
    for row in &rows {
        print!(" {:>16}", row.label);
    }
    println!();
    for phase in phases {
        print!("{phase:<18}");
        for row in &rows {
            print!(" {:>9.1} ({:>4.1})", row.phase(phase), row.calls(phase));
        }
        println!();
    }
    Ok(())
}
