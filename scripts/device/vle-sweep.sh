#!/usr/bin/env bash
# Sweeps the GPU VLE encoder's knobs on a bare GPU machine: needs only a
# release `wavelane` binary (no Rust, no sources) and bash + coreutils.
#
#   scripts/device/vle-sweep.sh BINARY OUT_DIR
#
# Writes one `wavelane bench vle --json` report per step into OUT_DIR
# (`NN-<name>.json`, stderr beside it as `.err`), plus `device.txt` and
# `summary.txt` (one line per encoder variant: kind, size, knobs, best and
# median kernel GB/s). Each report holds every variant's per-repeat times
# (`gpu_variants`) and, for its first variant, the full set of measurements
# (CPU, GPU wall times, decoder, copy bandwidth). Every step checks the GPU
# stream against the CPU's and the decoders' round trips; a step that fails
# or runs past its time limit is recorded (`.err`, exit status) and the
# sweep goes on; steps that would start after DEADLINE seconds are skipped,
# so the whole sweep stays within about 6 minutes (the most important steps
# run first). SWEEP_QUICK=1 shrinks every step to 1 MB and 2 repeats for a
# smoke test (e.g. on lavapipe).
set -u

if [ $# -ne 2 ]; then
    echo "usage: $0 WAVELANE_BINARY OUT_DIR" >&2
    exit 2
fi
BIN=$1
OUT=$2
mkdir -p "$OUT"
if ! "$BIN" --version >/dev/null 2>&1; then
    echo "$BIN does not run" >&2
    exit 2
fi

BIG=512
SMALL=128
REPEATS=4
LIMIT=110    # seconds per step; a step killed at its limit loses its report
DEADLINE=320 # seconds: later steps are skipped (recorded in steps.txt)
if [ "${SWEEP_QUICK:-0}" = 1 ]; then
    BIG=1
    SMALL=1
    REPEATS=2
fi

{
    date -u
    "$BIN" --version
    "$BIN" devices 2>&1
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,temperature.gpu --format=csv
} >"$OUT/device.txt" 2>&1

step=0
# run NAME ARGS...: one `bench vle` process with a time limit.
run() {
    local name=$1
    shift
    step=$((step + 1))
    if [ "$SECONDS" -ge "$DEADLINE" ]; then
        echo "$(printf '%02d' "$step") $name skipped (past ${DEADLINE}s): $*" | tee -a "$OUT/steps.txt"
        return
    fi
    local base
    base=$(printf '%s/%02d-%s' "$OUT" "$step" "$name")
    local t0=$SECONDS
    timeout -k 5 "$LIMIT" "$BIN" bench vle --backend gpu --json "$@" \
        >"$base.json" 2>"$base.err"
    local rc=$?
    echo "$(printf '%02d' "$step") $name rc=$rc $((SECONDS - t0))s: $*" | tee -a "$OUT/steps.txt"
}

# Most important first. The main grid at 128 MB: block geometry (workgroup
# size x sub-blocks per block), table copies and shared buffers, polling
# with atomic loads. Variants that exceed the device's shared memory are
# reported as errors and cost nothing.
GRID=(--repeats "$REPEATS" --workgroup-size 64,128,256 --groups-per-thread 1,2,4,8
    --table-copies 1,16 --buffers 1,2)
run "grid-text-${SMALL}mb" --kind text --size-mb "$SMALL" "${GRID[@]}"
run "grid-random-${SMALL}mb" --kind random --size-mb "$SMALL" "${GRID[@]}"
# 512 MB text: the two largest blocks, with and without table copies.
run "big-text-${BIG}mb" --kind text --size-mb "$BIG" --repeats 3 \
    --groups-per-thread 4,8 --table-copies 1,16
run "grid-skewed-${SMALL}mb" --kind skewed --size-mb "$SMALL" "${GRID[@]}"
# Polling (atomic loads vs RMWs) and persistent workgroup counts, twice over
# to show drift between rounds (text was the erratic kind before).
run "poll-workgroups-text-${SMALL}mb" --kind text --size-mb "$SMALL" --repeats "$REPEATS" \
    --rounds 2 --groups-per-thread 1,4,8 --poll load,rmw --workgroups 528,1056,2112
# The 32-bit fallback scan.
run "fallback-text-${SMALL}mb" --kind text --size-mb "$SMALL" --repeats "$REPEATS" \
    --fallback-scan --groups-per-thread 1,4,8 --table-copies 1,16
run "big-random-${BIG}mb" --kind random --size-mb "$BIG" --repeats 3 \
    --groups-per-thread 4,8 --table-copies 1,16
run "big-skewed-${BIG}mb" --kind skewed --size-mb "$BIG" --repeats 3 \
    --groups-per-thread 4,8 --table-copies 1,16
run "poll-workgroups-random-${SMALL}mb" --kind random --size-mb "$SMALL" --repeats "$REPEATS" \
    --groups-per-thread 1,4,8 --poll load,rmw --workgroups 528,1056,2112

# One line per variant: step, kind, MB, scan, wg, groups, copies, buffers,
# poll, workgroups, round, best GB/s, median GB/s, fraction of copy (best).
{
    echo "step kind mb scan wg groups copies buffers poll workgroups round best_gbs median_gbs best_of_copy"
    for f in "$OUT"/[0-9]*.json; do
        [ -s "$f" ] || continue
        tr -d ' \n' <"$f" | sed 's/"gpu_variants":/\n/' | tail -n 1 |
            sed 's/{"round"/\n{"round"/g' | grep '^{"round"' | while IFS= read -r v; do
            field() { printf '%s' "$v" | sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p" | head -n 1 | tr -d '"'; }
            head=$(tr -d ' \n' <"$f")
            kind=$(printf '%s' "$head" | sed -n 's/.*"input_kind":"\([a-z]*\)".*/\1/p')
            bytes=$(printf '%s' "$head" | sed -n 's/.*"input_bytes":\([0-9]*\).*/\1/p')
            scan=$(printf '%s' "$head" | sed -n 's/.*"gpu_scan":"\([A-Za-z0-9]*\)".*/\1/p')
            best_ms=$(field best_ms)
            median_ms=$(field median_ms)
            if [ -n "$best_ms" ]; then
                # GB/s = bytes / (ms * 1e-3) / 1e9.
                best=$(awk -v b="$bytes" -v t="$best_ms" 'BEGIN { printf "%.4g", b / t / 1e6 }')
                median=$(awk -v b="$bytes" -v t="$median_ms" 'BEGIN { printf "%.4g", b / t / 1e6 }')
                frac=$(field fraction_of_copy | awk '{ printf "%.3f", $1 }')
            else
                best=error
                median=-
                frac=-
            fi
            echo "$(basename "$f" .json) $kind $((bytes / 1000000)) $scan $(field workgroup_size) $(field groups_per_thread) $(field table_copies) $(field buffers) $(field poll) $(field workgroups) $(field round) $best $median $frac"
        done
    done
} >"$OUT/summary.txt"
echo "done in ${SECONDS}s; results in $OUT (summary.txt, steps.txt)"
