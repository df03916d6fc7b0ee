#version 450
// BPC-PaCo encoder, the order in which the coding dispatch takes the
// codeblocks: heaviest first. A codeblock's coding time grows with its
// bitplane count (M + 1), and the reference sample's codeblocks range from
// 1 to 13 bitplanes in subband order; taken in index order, the last
// codeblocks to start can be heavy ones that run on while most of the GPU
// idles. Taken by decreasing M (longest job first), the tail is short
// (docs/history/bpc-paco.md, codeblock order). The order changes no
// byte: every codeblock codes into its own scratch region and count.
//
// bpc_measure.comp counted the codeblocks of each bucket (bucket 0 holds
// M = 27, bucket 27 M = 0, bucket 28 the empty and refused ones) into
// buckets[0..29]; a codeblock's place is the count of the buckets before
// its own, plus its rank among its bucket's codeblocks taken so far
// (atomic cursors in buckets[29..58]). A workgroup ranks its 256 codeblocks
// in shared memory first and takes one global cursor step per bucket (one
// global atomic per codeblock on a handful of addresses took 15 us at
// 8192^2). Places within a bucket go in whatever order the atomics give,
// which only changes the order of the codeblocks of equal M.
#extension GL_GOOGLE_include_directive : require

#define ORDER_WORKGROUP 256u
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer Tops { uint tops[]; };
layout(set = 0, binding = 1) buffer Buckets { uint buckets[]; };
layout(set = 0, binding = 2) writeonly buffer Order { uint order[]; };

layout(push_constant) uniform Params {
    uint block_count;
} params;

#include "bpc/order.glsl"

// Where each bucket's places start (the counts of the buckets before it).
shared uint bucket_start[BPC_ORDER_BUCKETS];
// This workgroup's codeblocks per bucket, then its first place in each.
shared uint local_count[BPC_ORDER_BUCKETS];
shared uint local_base[BPC_ORDER_BUCKETS];

void main() {
    if (uint(buckets.length()) < 2u * BPC_ORDER_BUCKETS) {
        return;
    }
    uint lid = gl_LocalInvocationID.x;
    uint n = min(params.block_count, uint(tops.length()));
    if (lid == 0u) {
        uint sum = 0u;
        for (uint i = 0u; i < BPC_ORDER_BUCKETS; i++) {
            bucket_start[i] = sum;
            sum += buckets[i];
        }
    }
    // Batches beyond the grid loop; the condition is per workgroup.
    for (uint first = gl_WorkGroupID.x * ORDER_WORKGROUP; first < n;
         first += gl_NumWorkGroups.x * ORDER_WORKGROUP) {
        if (lid < BPC_ORDER_BUCKETS) {
            local_count[lid] = 0u;
        }
        barrier();
        uint b = first + lid;
        uint k = b < n ? bpc_order_bucket(tops[b]) : 0u;
        uint rank = b < n ? atomicAdd(local_count[k], 1u) : 0u;
        barrier();
        if (lid < BPC_ORDER_BUCKETS && local_count[lid] != 0u) {
            local_base[lid] = atomicAdd(buckets[BPC_ORDER_BUCKETS + lid], local_count[lid]);
        }
        barrier();
        uint place = bucket_start[k] + local_base[k] + rank;
        // Counts that do not match the tops (never from bpc_measure) can
        // only leave places unwritten or repeated; the coders check every
        // index they read.
        if (b < n && place < n && place < uint(order.length())) {
            order[place] = b;
        }
        barrier(); // local_count and local_base are read before the next batch clears them
    }
}
