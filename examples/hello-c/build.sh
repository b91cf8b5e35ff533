#!/bin/sh
# Builds the C hello mod into ../../target/polyglot/hello-c.wasm: clang makes a WASI 0.1 reactor module
# from hello.c and the committed bindings, then `wrap-core` (tests/) makes it a component with the
# WASI adapter of the wasmtime release modhost runs. Needs clang-19 and wasi-libc (docs/mods-c.md).
set -eu
cd "$(dirname "$0")"
out=../../target/polyglot
mkdir -p "$out"
clang-19 --target=wasm32-wasi -mexec-model=reactor -O2 -Wall -Werror -o "$out/hello-c.core.wasm" \
  hello.c bindings/plugin.c bindings/plugin_component_type.o
cargo run --quiet --release -p modhost-tests --bin wrap-core -- "$out/hello-c.core.wasm" "$out/hello-c.wasm"
