#!/usr/bin/env bash
# Lossless encode speed of wavelane (CPU backend) against OpenJPH
# (`ojph_compress`) and OpenJPEG (`opj_compress`), interleaved so that drift
# in the machine's speed touches every tool alike (docs/history/codec.md).
#
# Usage: scripts/bench-lossless-speed.sh [--cpus LIST] [--rounds N]
#            [--wavelane NAME=PATH]... IMAGE...
#   --cpus LIST     pin every command to these CPUs (taskset), e.g. 2,3 for
#                   "a 2-core machine" on a larger one; default: no pinning
#   --rounds N      timed samples per tool and image (default 15); each
#                   sample times 10 runs (2 for images over 4 MB), so the
#                   shell's millisecond clock resolves 0.1 ms
#   --wavelane N=P  a wavelane binary to time under name N (repeatable, for
#                   A/B comparisons); default wavelane=target/release/wavelane
# IMAGE: PGM/PPM files (scripts/bench-codec.py makes the documented ones).
# Prints per image and tool the best and median wall and CPU (user + sys)
# milliseconds per encode, and OpenJPH's / OpenJPEG's best wall time over
# each tool's (>= 1 means at least as fast as that peer). Needs only bash,
# coreutils and the peers; a missing tool is an error, not a skipped row.
set -euo pipefail
cpus="" rounds=15
declare -a names=() bins=() images=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --cpus) cpus=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --wavelane) names+=("${2%%=*}"); bins+=("${2#*=}"); shift 2 ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        -*) echo "bench-lossless-speed: unknown option $1" >&2; exit 2 ;;
        *) images+=("$1"); shift ;;
    esac
done
if [[ ${#bins[@]} -eq 0 ]]; then
    names=(wavelane)
    bins=("$(dirname "$0")/../target/release/wavelane")
fi
[[ ${#images[@]} -gt 0 ]] || { echo "bench-lossless-speed: no images given" >&2; exit 2; }
for b in "${bins[@]}"; do
    [[ -x $b ]] || { echo "bench-lossless-speed: $b is not an executable" >&2; exit 1; }
done
for t in ojph_compress opj_compress; do
    command -v $t >/dev/null || { echo "bench-lossless-speed: $t is not installed (./scripts/setup.sh installs it)" >&2; exit 1; }
done
pin=()
[[ -n $cpus ]] && pin=(taskset -c "$cpus")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One encode by tool number i (the wavelane binaries first, then the peers).
encode() {
    local i=$1 img=$2
    if [[ $i -lt ${#bins[@]} ]]; then
        "${pin[@]}" "${bins[$i]}" encode "$img" -o "$tmp/$i.wl" --lossless --backend cpu
    elif [[ $i -eq ${#bins[@]} ]]; then
        "${pin[@]}" ojph_compress -i "$img" -o "$tmp/o.j2c" -reversible true
    else
        "${pin[@]}" opj_compress -i "$img" -o "$tmp/o.j2k"
    fi
}
tools=("${names[@]}" openjph openjpeg)
TIMEFORMAT='%R %U %S'
for img in "${images[@]}"; do
    runs=10
    [[ $(stat -c %s "$img") -gt 4000000 ]] && runs=2
    log=$tmp/times
    : >"$log"
    for _ in $(seq "$rounds"); do
        for i in "${!tools[@]}"; do
            t=$({ time for _ in $(seq $runs); do encode "$i" "$img" >/dev/null 2>&1; done; } 2>&1)
            echo "$i $runs $t" >>"$log"
        done
    done
    # A failed encode would time nothing: check that every tool wrote its file.
    for i in "${!tools[@]}"; do
        encode "$i" "$img" >/dev/null 2>&1 || { echo "bench-lossless-speed: ${tools[$i]} failed on $img" >&2; exit 1; }
    done
    echo "$img ($rounds samples of $runs encodes; ms per encode)"
    awk -v names="${tools[*]}" '
        function sortn(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } }
        { i = $1; n[i]++; w[i, n[i]] = 1000 * $3 / $2; c[i, n[i]] = 1000 * ($4 + $5) / $2 }
        END {
            k = split(names, tool, " ")
            for (i = 0; i < k; i++) {
                for (j = 1; j <= n[i]; j++) { ww[j] = w[i, j]; cc[j] = c[i, j] }
                sortn(ww, n[i]); sortn(cc, n[i])
                best[i] = ww[1]; med[i] = ww[int((n[i] + 1) / 2)]; cbest[i] = cc[1]; cmed[i] = cc[int((n[i] + 1) / 2)]
            }
            ojph = k - 2; opj = k - 1
            printf "  %-10s %9s %9s %9s %9s %10s %10s\n", "tool", "wall best", "wall med", "cpu best", "cpu med", "OpenJPH/x", "OpenJPEG/x"
            for (i = 0; i < k; i++)
                printf "  %-10s %9.2f %9.2f %9.2f %9.2f %10.3f %10.2f\n", tool[i + 1], best[i], med[i], cbest[i], cmed[i], best[ojph] / best[i], best[opj] / best[i]
        }' "$log"
    ls -l "$tmp"/*.wl "$tmp"/o.j2c "$tmp"/o.j2k | awk '{ printf "  %s %s bytes\n", $NF, $5 }' | sed "s|$tmp/||"
done
