#!/bin/sh
# Runs the SDK's own tests (tests/test_sdk.py) as a WASI command under `modhost test-runner`, in the
# world `modhost new --lang python` gives a project's tests (host/templates/new-mod-python/).
# MODHOST names the modhost binary (default: ../target/release/modhost). Arguments filter tests.
set -eu
cd "$(dirname "$0")"
modhost=${MODHOST:-../target/release/modhost}
out=../target/sdk-python-test
rm -rf "$out"
mkdir -p "$out/wit/deps/modhost" "$out/wit/deps/cli"
cp ../host/templates/new-mod-python/test-world.wit.tmpl "$out/wit/world.wit"
cp ../host/templates/new-mod-python/cli-run.wit.tmpl "$out/wit/deps/cli/run.wit"
cp ../wit/*.wit "$out/wit/deps/modhost/"
componentize-py -d "$out/wit" -w tests componentize -p . -p tests test_sdk -o "$out/tests.wasm"
exec "$modhost" test-runner "$out/tests.wasm" "$@"
