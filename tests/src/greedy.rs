//! Components that ask the instance pool for more than one component's share: `n` instances of a
//! core module (each defining one linear memory, or none). They export nothing; the host must refuse
//! them when it compiles them, naming the count, before anything else about them is checked.

use anyhow::Context as _;

/// A component instantiating `n` core modules, each with one linear memory when `memory`.
pub fn component(n: usize, memory: bool) -> anyhow::Result<Vec<u8>> {
    let body = if memory { "(memory 1)" } else { "" };
    let instances = "  (core instance (instantiate $m))\n".repeat(n);
    let wat = format!("(component\n  (core module $m {body})\n{instances})");
    wat::parse_str(&wat).context("parsing the component's WAT")
}

#[cfg(test)]
mod tests {
    #[test]
    fn it_encodes() {
        assert!(super::component(3, true).unwrap().starts_with(b"\0asm"));
    }
}
