//! `modhost dev <project>`: serve a mod project while its author edits it. The loop itself (watch,
//! build, install, reload) is `modhost::dev`; this file boots the server on the dev root and prints
//! what each change came to.

use modhost::dev::{Event, Project};
use modhost::{Server, ServerSettings};
use std::io::Write as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The mod project: a folder with Cargo.toml and mod.toml (what `modhost new` writes).
    project: PathBuf,
    /// Root directory the mod is served from (default: <PROJECT>/target/modhost-dev, created; the
    /// built-in game loads as with `serve`).
    #[arg(long)]
    root: Option<PathBuf>,
    /// TCP port on 127.0.0.1 (0 picks a free one, printed at start).
    #[arg(long, default_value_t = 6969)]
    port: u16,
    /// Seconds one `cargo build` may take before it is stopped (a first build compiles the
    /// dependencies: about 40 s on 2 cores).
    #[arg(long, default_value_t = 900)]
    build_timeout_secs: u64,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.build_timeout_secs > 0, "--build-timeout-secs must be at least 1");
    let project = Project::read(&args.project)?;
    let root = args.root.unwrap_or_else(|| project.dir.join("target/modhost-dev"));
    let mut config = ServerSettings::new(root.clone());
    config.addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    let deadline = Duration::from_secs(args.build_timeout_secs);
    crate::runtime()?.block_on(async move {
        let server = Server::start(config).await?;
        let addr = server.local_addr()?;
        println!(
            "modhost dev: `{}` from {}, served on http://{addr}/ (status: http://{addr}/modhost/), root {}",
            project.id,
            project.dir.display(),
            root.display()
        );
        let _dev = modhost::dev::start(server.app().clone(), project, deadline, print)?;
        server.run(crate::serve::shutdown_signal()).await
    })
}

/// One line (or block) per event, flushed at once: a person is watching, or a test reading the pipe.
fn print(event: Event) {
    let mut out = std::io::stdout().lock();
    let _ = match event {
        Event::Building { changed } if changed.is_empty() => writeln!(out, "building…"),
        Event::Building { changed } => writeln!(out, "changed: {}; building…", changed.join(", ")),
        Event::BuildFailed { error } => {
            writeln!(out, "build failed; the old version keeps serving:\n{}", error.trim_end())
        }
        Event::Refused { reason } => writeln!(out, "load refused; the old version keeps serving: {reason}"),
        Event::LeftOut { reason } => writeln!(out, "not loaded (nothing of it serves): {reason}"),
        Event::Live { version, generation, since_change, build, reload } => writeln!(
            out,
            "live in {:.1} s: version {version}, generation {generation} (build {:.1} s, reload {:.0} ms)",
            since_change.as_secs_f64(),
            build.as_secs_f64(),
            reload.as_secs_f64() * 1e3
        ),
    };
    let _ = out.flush();
}
