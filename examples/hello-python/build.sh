#!/bin/sh
# Builds the Python hello mod: generates the WIT bindings, then packages app.py and the Python SDK
# (../../sdk-python, with CPython) into ../../target/polyglot/hello-python.wasm.
# Needs componentize-py (pip install componentize-py==0.25.1).
set -eu
cd "$(dirname "$0")"
out=../../target/polyglot
mkdir -p "$out"
rm -rf "$out/python-bindings"
# The bindings componentize-py makes internally, written out for editors and for the Makefile's
# python-escape fixture, which builds against them.
componentize-py -d ../../wit -w plugin bindings "$out/python-bindings"
componentize-py -d ../../wit -w plugin componentize -p . -p ../../sdk-python -p "$out/python-bindings" app \
    -o "$out/hello-python.wasm"
