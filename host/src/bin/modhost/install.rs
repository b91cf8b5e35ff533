//! `modhost install`: a package (a `.modhost` file, a mod folder, or an OCI reference) into a root,
//! after showing its grants (and, for an update, what it may newly do) and asking; checked in a
//! throwaway root first; then the running server, if any, reloads.
//!
//! Nothing of a package or folder runs before the player says yes (or passes `--yes`): a folder that
//! must be built first (no `<id>.wasm`, a crate, npm project or `build.sh`) is planned from its
//! `mod.toml`, the plan names the command and the folder, and the build runs after the yes. A build
//! that changes `mod.toml` (the grants the player said yes to) installs nothing.

use anyhow::Context as _;
use modhost::dev::Project;
use modhost::install::{Plan, Root, Source};
use modhost_mods::{Manifest, Package};
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// A package file, a mod folder, or an OCI reference (`host[:port]/repository:version`).
    source: String,
    /// The root to install into.
    #[arg(long, env = "MODHOST_ROOT", default_value = "modhost-data")]
    root: PathBuf,
    /// Install without asking.
    #[arg(long)]
    yes: bool,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let runtime = crate::runtime()?;
    let root = Root::new(&args.root);
    let path = Path::new(&args.source);
    if !modhost::registry::is_reference(&args.source)
        && path.is_dir()
        && let Some((manifest, project)) = modhost::install::build_first(path)?
    {
        return build_and_install(&runtime, &root, &manifest, &project, args.yes);
    }
    let (package, source) = runtime.block_on(fetch(&args.source))?;
    install(&runtime, &root, &package, source, args.yes)
}

/// Shows the plan, asks, installs, reloads a running server.
pub(crate) fn install(
    runtime: &tokio::runtime::Runtime,
    root: &Root,
    package: &Package,
    source: Source,
    yes: bool,
) -> anyhow::Result<()> {
    let plan = modhost::install::plan(root, package)?;
    print!("{plan}");
    confirm(&plan, yes)?;
    put_in_place(runtime, root, &plan, package, source)
}

/// A folder that must be built: planned from its `mod.toml` with the build named, asked, and only
/// then built and installed.
fn build_and_install(
    runtime: &tokio::runtime::Runtime,
    root: &Root,
    manifest: &Manifest,
    project: &Project,
    yes: bool,
) -> anyhow::Result<()> {
    let mut plan = modhost::install::plan_manifest(root, manifest)?;
    plan.runs = Some(format!("`{}` in {}", project.build_command(), project.dir.display()));
    print!("{plan}");
    confirm(&plan, yes)?;
    let (package, bytes) = modhost::install::read_local(&project.dir)?;
    // The player said yes to the grants of the mod.toml they were shown, not to what a build wrote.
    anyhow::ensure!(
        package.mod_toml == *manifest,
        "{} {} was not installed: its build changed mod.toml, which the plan was made from",
        plan.id,
        plan.version
    );
    let source = Source { from: project.dir.display().to_string(), digest: modhost::install::digest(&bytes) };
    put_in_place(runtime, root, &plan, &package, source)
}

/// The player's yes to `plan`, or the refusal that says it was no.
fn confirm(plan: &Plan, yes: bool) -> anyhow::Result<()> {
    let verb = if plan.previous.is_some() { "update" } else { "install" };
    if !ask(&format!("{verb} {} {}?", plan.id, plan.version), yes)? {
        anyhow::bail!("{} {} was not installed: the answer was no (--yes answers yes)", plan.id, plan.version);
    }
    Ok(())
}

/// Stages, checks and swaps `package` in (the plan is made again there), then reloads a running server.
fn put_in_place(
    runtime: &tokio::runtime::Runtime,
    root: &Root,
    plan: &Plan,
    package: &Package,
    source: Source,
) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let report = runtime.block_on(modhost::install::install(root, package, source))?;
    println!(
        "installed {} {} (checked: {} route(s), {:.0} ms)",
        plan.id,
        plan.version,
        report.routes().len(),
        started.elapsed().as_secs_f64() * 1e3
    );
    reload_running(runtime, root)
}

/// The package `source` names, with where it came from.
pub(crate) async fn fetch(source: &str) -> anyhow::Result<(Package, Source)> {
    if modhost::registry::is_reference(source) {
        let reference = modhost::registry::parse(source)?;
        let bytes = modhost::registry::pull(&reference).await?;
        let package = Package::from_bytes(&bytes).map_err(|e| anyhow::anyhow!("{reference}: {e}"))?;
        let digest = modhost::install::digest(&bytes);
        return Ok((package, Source { from: format!("oci://{reference}"), digest }));
    }
    let path = PathBuf::from(source);
    let (package, bytes) = modhost::install::read_local(&path)?;
    let from = std::fs::canonicalize(&path).unwrap_or(path).display().to_string();
    Ok((package, Source { from, digest: modhost::install::digest(&bytes) }))
}

/// Grant lines for one line of output.
pub(crate) fn grants_line(grants: &[String]) -> String {
    if grants.is_empty() { "none".to_owned() } else { grants.join("; ") }
}

/// Asks `question` and reads one line of stdin; `yes` answers it. Only `y` or `yes` is yes: an
/// empty line, or stdin at its end (a script that pipes nothing), is no.
pub(crate) fn ask(question: &str, yes: bool) -> anyhow::Result<bool> {
    if yes {
        return Ok(true);
    }
    print!("{question} [y/N] ");
    std::io::stdout().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).context("reading the answer")?;
    if !std::io::stdin().is_terminal() {
        println!("{}", line.trim());
    }
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}

/// Asks the server serving `root`, if one announced itself, to reload; says so when none answers.
pub(crate) fn reload_running(runtime: &tokio::runtime::Runtime, root: &Root) -> anyhow::Result<()> {
    let Some(addr) = modhost::install::serving_addr(root) else {
        println!("no server is serving this root: the change takes effect at its next start");
        return Ok(());
    };
    match runtime.block_on(crate::reload::request(addr)) {
        Err(_) => {
            println!(
                "no server answers at {addr} (the one that served this root stopped): the change takes effect at its next start"
            );
            Ok(())
        }
        Ok(outcome) => crate::reload::print(&outcome?),
    }
}
