#!/usr/bin/env bash
# Sets up a fresh Debian machine with Rust (shader compiler, Vulkan loader,
# lavapipe) and runs `wavelane demo` on the built-in image. Extra arguments go
# to `wavelane demo` (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec cargo run --release -p wavelane-cli --bin wavelane -- demo "$@"
