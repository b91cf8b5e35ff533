//! `modhost pack`: a mod project or folder into one package file, `<id>-<version>.modhost`.

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The mod project (a crate with mod.toml, built with cargo) or a mod folder (mod.toml and <id>.wasm).
    project: PathBuf,
    /// Where to write the package.
    #[arg(long, default_value = ".")]
    out: PathBuf,
    /// The component, when it is neither <id>.wasm in the folder nor the crate's build.
    #[arg(long)]
    wasm: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let package = modhost::install::pack(&args.project, args.wasm.as_deref())?;
    let bytes = package.to_bytes();
    std::fs::create_dir_all(&args.out)?;
    let path = args.out.join(package.file_name());
    std::fs::write(&path, &bytes).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    println!(
        "packed {} {} -> {} ({} KiB, {})",
        package.mod_toml.id,
        package.mod_toml.version,
        path.display(),
        bytes.len().div_ceil(1024),
        modhost::install::digest(&bytes)
    );
    let api = package.api.as_ref().map_or("none".to_owned(), ToString::to_string);
    println!("  API {api}; grants: {}", crate::install::grants_line(&package.grants().describe()));
    Ok(())
}
