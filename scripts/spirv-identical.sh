#!/usr/bin/env bash
# Checks that the SPIR-V the build made is byte-identical to what the shaders
# of a git revision compile to, for every shader of that revision: the guard
# for moving or regenerating shader sources without changing what runs.
#
#   scripts/spirv-identical.sh [REV [OUT_DIR]]
#
# REV (default: main) is compiled here with the flags of host/build.rs
# (glslc --target-env=vulkan1.1 -O -Werror -I shaders/): its entry points are
# every shaders/**/*.comp plus, where it has one, the variant table
# host/build/variants.rs, whose entry points a throwaway rustc build of that
# file writes out (Variant::source, the code host/build.rs uses). OUT_DIR
# (default: the newest
# $CARGO_TARGET_DIR/debug/build/wavelane-*/out, after `cargo build -p
# wavelane --lib`) holds the build's .spv files. Fails on any shader that
# differs or exists on one side only. A shader whose bytes differ only in the
# numbering of its ids (spirv-dis with every id renamed in order of first
# appearance gives the same text: the same instructions in the same order,
# e.g. after moving code into a function that glslc inlines) is listed as
# such and does not fail.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-main}
out=${2:-}
target=${CARGO_TARGET_DIR:-target}
if [[ -z $out ]]; then
    cargo build -q -p wavelane --lib
    out=$(ls -td "$target"/debug/build/wavelane-*/out 2>/dev/null | while read -r d; do
        [[ -f $d/shaders.rs ]] && echo "$d" && break; done)
    [[ -n $out ]] || { echo "no wavelane build output under $target" >&2; exit 1; }
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive "$rev" shaders | tar -x -C "$tmp"
mkdir -p "$tmp/spv" "$tmp/variants" "$tmp/host/build"
if git show "$rev:host/build/variants.rs" > "$tmp/host/build/variants.rs" 2>/dev/null; then
    cat > "$tmp/gen.rs" <<RS
#[allow(dead_code)]
#[path = "$tmp/host/build/variants.rs"]
mod variants;
fn main() {
    for v in variants::VARIANTS {
        std::fs::write(format!("$tmp/variants/{}.comp", v.name), v.source()).unwrap();
    }
}
RS
    rustc --edition 2021 -o "$tmp/gen" "$tmp/gen.rs"
    "$tmp/gen"
fi
compile() { # name source
    glslc --target-env=vulkan1.1 -O -Werror -I "$tmp/shaders" "$2" -o "$tmp/spv/$1.spv"
}
while IFS= read -r -d '' src; do
    compile "$(basename "$src" .comp)" "$src"
done < <(find "$tmp/shaders" "$tmp/variants" -name '*.comp' -print0)

# The disassembly with ids renamed in order of first appearance.
canonical() {
    spirv-dis --raw-id "$1" | python3 -c '
import re, sys
ids = {}
def rename(m):
    return ids.setdefault(m.group(0), "%%v%d" % len(ids))
for line in sys.stdin:
    if not line.startswith("; Bound"):
        print(re.sub(r"%\d+", rename, line.strip()))'
}

status=0 count=0 renumbered=0
for spv in "$tmp"/spv/*.spv; do
    name=$(basename "$spv")
    count=$((count + 1))
    if [[ ! -f $out/$name ]]; then
        echo "missing from the build: $name" >&2; status=1
    elif ! cmp -s "$spv" "$out/$name"; then
        if [[ $(canonical "$spv") == "$(canonical "$out/$name")" ]]; then
            echo "same up to id numbering: $name"; renumbered=$((renumbered + 1))
        else
            echo "differs: $name" >&2; status=1
        fi
    fi
done
for spv in "$out"/*.spv; do
    [[ -f $tmp/spv/$(basename "$spv") ]] || { echo "not in $rev: $(basename "$spv")" >&2; status=1; }
done
[[ $status == 0 ]] && echo "all $count shaders of $rev match $out" \
    "($((count - renumbered)) byte-identical, $renumbered up to id numbering)"
exit $status
