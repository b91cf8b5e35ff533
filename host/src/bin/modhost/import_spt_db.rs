//! `modhost import-spt-db`: an SPT database folder made into one `db.json` (`modhost_gamedb::spt`),
//! then served with `modhost serve --root <root>` (its db is `<root>/db.json`).

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The SPT database folder: the one holding `globals.json`, `templates/`, `locales/`, `traders/`,
    /// `locations/`… (in an SPT checkout `Libraries/SPTarkov.Server.Assets/Assets/database`).
    folder: PathBuf,
    /// Where to write the document (a file path; default `db.json` in the current directory). It is
    /// replaced only when the whole import succeeded; write it as `<root>/db.json` to serve it.
    #[arg(long, default_value = "db.json")]
    out: PathBuf,
    /// SPT's configs folder (`core.json`, `weather.json`, `inraid.json`…), imported as the db's
    /// `configs`, whose values the game reads. Default: the `configs` folder beside FOLDER when it
    /// holds `core.json` (where SPT keeps it); without one the game uses SPT's default values.
    #[arg(long)]
    configs: Option<PathBuf>,
}

/// The configs folder to import: the one named, else SPT's beside the database, if there.
fn configs_folder(args: &Args) -> Option<PathBuf> {
    if args.configs.is_some() {
        return args.configs.clone();
    }
    let beside = args.folder.parent()?.join("configs");
    beside.join("core.json").is_file().then_some(beside)
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    // The message already holds its cause; `{:#}` would print the cause twice.
    let configs = configs_folder(&args);
    let summary =
        modhost_gamedb::spt::import(&args.folder, configs.as_deref(), &args.out).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mb = |bytes: u64| bytes as f64 / 1e6;
    eprintln!(
        "imported {} ({} JSON files in {} folders, {:.1} MB) into {} ({:.1} MB) in {:.2} s",
        args.folder.display(),
        summary.files,
        summary.folders,
        mb(summary.bytes_in),
        args.out.display(),
        mb(summary.bytes_out),
        summary.elapsed.as_secs_f64(),
    );
    match &configs {
        Some(configs) => eprintln!("with SPT's configs from {} (the db's `configs`)", configs.display()),
        None => eprintln!("no configs folder beside it (--configs): the game uses SPT's default settings"),
    }
    if summary.skipped > 0 {
        let shown: Vec<String> = summary.skipped_examples.iter().map(|p| p.display().to_string()).collect();
        let more = if summary.skipped > shown.len() as u64 { ", …" } else { "" };
        eprintln!("skipped {} files that are not JSON or are hidden ({}{more})", summary.skipped, shown.join(", "));
    }
    let root = match args.out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.display().to_string(),
        _ => ".".to_owned(),
    };
    if args.out.file_name().is_some_and(|n| n == "db.json") {
        eprintln!("serve it: modhost serve --root {root}");
    } else {
        eprintln!("serve it: move it to <root>/db.json, then modhost serve --root <root>");
    }
    Ok(())
}
