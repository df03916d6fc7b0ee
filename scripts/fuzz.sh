#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ for a time box (default 60 s each),
# starting from the committed corpus. Building needs nightly Rust
# (`cargo +nightly`) or, failing that, stable with RUSTC_BOOTSTRAP=1, and
# cargo-fuzz (`cargo install cargo-fuzz --locked`).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Environment:
#   FUZZ_SANITIZER  libFuzzer sanitizer (default: none; our code is safe Rust,
#                   bounds and overflow checks are on in the fuzz profile;
#                   use `address` to also get -malloc_limit_mb enforced)
#   FUZZ_NICE       niceness of the fuzzer processes (default 19)
#   FUZZ_JOBS       parallel fuzzer processes per target (default 1)
#   FUZZ_PARALLEL   1: run all targets at the same time (one after the other
#                   by default); give the machine a core per target and job
#   FUZZ_BIN_DIR    run already built fuzz binaries from this folder instead
#                   of building (e.g. on a machine without Rust: copy
#                   fuzz/target/x86_64-unknown-linux-gnu/release/<target>)
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

bin_dir=${FUZZ_BIN_DIR:-}
if [[ -z $bin_dir ]]; then
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
    (cd fuzz && "${cargo[@]}" fuzz build --sanitizer "$sanitizer" --target-dir "$target_dir")
    bin_dir=$target_dir/x86_64-unknown-linux-gnu/release
fi
bin_dir=$(cd "$bin_dir" && pwd)
for t in "${targets[@]}"; do
    if [[ ! -x $bin_dir/$t ]]; then
        echo "no fuzz binary $bin_dir/$t" >&2
        exit 1
    fi
done

mkdir -p fuzz/artifacts

# Runs one target for the time box; its exit status is the fuzzer's.
fuzz_one() {
    local t=$1
    local work=fuzz/artifacts/$t/corpus
    local log=fuzz/artifacts/$t/last-run.log
    mkdir -p "$work"
    local dict=fuzz/dicts/${t%%_*}.dict
    local extra=()
    [[ -f $dict ]] && extra+=("-dict=$PWD/$dict")
    if [[ ${FUZZ_JOBS:-1} -gt 1 ]]; then
        extra+=("-jobs=$FUZZ_JOBS" "-workers=$FUZZ_JOBS")
    fi
    local status=0
    # -malloc_limit_mb only bites with a sanitizer runtime; -rss_limit_mb always.
    nice -n "${FUZZ_NICE:-19}" "$bin_dir/$t" "$work" "fuzz/corpus/$t" \
        -artifact_prefix="fuzz/artifacts/$t/" \
        -max_total_time="$secs" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=30 \
        -print_final_stats=1 "${extra[@]}" ${FUZZ_ARGS:-} >"$log" 2>&1 || status=$?
    {
        echo "$(date -u +%FT%TZ) $t ${secs}s jobs=${FUZZ_JOBS:-1} exit=$status"
        grep -E "^stat::|^Done|^#[0-9]+ +DONE" "$log" | tail -n 12 || true
    } >"fuzz/artifacts/$t/stats.part"
    return "$status"
}

failed=()
report() {
    local t=$1 status=$2
    echo "=== $t: ${secs}s"
    grep -E "^(#[0-9]+ +DONE|==|SUMMARY|stat::|INFO: Seed|Done)" \
        "fuzz/artifacts/$t/last-run.log" | tail -n 12 || true
    cat "fuzz/artifacts/$t/stats.part" >>fuzz/artifacts/stats.log
    if [[ $status -ne 0 ]]; then
        echo "!!! $t failed (exit $status); see fuzz/artifacts/$t/" >&2
        failed+=("$t")
    fi
}

if [[ ${FUZZ_PARALLEL:-0} == 1 ]]; then
    declare -A pids
    for t in "${targets[@]}"; do
        fuzz_one "$t" &
        pids[$t]=$!
    done
    for t in "${targets[@]}"; do
        status=0
        wait "${pids[$t]}" || status=$?
        report "$t" "$status"
    done
else
    for t in "${targets[@]}"; do
        status=0
        fuzz_one "$t" || status=$?
        report "$t" "$status"
    done
fi

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "findings in: ${failed[*]}" >&2
    exit 1
fi
echo "no findings"
