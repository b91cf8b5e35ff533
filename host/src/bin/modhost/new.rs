//! `modhost new`: write a new mod project, a Cargo crate on the SDK (copied in, no network needed) with
//! one route and a test.

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The mod's id, also its crate name: a-z, 0-9, `-` and `_`, starting with a letter.
    name: String,
    /// Where to write the project (default: ./NAME). Must not exist or be empty.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// The language: rust (a Cargo crate), ts (an npm project built with componentize-js) or python
    /// (built with componentize-py).
    #[arg(long, value_enum, default_value_t = Lang::Rust)]
    lang: Lang,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Lang {
    Rust,
    Ts,
    Python,
}

pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let lang = match args.lang {
        Lang::Rust => modhost::scaffold::Lang::Rust,
        Lang::Ts => modhost::scaffold::Lang::Ts,
        Lang::Python => modhost::scaffold::Lang::Python,
    };
    let dir = modhost::scaffold::new_project_in(&args.name, args.dir.as_deref(), lang)?;
    let how = match lang {
        modhost::scaffold::Lang::Rust => "`cargo build --release` builds it, `cargo test --release` tests it",
        modhost::scaffold::Lang::Ts => "`npm install && npm run build` builds it, `npm test` tests it",
        modhost::scaffold::Lang::Python => "`./build.sh` builds it, `./test.sh` tests it",
    };
    eprintln!("wrote mod `{}` in {}: {how} (README.md says how to install it)", args.name, dir.display());
    Ok(())
}
