#version 450
// BPC-PaCo encoder, records builds with cut decreases: marks the candidate
// cuts of every codeblock's stream, the twin of host/src/bpc/cuts.rs
// (`cut_candidates`; its module docs say why these cuts suffice for rate
// control). Per pass p, the cuts m of the pass (from the larger of 1 and
// the end of the passes before, to the pass's own end, within the stream)
// with their decreases clamped to the pass's index range [I(p-1), I(p)]:
// the vertices of their upper and their lower hull get flags[offset + m]
// = 1; a pass whose range is empty marks its first cut only. Then
// `scan.comp` turns the flags into places and `bpc_cut_compact.comp` gathers
// the candidates, so that only they come down.
//
// One invocation per (codeblock, pass), grid-stride. The monotone chain's
// stack lives in `stack` at the pass's own cut positions (a pass's chain
// holds at most its cuts, and the passes' positions do not overlap), so
// no invocation needs memory beyond its pass's. Cross products are exact:
// a decrease difference (below 2^63 for the codeblocks the host keeps on
// the device, bpc::gpu::records_fit) times a codeword difference (below
// 2^32) as a 96-bit magnitude and a sign. Every index is bounded by the
// buffers' lengths and every loop by the pass's cuts, whatever the
// records say.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x = 64) in;

// One uvec4 per pass record: (kind | bitplane << 8, codewords through the
// pass, decrease low word, decrease high word); codeblock b's from
// record_starts[b] to record_starts[b + 1].
layout(set = 0, binding = 0) readonly buffer Records { uvec4 records[]; };
layout(set = 0, binding = 1) readonly buffer RecordStarts { uint record_starts[]; };
// The exclusive scan of the codeword counts, and their total.
layout(set = 0, binding = 2) readonly buffer Offsets { uint offsets[]; };
layout(set = 0, binding = 3) readonly buffer Total { uint total[]; };
// The packed cut decreases: codeblock b's cut m at offsets[b] + m.
layout(set = 0, binding = 4) readonly buffer Cuts { int64_t cuts[]; };
layout(set = 0, binding = 5) buffer Stack { uint stack[]; };
layout(set = 0, binding = 6) buffer Flags { uint flags[]; };

layout(push_constant) uniform Params {
    uint block_count;
    // The most passes a codeblock has: pairs (b, i) for i below it.
    uint stride;
} params;

// |a| * b as (high 64 bits, low 32 bits) of a 96-bit magnitude.
void mul_mag(uint64_t a, uint b, out uint64_t high, out uint low) {
    uint64_t p_lo = uint64_t(uint(a)) * uint64_t(b);
    uint64_t p_hi = uint64_t(uint(a >> 32)) * uint64_t(b);
    low = uint(p_lo);
    high = (p_lo >> 32) + p_hi;
}

// Sign (-1, 0, 1) of dy_l * dm_l - dy_r * dm_r, with dm_l, dm_r > 0.
int compare_products(int64_t dy_l, uint dm_l, int64_t dy_r, uint dm_r) {
    int sl = dy_l < 0l ? -1 : (dy_l > 0l ? 1 : 0);
    int sr = dy_r < 0l ? -1 : (dy_r > 0l ? 1 : 0);
    if (sl != sr) {
        return sl > sr ? 1 : -1;
    }
    if (sl == 0) {
        return 0;
    }
    uint64_t hl, hr;
    uint ll, lr;
    mul_mag(dy_l < 0l ? uint64_t(-dy_l) : uint64_t(dy_l), dm_l, hl, ll);
    mul_mag(dy_r < 0l ? uint64_t(-dy_r) : uint64_t(dy_r), dm_r, hr, lr);
    int mag = hl != hr ? (hl > hr ? 1 : -1) : (ll != lr ? (ll > lr ? 1 : -1) : 0);
    return sl * mag;
}

// Cut m's decrease clamped to [lo, hi], relative to lo.
int64_t clamped(uint at, int64_t lo, int64_t hi) {
    return clamp(cuts[at], lo, hi) - lo;
}

void main() {
    uint n = min(params.block_count, uint(offsets.length()));
    n = min(n, uint(record_starts.length()) - min(uint(record_starts.length()), 1u));
    uint stride = params.stride;
    uint cut_len = min(uint(cuts.length()), min(uint(stack.length()), uint(flags.length())));
    uint records_len = uint(records.length());
    uint invocations = gl_NumWorkGroups.x * 64u;
    // Grid-stride over (codeblock, pass) pairs, in 64-bit so that no pair
    // count wraps.
    uint64_t pairs = uint64_t(n) * uint64_t(stride);
    for (uint64_t g = uint64_t(gl_GlobalInvocationID.x); g < pairs; g += uint64_t(invocations)) {
        uint b = uint(g / uint64_t(stride));
        uint i = uint(g % uint64_t(stride));
        uint first = record_starts[b];
        uint last = min(record_starts[b + 1u], records_len);
        if (first >= last || i >= last - first) {
            continue;
        }
        uint base = offsets[b];
        uint end_all = b + 1u < n ? offsets[b + 1u] : total[0];
        if (end_all < base || end_all > cut_len) {
            continue;
        }
        uint cw = end_all - base;
        // The passes before: where this pass's cuts start, and I(i - 1).
        uint start = 0u;
        int64_t index0 = 0l;
        for (uint k = 0u; k < i; k++) {
            uvec4 r = records[first + k];
            start = max(start, min(r.y, cw));
            index0 += int64_t(uint64_t(r.z) | (uint64_t(r.w) << 32));
        }
        uvec4 own = records[first + i];
        int64_t index1 = index0 + int64_t(uint64_t(own.z) | (uint64_t(own.w) << 32));
        uint lo = max(start, 1u);
        uint end = min(own.y, cw);
        if (lo >= end) {
            continue;
        }
        if (index1 <= index0) {
            flags[base + lo] = 1u;
            continue;
        }
        uint bottom = base + lo;
        for (uint side = 0u; side < 2u; side++) {
            bool upper = side == 0u;
            uint height = 0u;
            for (uint m = lo; m < end; m++) {
                int64_t y = clamped(base + m, index0, index1);
                while (height >= 2u) {
                    uint ma = stack[bottom + height - 2u];
                    uint mb = stack[bottom + height - 1u];
                    int64_t ya = clamped(base + ma, index0, index1);
                    int64_t yb = clamped(base + mb, index0, index1);
                    // b against the chord a -> m.
                    int c = compare_products(yb - ya, m - ma, y - ya, mb - ma);
                    if (upper ? c > 0 : c < 0) {
                        break;
                    }
                    height--;
                }
                stack[bottom + height] = m;
                height++;
            }
            for (uint k = 0u; k < height; k++) {
                flags[base + stack[bottom + k]] = 1u;
            }
        }
    }
}
