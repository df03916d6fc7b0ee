#!/usr/bin/env bash
# Encode and decode speed of wavelane (CPU backend) against OpenJPH
# (`ojph_compress`/`ojph_expand`) and OpenJPEG (`opj_compress`/
# `opj_decompress`), interleaved so that drift in the machine's speed
# touches every tool alike (docs/history/codec.md).
#
# Usage: scripts/bench-lossless-speed.sh [--cpus LIST] [--rounds N]
#            [--ops LIST] [--bpp B] [--wavelane NAME=PATH]... IMAGE...
#   --cpus LIST     pin every command to these CPUs (taskset), e.g. 2,3 for
#                   "a 2-core machine" on a larger one; default: no pinning
#   --rounds N      timed samples per tool, image and operation (default
#                   15); each sample times 10 runs (2 for images over 4 MB),
#                   so that the shell's millisecond clock resolves 0.1 ms
#   --ops LIST      encode, decode or encode,decode (default)
#   --bpp B         lossy at B bits per pixel (wavelane --bpp B, OpenJPEG
#                   -I -r 24/B; OpenJPH has no rate control and is left
#                   out); default lossless (5/3 + RCT for every tool)
#   --wavelane N=P  a wavelane binary to time under name N (repeatable, for
#                   A/B comparisons); default wavelane=target/release/wavelane
# IMAGE: PGM/PPM files (scripts/bench-codec.py makes the documented ones).
# Prints per image, operation and tool the best and median wall and CPU
# (user + sys) milliseconds per run, and each peer's best wall time over
# each tool's (>= 1 means at least as fast as that peer). Every tool reads
# and writes the same file formats (PPM/PGM in, its codestream out, and
# back). A lossless decode must give back the source's samples, and a
# missing tool is an error, not a skipped row. The decodes time each tool's
# own file of the image. Needs only bash, coreutils, cmp and the peers.
set -euo pipefail
cpus="" rounds=15 ops=encode,decode bpp=""
declare -a names=() bins=() images=()
while [[ $# -gt 0 ]]; do
    case $1 in
        --cpus) cpus=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --ops) ops=$2; shift 2 ;;
        --bpp) bpp=$2; shift 2 ;;
        --wavelane) names+=("${2%%=*}"); bins+=("${2#*=}"); shift 2 ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        -*) echo "bench-lossless-speed: unknown option $1" >&2; exit 2 ;;
        *) images+=("$1"); shift ;;
    esac
done
if [[ ${#bins[@]} -eq 0 ]]; then
    names=(wavelane)
    bins=("$(dirname "$0")/../target/release/wavelane")
fi
[[ ${#images[@]} -gt 0 ]] || { echo "bench-lossless-speed: no images given" >&2; exit 2; }
for op in ${ops//,/ }; do
    [[ $op == encode || $op == decode ]] || { echo "bench-lossless-speed: --ops takes encode and decode, not $op" >&2; exit 2; }
done
for b in "${bins[@]}"; do
    [[ -x $b ]] || { echo "bench-lossless-speed: $b is not an executable" >&2; exit 1; }
done
for t in ojph_compress ojph_expand opj_compress opj_decompress; do
    command -v $t >/dev/null || { echo "bench-lossless-speed: $t is not installed (./scripts/setup.sh installs it)" >&2; exit 1; }
done
pin=()
[[ -n $cpus ]] && pin=(taskset -c "$cpus")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tools=("${names[@]}")
if [[ -z $bpp ]]; then
    tools+=(openjph openjpeg)
    wl_mode=(--lossless)
    opj_mode=()
else
    tools+=(openjpeg)
    wl_mode=(--bpp "$bpp")
    # OpenJPEG's -r is a compression ratio: 24 bits per RGB pixel over the
    # target (8 for gray; set per image below).
    opj_mode=(-I)
fi
opj=$((${#tools[@]} - 1))
ojph=-1
[[ -z $bpp ]] && ojph=$((${#tools[@]} - 2))

# One encode by tool number i of image img (extension ext: ppm or pgm).
encode() {
    local i=$1 img=$2
    if [[ $i -lt ${#bins[@]} ]]; then
        "${pin[@]}" "${bins[$i]}" encode "$img" -o "$tmp/$i.wl" "${wl_mode[@]}" --backend cpu
    elif [[ $i -eq $ojph ]]; then
        "${pin[@]}" ojph_compress -i "$img" -o "$tmp/o.j2c" -reversible true
    else
        "${pin[@]}" opj_compress -i "$img" -o "$tmp/o.j2k" "${opj_mode[@]}" ${ratio:+-r "$ratio"}
    fi
}

# One decode by tool number i of the file its encode wrote.
decode() {
    local i=$1 ext=$2
    if [[ $i -lt ${#bins[@]} ]]; then
        "${pin[@]}" "${bins[$i]}" decode "$tmp/$i.wl" -o "$tmp/$i.$ext" --backend cpu
    elif [[ $i -eq $ojph ]]; then
        "${pin[@]}" ojph_expand -i "$tmp/o.j2c" -o "$tmp/o.$ext"
    else
        "${pin[@]}" opj_decompress -i "$tmp/o.j2k" -o "$tmp/k.$ext"
    fi
}

# The decoded file of tool i.
decoded() {
    local i=$1 ext=$2
    if [[ $i -lt ${#bins[@]} ]]; then echo "$tmp/$i.$ext"
    elif [[ $i -eq $ojph ]]; then echo "$tmp/o.$ext"
    else echo "$tmp/k.$ext"; fi
}

# The sample byte count of a binary PNM whose header has no comment
# (the source images; decoders may write comments into theirs).
sample_bytes() {
    local f=$1 w h max comps=1
    read -r w h max < <(head -c 64 "$f" | tr -s ' \n\t\r\0' ' ' | cut -d' ' -f2-4)
    [[ $(head -c 2 "$f") == P6 ]] && comps=3
    echo $((w * h * comps * (max > 255 ? 2 : 1)))
}

report() {
    local log=$1
    awk -v names="${tools[*]}" -v ojph="$ojph" -v opj="$opj" '
        function sortn(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } }
        { i = $1; n[i]++; w[i, n[i]] = 1000 * $3 / $2; c[i, n[i]] = 1000 * ($4 + $5) / $2 }
        END {
            k = split(names, tool, " ")
            for (i = 0; i < k; i++) {
                for (j = 1; j <= n[i]; j++) { ww[j] = w[i, j]; cc[j] = c[i, j] }
                sortn(ww, n[i]); sortn(cc, n[i])
                best[i] = ww[1]; med[i] = ww[int((n[i] + 1) / 2)]; cbest[i] = cc[1]; cmed[i] = cc[int((n[i] + 1) / 2)]
            }
            printf "  %-10s %9s %9s %9s %9s %10s %10s\n", "tool", "wall best", "wall med", "cpu best", "cpu med", "OpenJPH/x", "OpenJPEG/x"
            for (i = 0; i < k; i++) {
                r = (ojph >= 0) ? sprintf("%10.3f", best[ojph] / best[i]) : sprintf("%10s", "-")
                printf "  %-10s %9.2f %9.2f %9.2f %9.2f %s %10.2f\n", tool[i + 1], best[i], med[i], cbest[i], cmed[i], r, best[opj] / best[i]
            }
        }' "$log"
}

TIMEFORMAT='%R %U %S'
for img in "${images[@]}"; do
    runs=10
    [[ $(stat -c %s "$img") -gt 4000000 ]] && runs=2
    ext=ppm bits=24
    [[ $(head -c 2 "$img") == P5 ]] && ext=pgm bits=8
    ratio=""
    [[ -n $bpp ]] && ratio=$(awk -v b="$bits" -v r="$bpp" 'BEGIN { printf "%.4f", b / r }')
    # Every tool's file first (the decodes need them), checked.
    for i in "${!tools[@]}"; do
        encode "$i" "$img" >/dev/null 2>&1 || { echo "bench-lossless-speed: ${tools[$i]} failed to encode $img" >&2; exit 1; }
    done
    for op in ${ops//,/ }; do
        log=$tmp/times
        : >"$log"
        for _ in $(seq "$rounds"); do
            for i in "${!tools[@]}"; do
                arg=$img
                [[ $op == decode ]] && arg=$ext
                t=$({ time for _ in $(seq $runs); do $op "$i" "$arg" >/dev/null 2>&1; done; } 2>&1)
                echo "$i $runs $t" >>"$log"
            done
        done
        if [[ $op == decode ]]; then
            # A failed decode would time nothing: every tool decodes again
            # and, lossless, gives back the source's samples.
            for i in "${!tools[@]}"; do
                decode "$i" "$ext" >/dev/null 2>&1 || { echo "bench-lossless-speed: ${tools[$i]} failed to decode its file of $img" >&2; exit 1; }
                n=$(sample_bytes "$img")
                if [[ -z $bpp ]] && ! cmp -s <(tail -c "$n" "$img") <(tail -c "$n" "$(decoded "$i" "$ext")"); then
                    echo "bench-lossless-speed: ${tools[$i]}'s lossless decode of $img differs from it" >&2
                    exit 1
                fi
            done
        fi
        echo "$img: $op${bpp:+ at $bpp bpp} ($rounds samples of $runs runs; ms per run)"
        report "$log"
    done
    { ls -l "$tmp"/*.wl "$tmp"/o.j2c "$tmp"/o.j2k 2>/dev/null || true; } | awk '{ printf "  %s %s bytes\n", $NF, $5 }' | sed "s|$tmp/||"
done
