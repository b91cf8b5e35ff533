//! Wraps a core wasm module built against WASI 0.1 (a C mod from clang and wasi-libc) into a component,
//! with the WASI 0.1 → 0.2 reactor adapter of the wasmtime release we run (the crate
//! `wasi-preview1-component-adapter-provider`). The module carries the `plugin` world's metadata
//! (wit-bindgen's `plugin_component_type.o`), so `wit-component` knows its imports and exports.
//!
//! Used by the `wrap-core` binary (`make polyglot`'s last step) and by the tests.

use anyhow::Context as _;
use wasi_preview1_component_adapter_provider::{
    WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
};

/// The component for the core module `core`.
pub fn component(core: &[u8]) -> anyhow::Result<Vec<u8>> {
    wit_component::ComponentEncoder::default()
        .module(core)
        .context("reading the core module (does it carry the plugin world's component-type section?)")?
        .adapter(WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER)
        .context("reading the WASI adapter")?
        .validate(true)
        .encode()
        .context("encoding the component")
}
