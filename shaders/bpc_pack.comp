#version 450
// BPC-PaCo encoder, last dispatch: gathers every codeblock's codewords from
// its scratch region into one stream. `offsets` is the exclusive scan of
// the codeword counts (codeblock b's codewords start at offsets[b]) and
// total[0] their sum. Output word w holds stream codewords 2w (low half)
// and 2w + 1 (high half), so no two invocations write the same word.
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer Offsets { uint offsets[]; };
layout(set = 0, binding = 1) readonly buffer ScratchOffsets { uint scratch_offsets[]; };
layout(set = 0, binding = 2) readonly buffer Scratch { uint16_t scratch[]; };
layout(set = 0, binding = 3) readonly buffer Total { uint total[]; };
layout(set = 0, binding = 4) writeonly buffer Packed { uint packed[]; };

layout(push_constant) uniform Params {
    uint block_count;
} params;

// The codeblock holding stream codeword p: the last b with offsets[b] <= p
// (empty codeblocks share their offset with the next one).
uint owner(uint p, uint n) {
    uint lo = 0u;
    uint hi = n; // invariant: offsets[lo] <= p, and hi is past the answer
    while (hi - lo > 1u) {
        uint mid = (lo + hi) / 2u;
        if (offsets[mid] <= p) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

uint codeword(uint p, uint n) {
    uint b = owner(p, n);
    uint at = scratch_offsets[b] + (p - offsets[b]);
    return at < uint(scratch.length()) ? uint(scratch[at]) : 0u;
}

void main() {
    uint n = min(params.block_count, uint(offsets.length()));
    n = min(n, uint(scratch_offsets.length()));
    uint codewords = total[0];
    uint words = min((codewords + 1u) / 2u, uint(packed.length()));
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint w = gl_GlobalInvocationID.x; w < words && n > 0u; w += step) {
        uint p = 2u * w;
        uint lo = codeword(p, n);
        uint hi = p + 1u < codewords ? codeword(p + 1u, n) : 0u;
        packed[w] = lo | (hi << 16);
    }
}
