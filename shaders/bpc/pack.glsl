// BPC-PaCo encoder, last dispatch: gathers every codeblock's codewords from
// its scratch region into one stream (bpc_pack; bpc_pack_cuts, with
// BPC_PACK_CUTS defined, gathers the records builds' cut decreases, one
// int64 per codeword, from the same regions into the same positions).
// `offsets` is the exclusive scan of the codeword counts (codeblock b's codewords start at offsets[b]) and
// total[0] their sum, so codeblock b has offsets[b + 1] - offsets[b]
// codewords (total[0] - offsets[b] for the last one).
//
// One workgroup copies one codeblock at a time with 16-bit loads and
// stores, consecutive invocations taking consecutive codewords, four loads
// in flight per invocation. (It used
// to be one invocation per output word finding its codeblock by a binary
// search over the offsets: 14 dependent loads a codeword, 0.19 ms at
// 8192^2, docs/history/bpc-paco.md.)
#extension GL_EXT_control_flow_attributes : require
#ifdef BPC_PACK_CUTS
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define PACK_WORD int64_t
#define PACK_VALUE int64_t
#else
#extension GL_EXT_shader_16bit_storage : require
#define PACK_WORD uint16_t
// Held in 32 bits between load and store (16-bit storage only).
#define PACK_VALUE uint
#endif

#define PACK_WORKGROUP 128u
layout(local_size_x = 128) in;

layout(set = 0, binding = 0) readonly buffer Offsets { uint offsets[]; };
layout(set = 0, binding = 1) readonly buffer ScratchOffsets { uint scratch_offsets[]; };
layout(set = 0, binding = 2) readonly buffer Scratch { PACK_WORD scratch[]; };
layout(set = 0, binding = 3) readonly buffer Total { uint total[]; };
layout(set = 0, binding = 4) writeonly buffer Packed { PACK_WORD packed[]; };

layout(push_constant) uniform Params {
    uint block_count;
} params;

void main() {
    uint n = min(params.block_count, uint(offsets.length()));
    n = min(n, uint(scratch_offsets.length()));
    uint codewords = total[0];
    uint scratch_len = uint(scratch.length());
    uint packed_len = uint(packed.length());
    for (uint b = gl_WorkGroupID.x; b < n; b += gl_NumWorkGroups.x) {
        uint start = offsets[b];
        uint end = b + 1u < n ? offsets[b + 1u] : codewords;
        // Bounds for offsets that do not come from the scan (never from
        // bpc::gpu::encode): no codeword outside either buffer.
        end = min(end, packed_len);
        uint from = scratch_offsets[b];
        uint count = end > start ? end - start : 0u;
        count = from <= scratch_len ? min(count, scratch_len - from) : 0u;
        // Four loads in flight per invocation before their stores.
        for (uint k = gl_LocalInvocationID.x; k < count; k += 4u * PACK_WORKGROUP) {
            PACK_VALUE v[4];
            [[unroll]] for (uint u = 0u; u < 4u; u++) {
                uint at = k + u * PACK_WORKGROUP;
                v[u] = at < count ? PACK_VALUE(scratch[from + at]) : PACK_VALUE(0);
            }
            [[unroll]] for (uint u = 0u; u < 4u; u++) {
                uint at = k + u * PACK_WORKGROUP;
                if (at < count) {
                    packed[start + at] = PACK_WORD(v[u]);
                }
            }
        }
    }
}
