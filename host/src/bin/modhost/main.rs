//! The `modhost` command: parse the command line, start logging, run one subcommand (a file each,
//! named as it is typed).
//!
//! An error a user can act on (a flag's value out of range, a missing file, a refused reload) is
//! printed as one `error:` line with its causes, never a backtrace, and exits 1. A flag clap cannot
//! parse gets clap's usage message and exit code 2.

mod check;
mod dev;
mod enable;
mod gen_db;
mod import_spt_db;
mod install;
mod mods;
mod new;
mod outdated;
mod pack;
mod probe;
mod publish;
mod reload;
mod serve;
mod store;
mod test_runner;
mod uninstall;
mod update;

use anyhow::Context as _;
use clap::{Parser, Subcommand};

/// A game server whose game logic lives in WebAssembly mods.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Load the mods and serve the game on 127.0.0.1.
    Serve(serve::Args),
    /// Write a generated SPT-shaped database (deterministic): about 5 MB at 3000 items, 41 MB at 24000.
    GenDb(gen_db::Args),
    /// Make an SPT database folder (as SPT ships it) into one db.json: each folder an object, each
    /// `<name>.json` a member `<name>`; streamed, validated, written whole or not at all.
    ImportSptDb(import_spt_db::Args),
    /// Load the root's mods (without serving, without touching its store) and print each one's grants,
    /// limits and routes, and which were left out and why.
    Mods(mods::Args),
    /// Vet a mod (a folder with mod.toml and <id>.wasm, or a .wasm): load it in a throwaway root under
    /// strict limits, send each route generated requests, report per route; exit 1 on a trap or timeout.
    Check(check::Args),
    /// Ask the server on 127.0.0.1:PORT to reload its mods and db.json (as `serve --watch` does on a
    /// change); prints the outcome, exits 1 when the reload was refused (the old mods keep serving).
    Reload(reload::Args),
    /// Write a new mod project: a Cargo crate on the SDK (copied in, no network needed) with one route
    /// and a test, ready for `cargo build --release` and `cargo test --release`.
    New(new::Args),
    /// Run a mod's test binary (a wasm32-wasip2 command) with a generated db and a scratch store: the
    /// `cargo test` runner `modhost new` sets up. Exits with the tests' exit code (101 on a panic).
    TestRunner(test_runner::Args),
    /// Read and change the store of a root while no server runs on it: list, get, put and delete
    /// values, export a namespace as one file per key and import such a folder (a player's profiles).
    Store(store::Args),
    /// Send one request as the game client does (zlib body, session cookie) and print the answer
    /// inflated, as JSON; exits 1 for a non-2xx answer, 2 when none came.
    Probe(probe::Args),
    /// Serve a mod project while you edit it: build it on every save, install it into a root of its
    /// own and reload; a build error or a refused load is printed and the old version keeps serving.
    Dev(dev::Args),
    /// Pack a mod project or folder into one file, <id>-<version>.modhost: mod.toml, the component,
    /// its config files and README, and a manifest of their hashes.
    Pack(pack::Args),
    /// Push a package to an OCI registry (host[:port]/repository), tagged with its version.
    Publish(publish::Args),
    /// Install a package (a .modhost file, a mod folder or an OCI reference): shows its grants (for an
    /// update, what it may newly do), asks, checks it in a throwaway root, installs it atomically and
    /// reloads a running server. A refused install leaves the mods as they were.
    Install(install::Args),
    /// Enable a disabled mod (and reload a running server).
    Enable(enable::Args),
    /// Disable a mod without removing it (and reload a running server); asks when others require it.
    Disable(enable::Args),
    /// Remove a mod; its store namespace and config are kept unless --purge.
    Uninstall(uninstall::Args),
    /// For each mod installed from a registry: its newer versions, each safe, blocked (by whom) or
    /// incompatible, with the grants a safe one adds.
    Outdated(outdated::Args),
    /// Install the newest safe version of every mod installed from a registry (or of one).
    Update(update::Args),
}

fn main() {
    let cli = Cli::parse();
    // The package commands print what they did; the throwaway server an install checks in would
    // otherwise log its boot between the lines the player reads.
    let quiet = matches!(
        cli.command,
        Command::Install(_) | Command::Update(_) | Command::Enable(_) | Command::Disable(_) | Command::Uninstall(_)
    );
    let default_filter = if quiet { "warn" } else { "info,wasmtime=warn,cranelift=warn" };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| default_filter.into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let result = match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::GenDb(args) => gen_db::run(args),
        Command::ImportSptDb(args) => import_spt_db::run(args),
        Command::Mods(args) => mods::run(args),
        Command::Check(args) => check::run(args),
        Command::Reload(args) => reload::run(args),
        Command::New(args) => new::run(args),
        Command::TestRunner(args) => test_runner::run(args),
        Command::Store(args) => store::run(args),
        // Its exit code says what the answer was (see probe.rs); an error is still `error:` and 1.
        Command::Probe(args) => probe::run(args).map(|code| {
            if code != 0 {
                std::process::exit(code)
            }
        }),
        Command::Dev(args) => dev::run(args),
        Command::Pack(args) => pack::run(args),
        Command::Publish(args) => publish::run(args),
        Command::Install(args) => install::run(args),
        Command::Enable(args) => enable::run(args, true),
        Command::Disable(args) => enable::run(args, false),
        Command::Uninstall(args) => uninstall::run(args),
        Command::Outdated(args) => outdated::run(args),
        Command::Update(args) => update::run(args),
    };
    if let Err(e) = result {
        // `{:#}` is the error and its causes on one line; `{:?}` (what returning it from `main` prints)
        // would add a backtrace wherever RUST_BACKTRACE is set.
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// The tokio runtime a subcommand runs on.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting tokio")
}
