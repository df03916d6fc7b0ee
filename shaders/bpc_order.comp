#version 450
// BPC-PaCo encoder, the order in which the coding dispatch takes the
// codeblocks: heaviest first. A codeblock's coding time grows with its
// bitplane count (M + 1), and the reference sample's codeblocks range from
// 1 to 13 bitplanes in subband order; taken in index order, the last
// codeblocks to start can be heavy ones that run on while most of the GPU
// idles. Taken by decreasing M (longest job first), the tail is short
// (docs/perf-notes.md, BPC-PaCo, codeblock order). The order changes no
// byte: every codeblock codes into its own scratch region and count.
//
// bpc_measure.comp counted the codeblocks of each bucket (bucket 0 holds
// M = 27, bucket 27 M = 0, bucket 28 the empty and refused ones) into
// buckets[0..29]; here one invocation per codeblock takes the next place of
// its bucket (atomic cursors in buckets[29..58]) after every place of the
// buckets before it. Places within a bucket go in whatever order the atomics
// give, which only changes the order of the codeblocks of equal M.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Tops { uint tops[]; };
layout(set = 0, binding = 1) buffer Buckets { uint buckets[]; };
layout(set = 0, binding = 2) writeonly buffer Order { uint order[]; };

layout(push_constant) uniform Params {
    uint block_count;
} params;

#include "common/bpc_order.glsl"

void main() {
    if (uint(buckets.length()) < 2u * BPC_ORDER_BUCKETS) {
        return;
    }
    uint n = min(params.block_count, uint(tops.length()));
    // Batches beyond the grid loop.
    for (uint b = gl_GlobalInvocationID.x; b < n; b += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
        uint k = bpc_order_bucket(tops[b]);
        uint start = 0u;
        for (uint i = 0u; i < k; i++) {
            start += buckets[i];
        }
        uint place = start + atomicAdd(buckets[BPC_ORDER_BUCKETS + k], 1u);
        // Counts that do not match the tops (never from bpc_measure) can
        // only leave places unwritten or repeated; the coders check every
        // index they read.
        if (place < n && place < uint(order.length())) {
            order[place] = b;
        }
    }
}
