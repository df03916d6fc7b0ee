#!/usr/bin/env bash
# The whole wavelane test suite, from a fresh Debian machine with Rust:
# installs what it needs (scripts/setup.sh --test), then checks formatting,
# lints, the MCU build, and runs every test. GPU tests run on lavapipe
# (software Vulkan) at its default subgroup size 8, again at sizes 4 and 16,
# and once under the Khronos validation layer.
#
# Set WAVELANE_TEST_DEVICE=native to run the GPU tests on the machine's own
# Vulkan driver instead of lavapipe.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh --test

if [[ "${WAVELANE_TEST_DEVICE:-lavapipe}" == lavapipe ]]; then
    export VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
    export VK_DRIVER_FILES=$VK_ICD_FILENAMES
fi
export CARGO_TERM_COLOR=never

step() { printf '\n=== %s\n' "$*"; }

step "format"
cargo fmt --all -- --check

step "clippy"
cargo clippy --workspace --all-targets -- -D warnings
# The shader statistics aid (tools/shader-stats, outside the workspace).
cargo fmt --manifest-path tools/shader-stats/Cargo.toml -- --check
cargo clippy --manifest-path tools/shader-stats/Cargo.toml -- -D warnings

step "the library alone: CPU-only build, no CLI dependencies, rustdoc"
# Without the default `gpu` feature the library needs no glslc and no Vulkan
# loader, and it never pulls in the command line's dependencies.
cargo build -p wavelane --no-default-features
deps=$(cargo tree -p wavelane --no-default-features -e normal --prefix none)
for crate in clap indicatif vulkano; do
    if grep -q "^$crate v" <<<"$deps"; then
        echo "wavelane --no-default-features depends on $crate" >&2
        exit 1
    fi
done
RUSTDOCFLAGS="-D warnings" cargo doc -p wavelane --no-deps
RUSTDOCFLAGS="-D warnings" cargo doc -p wavelane --no-deps --no-default-features

step "core for the MCU (thumbv7em-none-eabihf), with and without defmt"
cargo build -p wavelane-core --target thumbv7em-none-eabihf
cargo build -p wavelane-core --target thumbv7em-none-eabihf --features defmt

step "tests (lavapipe subgroup size 8)"
cargo test --workspace

for width in 128 512; do
    step "GPU tests at LP_NATIVE_VECTOR_WIDTH=$width (subgroup size $((width / 32)))"
    LP_NATIVE_VECTOR_WIDTH=$width cargo test --workspace gpu
done

step "GPU tests under the Khronos validation layer"
WAVELANE_VK_VALIDATION=1 cargo test --workspace gpu

step "all checks passed"
