//! Mods made to order for the lifecycle tests: a component that claims one exact route of the test's
//! choosing and whose `init` succeeds or traps, built from WAT in a few milliseconds (as
//! [`crate::table_bomb`] is). Many such mods can load side by side, which copies of one Rust fixture
//! cannot (they would all claim the same routes). Their `handle` traps: the tests only load them.

/// What the mod's `init` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Init {
    /// Answers `ok`.
    Ok,
    /// Traps (`unreachable`).
    Trap,
}

/// A component claiming the exact route `route` (ASCII, at most 200 bytes) with the given `init`.
pub fn component(route: &str, init: Init) -> anyhow::Result<Vec<u8>> {
    anyhow::ensure!(route.is_ascii() && route.len() <= 200 && !route.contains(['"', '\\']), "route `{route}`");
    let init = match init {
        Init::Ok => "(i32.const 56)",
        Init::Trap => "unreachable",
    };
    // Canonical ABI by hand: the path at 256; the one `route` record {path: (256, len), kind: exact}
    // at 32; the list (32, 1) that `routes` answers at 48; `init`'s `ok` at 56.
    let len = route.len();
    let wat = format!(
        r#"(module
  (memory (export "memory") 1)
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) (i32.const 1024))
  (data (i32.const 256) "{route}")
  (data (i32.const 32) "\00\01\00\00\{l0:02x}\{l1:02x}\00\00\00\00\00\00")
  (data (i32.const 48) "\20\00\00\00\01\00\00\00")
  (data (i32.const 56) "\00\00\00\00")
  (func (export "routes") (result i32) (i32.const 48))
  (func (export "init") (result i32) {init})
  (func (export "handle") (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32) unreachable))"#,
        l0 = len & 0xff,
        l1 = len >> 8,
    );
    crate::table_bomb::encode(&wat)
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_kinds_encode() {
        for init in [super::Init::Ok, super::Init::Trap] {
            assert!(super::component("/t/a", init).unwrap().starts_with(b"\0asm"));
        }
        assert!(super::component("/\"", super::Init::Ok).is_err());
    }
}
