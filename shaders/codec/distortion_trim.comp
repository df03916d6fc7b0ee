#version 450
// The distortion sums of every codeblock (distortion.comp: SUMS entries a
// block, the energy, then four per bitplane for 28 bitplanes), trimmed to
// the bitplanes a block has, so that fewer bytes come down: the sums of
// the bitplanes above a block's top are zero (no coefficient has its top
// bitplane there, and none is refined there), and most blocks of a lossy
// image have a dozen bitplanes or fewer. `mode` 0 writes each block's
// count of entries kept, `1 + 4 * planes` with `planes` one above the
// highest bitplane with a nonzero sum, into `kept`; `scan.comp` turns the
// counts into starts; `mode` 1 finds the same count again and copies the
// block's kept entries to its start in `trimmed`. The host pads the rest with zeros
// (host/src/codec/stages/device.rs, `quantize`). One workgroup per
// block, grid-stride; every index is bounded by the buffers' lengths.
layout(local_size_x = 64) in;

// distortion::sums::PLANES and SUMS.
const uint PLANES = 28u;
const uint SUMS = 1u + 4u * PLANES;

layout(set = 0, binding = 0) readonly buffer Sums { uvec4 sums[]; };
// Mode 0: each block's count; mode 1: each block's start (the scan).
layout(set = 0, binding = 1) buffer Kept { uint kept[]; };
layout(set = 0, binding = 2) writeonly buffer Trimmed { uvec4 trimmed[]; };

layout(push_constant) uniform Params {
    uint block_count;
    uint mode;
} p;

shared uint highest;

void main() {
    uint n = min(p.block_count, min(uint(kept.length()), uint(sums.length()) / SUMS));
    uint out_len = uint(trimmed.length());
    for (uint b = gl_WorkGroupID.x; b < n; b += gl_NumWorkGroups.x) {
        uint base = b * SUMS;
        if (gl_LocalInvocationID.x == 0u) {
            highest = 0u;
        }
        barrier();
        // Entries 1..SUMS: entry e belongs to bitplane (e - 1) / 4.
        for (uint e = 1u + gl_LocalInvocationID.x; e < SUMS; e += 64u) {
            if (any(notEqual(sums[base + e], uvec4(0u)))) {
                atomicMax(highest, (e - 1u) / 4u + 1u);
            }
        }
        barrier();
        uint count = 1u + 4u * highest;
        if (p.mode == 0u) {
            if (gl_LocalInvocationID.x == 0u) {
                kept[b] = count;
            }
        } else {
            uint start = kept[b];
            for (uint e = gl_LocalInvocationID.x; e < count; e += 64u) {
                if (start + e < out_len) {
                    trimmed[start + e] = sums[base + e];
                }
            }
        }
        // Every invocation has read `highest` before the next block resets it.
        barrier();
    }
}
