//! `wrap-core CORE.wasm OUT.wasm`: a core module built against WASI 0.1 (a C mod) as a component
//! modhost loads (see `modhost_tests::core_wrap`).

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    anyhow::ensure!(args.len() == 3, "usage: wrap-core CORE.wasm OUT.wasm");
    let core = std::fs::read(&args[1]).map_err(|e| anyhow::anyhow!("reading {}: {e}", args[1]))?;
    std::fs::write(&args[2], modhost_tests::core_wrap::component(&core)?)?;
    Ok(())
}
