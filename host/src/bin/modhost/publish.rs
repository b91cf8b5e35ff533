//! `modhost publish`: push a package to an OCI registry, tagged with its version.

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The package (`modhost pack` wrote it) or a mod folder to pack on the way.
    package: PathBuf,
    /// Where: `host[:port]/repository` (the tag is the mod's version; `:tag` must match it).
    reference: String,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let (package, bytes) = modhost::install::read_local(&args.package)?;
    let version = package.mod_toml.version.to_string();
    let given = modhost::registry::parse(&args.reference)
        .or_else(|_| modhost::registry::parse(&format!("{}:{version}", args.reference)))?;
    // A reference without a tag parses as `latest`: the version is the tag.
    let reference = match given.tag() {
        Some("latest") if !args.reference.ends_with(":latest") => modhost::registry::at_tag(&given, &version),
        Some(tag) if tag != version => {
            anyhow::bail!("the tag `{tag}` is not the package's version {version}: leave the tag out")
        }
        _ => given,
    };
    let url = crate::runtime()?.block_on(modhost::registry::push(&reference, &package, &bytes))?;
    println!("published {} {} -> {reference} ({})", package.mod_toml.id, version, modhost::install::digest(&bytes));
    println!("  {url}");
    Ok(())
}
