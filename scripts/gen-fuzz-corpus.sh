#!/usr/bin/env bash
# Regenerates the seed files (fuzz/corpus/<target>/seed-NN) of every fuzz
# target from our own encoders; regression inputs (regress-*) are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run -p wavelane-tests --example gen_corpus
