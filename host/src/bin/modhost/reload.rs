//! `modhost reload`: ask the server on 127.0.0.1:PORT to reload its mods and db.json, print the outcome,
//! exit 1 when the reload was refused (the old mods keep serving).

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::Full;
use modhost::ReloadOutcome;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

/// A reload compiles changed mods: a JavaScript one takes tens of seconds the first time.
const DEADLINE: Duration = Duration::from_secs(600);

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The server's port.
    #[arg(long, env = "MODHOST_PORT", default_value_t = 6969)]
    port: u16,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    let outcome = crate::runtime()?
        .block_on(request(addr))
        .with_context(|| format!("no modhost server answers on port {}", args.port))?;
    print(&outcome?)
}

/// Asks the server at `addr` to reload. The outer error: no answer; the inner: an answer that is not
/// an outcome (the host's refusal, or not modhost).
pub(crate) async fn request(addr: SocketAddr) -> anyhow::Result<anyhow::Result<(ReloadOutcome, u16)>> {
    let request = hyper::Request::post("/modhost/reload")
        .header(hyper::header::HOST, addr.to_string())
        .header(modhost::status::RELOAD_HEADER, "1")
        .body(Full::new(Bytes::new()))?;
    let answer = modhost::client::send(addr, request, DEADLINE).await?;
    let body = String::from_utf8_lossy(&answer.body);
    Ok(match serde_json::from_str::<ReloadOutcome>(&body) {
        Ok(outcome) => Ok((outcome, answer.status)),
        // Not an outcome: the host's refusal (`{"error": …}`, 403 without the header), or not modhost.
        Err(_) => {
            let why = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["error"].as_str().map(str::to_owned))
                .unwrap_or_else(|| body.clone().into_owned());
            Err(anyhow::anyhow!("reload refused ({}): {why}", answer.status))
        }
    })
}

/// Prints a reload's outcome; a refused reload is the error.
pub(crate) fn print((outcome, status): &(ReloadOutcome, u16)) -> anyhow::Result<()> {
    match (outcome.ok, &outcome.reason) {
        (true, _) => {
            println!("reloaded in {:.0} ms: generation {} serving", outcome.took_ms, outcome.generation);
            for m in &outcome.loaded {
                println!("  {m}");
            }
            for left in &outcome.failed {
                println!("  left out: {left}");
            }
            Ok(())
        }
        (false, why) => anyhow::bail!(
            "reload refused ({status}); generation {} still serving: {}",
            outcome.generation,
            why.as_deref().unwrap_or("no reason given")
        ),
    }
}
