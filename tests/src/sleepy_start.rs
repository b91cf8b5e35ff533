//! A component whose start code waits in WASI: its `_initialize` (which `wit-component` runs while the
//! component is instantiated, before any export) asks WASI 0.1's `poll_oneoff` to sleep for an hour,
//! through the preview1 adapter ([`crate::core_wrap`]), so the wait happens in an async WASI call,
//! where no epoch check runs. It claims `/zz/slow`; its exports would answer like
//! [`crate::table_bomb`]'s, but they are never reached.

use anyhow::Context as _;

/// The route it claims.
pub const ROUTE: &str = "/zz/slow";

const WAT: &str = r#"
(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (global $heap (mut i32) (i32.const 4096))
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
  ;; One clock subscription at 2048: userdata 0, tag 0 (clock), id 1 (monotonic), timeout an hour in
  ;; ns (relative), precision 0, flags 0; the event at 2304, the count at 2400.
  (data (i32.const 2064) "\01\00\00\00")
  (func (export "_initialize")
    (i64.store (i32.const 2072) (i64.const 3600000000000))
    (drop (call $poll (i32.const 2048) (i32.const 2304) (i32.const 1) (i32.const 2400))))
  (data (i32.const 16) "/zz/slow")
  (data (i32.const 32) "\10\00\00\00\08\00\00\00\00\00\00\00")
  (data (i32.const 48) "\20\00\00\00\01\00\00\00")
  (data (i32.const 56) "\00\00\00\00")
  (func (export "routes") (result i32) (i32.const 48))
  (func (export "init") (result i32) (i32.const 56))
  (func (export "handle") (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32) unreachable))
"#;

/// The component's bytes.
pub fn component() -> anyhow::Result<Vec<u8>> {
    let mut module = wat::parse_str(WAT).context("parsing the WAT")?;
    let mut resolve = wit_parser::Resolve::default();
    let wit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
    let (package, _) = resolve.push_dir(&wit).context("reading wit/")?;
    let world = resolve.select_world(&[package], Some("plugin")).context("the plugin world")?;
    wit_component::embed_component_metadata(&mut module, &resolve, world, wit_component::StringEncoding::UTF8, false)
        .context("embedding the world")?;
    crate::core_wrap::component(&module)
}

#[cfg(test)]
mod tests {
    #[test]
    fn it_encodes() {
        assert!(super::component().unwrap().starts_with(b"\0asm"));
    }
}
