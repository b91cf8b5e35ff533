//! A hostile mod Rust cannot write: its `handle` grows a wasm table until growth fails. Written as a
//! core module in WAT, given the `plugin` world's metadata and wrapped into a component with
//! `wit-component`, at test time (a few milliseconds).
//!
//! It claims one route, `/tg/grow`. Its exports follow the canonical ABI by hand: `routes` and `init`
//! answer return areas laid out in its data segments, and `handle` takes the request's 13 flat values.
//! Under a table limit the growth traps; without one it would grow until the engine's own maximum and
//! then hit `unreachable`, a different message, so a test can tell the limit held.

use anyhow::Context as _;

/// The route the component claims.
pub const ROUTE: &str = "/tg/grow";

const WAT: &str = r#"
(module
  (memory (export "memory") 1)
  (global $heap (mut i32) (i32.const 1024))
  (table $t 1 funcref)
  ;; A bump allocator: the host copies the request in through it.
  (func (export "cabi_realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $size i32) (result i32)
    (local $p i32)
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.sub (local.get $align) (i32.const 1)))
                           (i32.sub (i32.const 0) (local.get $align))))
    (global.set $heap (i32.add (local.get $p) (local.get $size)))
    (block $fits
      (br_if $fits (i32.le_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536))))
      (if (i32.eq (memory.grow (i32.add (i32.shr_u (global.get $heap) (i32.const 16)) (i32.const 1))) (i32.const -1))
        (then unreachable)))
    (local.get $p))
  ;; The route's path at 16; the one `route` record {path: (16, 8), kind: exact} at 32; the list
  ;; (32, 1) that `routes` answers at 48; `init`'s `ok` at 56.
  (data (i32.const 16) "/tg/grow")
  (data (i32.const 32) "\10\00\00\00\08\00\00\00\00\00\00\00")
  (data (i32.const 48) "\20\00\00\00\01\00\00\00")
  (data (i32.const 56) "\00\00\00\00")
  (func (export "routes") (result i32) (i32.const 48))
  (func (export "init") (result i32) (i32.const 56))
  (func (export "handle") (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32)
    (loop $grow
      (br_if $grow (i32.ne (table.grow $t (ref.null func) (i32.const 10000)) (i32.const -1))))
    unreachable))
"#;

/// The component's bytes.
pub fn component() -> anyhow::Result<Vec<u8>> {
    encode(WAT)
}

/// A core module in WAT that implements the `plugin` world's exports by hand, wrapped into a component.
pub(crate) fn encode(wat: &str) -> anyhow::Result<Vec<u8>> {
    let mut module = wat::parse_str(wat).context("parsing the WAT")?;
    let mut resolve = wit_parser::Resolve::default();
    let wit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
    let (package, _) = resolve.push_dir(&wit).context("reading wit/")?;
    let world = resolve.select_world(&[package], Some("plugin")).context("the plugin world")?;
    wit_component::embed_component_metadata(&mut module, &resolve, world, wit_component::StringEncoding::UTF8, false)
        .context("embedding the world")?;
    wit_component::ComponentEncoder::default()
        .module(&module)
        .context("reading the module")?
        .validate(true)
        .encode()
        .context("encoding the component")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_component_encodes() {
        let bytes = super::component().unwrap();
        assert!(bytes.starts_with(b"\0asm"), "a wasm binary");
    }
}
