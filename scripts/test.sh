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
cargo clippy -p wavelane --no-default-features -- -D warnings
deps=$(cargo tree -p wavelane --no-default-features -e normal --prefix none)
for crate in clap indicatif vulkano; do
    if grep -q "^$crate v" <<<"$deps"; then
        echo "wavelane --no-default-features depends on $crate" >&2
        exit 1
    fi
done
RUSTDOCFLAGS="-D warnings" cargo doc -p wavelane-core --no-deps
RUSTDOCFLAGS="-D warnings" cargo doc -p wavelane --no-deps
RUSTDOCFLAGS="-D warnings" cargo doc -p wavelane --no-deps --no-default-features

step "core for the MCU (thumbv7em-none-eabihf), with and without defmt"
cargo build -p wavelane-core --target thumbv7em-none-eabihf
cargo build -p wavelane-core --target thumbv7em-none-eabihf --features defmt

step "tests (lavapipe subgroup size 8)"
cargo test --workspace

# The reruns select GPU tests by the word `gpu` in their names (the harness
# refuses a test that opens the GPU without it: tests/src/lib.rs). A filter
# that matches nothing would pass silently, so each rerun counts the tests
# cargo reports as passed and fails on zero.
gpu_rerun() {
    local log
    log=$(mktemp)
    "$@" cargo test --workspace gpu 2>&1 | tee "$log"
    local passed
    passed=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$log" |
        awk '{ n += $1 } END { print n + 0 }')
    rm -f "$log"
    if [[ "$passed" -eq 0 ]]; then
        echo "the GPU rerun ($*) ran no test" >&2
        exit 1
    fi
    echo "GPU rerun ($*): $passed tests passed"
}

# Lavapipe takes its subgroup size from LP_NATIVE_VECTOR_WIDTH (bits / 32);
# a driver that ignored it would make the reruns repeat size 8. The device
# the tests open must report the size asked for.
check_subgroup_size() {
    local want=$1
    shift
    local got
    got=$("$@" cargo run -q -p wavelane-cli --bin wavelane -- devices --json |
        sed -n 's/.*"subgroup_size": \([0-9]*\).*/\1/p')
    if [[ "$got" != "$want" ]]; then
        echo "asked for subgroup size $want, the device reports '${got}'" >&2
        exit 1
    fi
}

for width in 128 512; do
    size=$((width / 32))
    step "GPU tests at LP_NATIVE_VECTOR_WIDTH=$width (subgroup size $size)"
    if [[ "${WAVELANE_TEST_DEVICE:-lavapipe}" == lavapipe ]]; then
        check_subgroup_size "$size" env LP_NATIVE_VECTOR_WIDTH=$width
    fi
    gpu_rerun env LP_NATIVE_VECTOR_WIDTH=$width
done

step "GPU tests under the Khronos validation layer"
gpu_rerun env WAVELANE_VK_VALIDATION=1

step "Python package (pytest python/tests)"
# scripts/setup.sh --test built the package into .venv; the tests fail
# (never skip) when a package or the GPU is missing. The GPU tests there
# run on the same device as the Rust ones (lavapipe unless told otherwise).
.venv/bin/python -m pytest python/tests -q -p no:cacheprovider

step "all checks passed"
