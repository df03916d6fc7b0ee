#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for a time box (default 60 s each),
# one after the other, starting from the committed corpus. Needs nightly
# Rust (`cargo +nightly`) or, failing that, stable with RUSTC_BOOTSTRAP=1,
# and cargo-fuzz (`cargo install cargo-fuzz --locked`).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Environment:
#   FUZZ_SANITIZER  libFuzzer sanitizer (default: none; our code is safe Rust,
#                   bounds and overflow checks are on in the fuzz profile;
#                   use `address` to also get -malloc_limit_mb enforced)
#   FUZZ_NICE       niceness of the fuzzer processes (default 19)
#   FUZZ_JOBS       parallel fuzzer processes per target (default 1)
#   FUZZ_ARGS       extra libFuzzer flags
#   CARGO_TARGET_DIR  build directory (default fuzz/target)
#
# New inputs go to fuzz/artifacts/<target>/corpus (ignored by git); crashes
# to fuzz/artifacts/<target>/. A finding becomes a committed regression
# input: copy it to fuzz/corpus/<target>/regress-<what>, fix the bug, and
# `cargo test -p wavelane-tests --test fuzz_replay` replays it forever.
# Each target's final libFuzzer statistics are appended to
# fuzz/artifacts/stats.log.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-60}
shift || true
if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    targets=()
    for f in fuzz/fuzz_targets/*.rs; do
        targets+=("$(basename "$f" .rs)")
    done
fi

if ! command -v cargo-fuzz >/dev/null; then
    echo "cargo-fuzz is missing: cargo install cargo-fuzz --locked" >&2
    exit 1
fi
if cargo +nightly --version >/dev/null 2>&1; then
    cargo=(cargo +nightly)
else
    echo "no nightly toolchain: using stable with RUSTC_BOOTSTRAP=1" >&2
    export RUSTC_BOOTSTRAP=1
    cargo=(cargo)
fi

sanitizer=${FUZZ_SANITIZER:-none}
target_dir=${CARGO_TARGET_DIR:-$PWD/fuzz/target}
build=("${cargo[@]}" fuzz build --sanitizer "$sanitizer" --target-dir "$target_dir")
run=("${cargo[@]}" fuzz run --sanitizer "$sanitizer" --target-dir "$target_dir")

(cd fuzz && "${build[@]}")

mkdir -p fuzz/artifacts
failed=()
for t in "${targets[@]}"; do
    work=fuzz/artifacts/$t/corpus
    mkdir -p "$work"
    dict=fuzz/dicts/${t%%_*}.dict
    dict_arg=()
    [[ -f $dict ]] && dict_arg=("-dict=$PWD/$dict")
    echo "=== $t: ${secs}s"
    log=fuzz/artifacts/$t/last-run.log
    jobs=()
    if [[ ${FUZZ_JOBS:-1} -gt 1 ]]; then
        jobs=("-jobs=$FUZZ_JOBS" "-workers=$FUZZ_JOBS")
    fi
    # -malloc_limit_mb only bites with a sanitizer runtime; -rss_limit_mb always.
    (cd fuzz && nice -n "${FUZZ_NICE:-19}" "${run[@]}" "$t" "../$work" "../fuzz/corpus/$t" -- \
        -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=30 \
        -print_final_stats=1 "${jobs[@]}" "${dict_arg[@]}" ${FUZZ_ARGS:-}) >"$log" 2>&1 || status=$?
    grep -E "^(#[0-9]+ +DONE|==|SUMMARY|stat::|INFO: Seed|Done)" "$log" | tail -n 12 || true
    if [[ ${status:-0} -ne 0 ]]; then
        echo "!!! $t failed (exit ${status}); see $log and fuzz/artifacts/$t/" >&2
        failed+=("$t")
    fi
    unset status
    {
        echo "$(date -u +%FT%TZ) $t ${secs}s sanitizer=$sanitizer"
        grep -E "^stat::|^Done|cov: " "$log" | tail -n 12 || true
    } >>fuzz/artifacts/stats.log
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "findings in: ${failed[*]}" >&2
    exit 1
fi
echo "no findings"
