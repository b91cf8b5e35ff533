//! `flea-bench`: what a flea search (`/client/ragfair/find`) costs with 50 000 offers on the market.
//!
//! The offers are written into the emulator's store before the server starts, in the layout the game
//! keeps (`plugins/emulator/src/ragfair/offers.rs`: one document per offer, one index document per
//! template, the templates' map and the `intId` index), spread over the generated templates (about
//! 17 offers each at the defaults, as SPT's market has 7-30 a template). Then one `modhost serve`
//! child answers, on one kept-alive connection, three kinds of search, each timed on its own:
//!
//! - `template`: one template's offers, cheapest first, a page of 15 (a click on an item);
//! - `category`: a handbook category holding every template, cheapest first, a page of 15 (its
//!   index documents are all read: the widest scope a category has);
//! - `everything`: no category, with `updateOfferCount` (the counts per template the client asks for
//!   when it opens the flea), a page of 15.
//!
//! Not a test: it prints p50 and p99 per kind.
//! `cargo run --release -p modhost-benches --bin flea-bench -- --help`.

use anyhow::{Context as _, ensure};
use clap::Parser;
use modhost_benches::stats::percentile;
use modhost_store::Store;
use modhost_tests::child::{ServeChild, sibling_modhost};
use modhost_tests::client::{Call, Client};
use modhost_tests::gamedb::{self, ROUBLES, flea::ROOT_CATEGORY};
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser, Debug)]
#[command(about = "ragfair/find p50/p99 with 50 000 offers in the store")]
struct Args {
    /// The modhost binary. Default: the one beside this binary.
    #[arg(long)]
    modhost: Option<PathBuf>,
    /// Generated item templates in the database (the offers are spread over them).
    #[arg(long, default_value_t = 3000)]
    items: u64,
    /// Offers in the store.
    #[arg(long, default_value_t = 50_000)]
    offers: u64,
    /// Measured searches per kind.
    #[arg(long, default_value_t = 300)]
    requests: usize,
    /// Searches per kind before measuring.
    #[arg(long, default_value_t = 20)]
    warmup: usize,
}

const SESSION: &str = "aaaaaaaaaaaaaaaaaaaaaaaa";
const FIND: &str = "/client/ragfair/find";

/// Offer `n` of template `tpl`, as the game stores a simulated player's offer, and its index entry.
fn offer(n: u64, tpl: &str, now: u64) -> (String, Value, Value) {
    let id = gamedb::hex_id(1 << 52 | n);
    let price = 1000 + (n * 7919) % 90_000;
    let quantity = 1 + n % 60;
    let ends = now + 3600 + n % 86_400;
    let offer = json!({
        "_id": id, "intId": n + 1, "root": gamedb::hex_id(1 << 53 | n),
        "items": [{"_id": gamedb::hex_id(1 << 53 | n), "_tpl": tpl, "parentId": "hideout", "slotId": "hideout",
                   "upd": {"StackObjectsCount": quantity}}],
        "requirements": [{"_tpl": ROUBLES, "count": price, "onlyFunctional": false}],
        "requirementsCost": price, "itemsCost": price, "summaryCost": price, "startTime": now, "endTime": ends,
        "sellInOnePiece": false, "unlimitedCount": false, "loyaltyLevel": 1, "locked": false, "quantity": quantity,
        "user": {"id": gamedb::hex_id(1 << 54 | n), "nickname": format!("Seller{n}"), "rating": (n % 20) as f64,
                 "memberType": 0, "selectedMemberCategory": 0, "isRatingGrowing": true, "aid": n},
        "sellResult": [], "_kind": "generated",
    });
    let entry = json!({"p": price, "e": ends, "q": quantity, "t": 2, "c": 1, "d": 100, "k": false,
                       "r": (n % 20) as f64, "i": n + 1});
    (id, offer, entry)
}

/// Times `requests` searches of `body` after `warmup` untimed ones; answers p50 and p99 in ms and the
/// last answer's `offersCount`.
async fn measure(client: &mut Client, body: &Value, warmup: usize, requests: usize) -> anyhow::Result<(f64, f64, u64)> {
    let call = Call::post(FIND, body.to_string().as_bytes()).session(SESSION);
    let mut took = Vec::with_capacity(requests);
    let mut count = 0;
    for n in 0..warmup + requests {
        let started = Instant::now();
        let reply = client.send(&call).await?;
        let elapsed = started.elapsed();
        ensure!(reply.status == 200, "find: status {}: {}", reply.status, reply.text());
        let answer: Value = serde_json::from_slice(&reply.body()).context("find: not JSON")?;
        ensure!(answer["err"] == 0, "find: {}", answer["errmsg"]);
        ensure!(answer["data"]["offers"].as_array().is_some_and(|o| o.len() == 15), "find: not a full page: {answer}");
        count = answer["data"]["offersCount"].as_u64().unwrap_or(0);
        if n >= warmup {
            took.push(elapsed.as_secs_f64() * 1e3);
        }
    }
    Ok((percentile(&took, 0.5), percentile(&took, 0.99), count))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let modhost = match args.modhost {
        Some(path) => path,
        None => sibling_modhost()?,
    };
    let root = tempfile::tempdir()?;
    let mut db = gamedb::database(args.items);
    // The market's own simulated offers would add to the bench's: none.
    db["configs"]["ragfair"]["dynamic"]["offerItemCount"]["min"] = json!(0);
    std::fs::write(root.path().join("db.json"), db.to_string())?;

    let written = Instant::now();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
    {
        let store = Store::open(&root.path().join("store"), false)?;
        let mut by_tpl: Vec<Map<String, Value>> = vec![Map::new(); args.items as usize];
        let mut ints = Map::new();
        for n in 0..args.offers {
            let t = n % args.items;
            let (id, offer, entry) = offer(n, &gamedb::hex_id(t), now);
            store.set("emulator", &format!("flea.offer.{id}"), offer.to_string().as_bytes())?;
            by_tpl[t as usize].insert(id.clone(), entry);
            ints.insert((n + 1).to_string(), json!(id));
        }
        let mut tpls = Map::new();
        for (t, entries) in by_tpl.into_iter().enumerate() {
            let tpl = gamedb::hex_id(t as u64);
            store.set("emulator", &format!("flea.tpl.{tpl}"), Value::Object(entries).to_string().as_bytes())?;
            tpls.insert(tpl, json!(gamedb::flea::CATEGORY));
        }
        store.set("emulator", "flea.tpls", Value::Object(tpls).to_string().as_bytes())?;
        store.set("emulator", "flea.int", Value::Object(ints).to_string().as_bytes())?;
        store.set("emulator", "flea.next", (args.offers + 1).to_string().as_bytes())?;
    }
    eprintln!(
        "{} offers over {} templates written in {:.1} s",
        args.offers,
        args.items,
        written.elapsed().as_secs_f64()
    );

    let server = ServeChild::spawn(&modhost, root.path(), &[])?;
    let mut client = Client::connect(server.addr).await?;
    let kinds = [
        (
            "template",
            json!({"page": 0, "limit": 15, "sortType": 5, "sortDirection": 0, "handbookId": gamedb::hex_id(7)}),
        ),
        ("category", json!({"page": 0, "limit": 15, "sortType": 5, "sortDirection": 0, "handbookId": ROOT_CATEGORY})),
        (
            "everything",
            json!({"page": 0, "limit": 15, "sortType": 5, "sortDirection": 0, "handbookId": "", "updateOfferCount": true}),
        ),
    ];
    println!(
        "ragfair/find, {} offers in the store, {} templates, {} requests a kind",
        args.offers, args.items, args.requests
    );
    println!("{:<12} {:>10} {:>10} {:>10}", "kind", "offers", "p50 ms", "p99 ms");
    for (kind, body) in kinds {
        let (p50, p99, count) = measure(&mut client, &body, args.warmup, args.requests).await?;
        println!("{kind:<12} {count:>10} {p50:>10.2} {p99:>10.2}");
    }
    Ok(())
}
