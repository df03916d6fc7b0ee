#version 450
// Copies chosen codeblocks out of the resident index planes into one
// compact buffer, block after block, each row after row (stride = its
// width): what the lossless table fit counts symbols on, so that only the
// sampled blocks come down to the host, not the planes
// (host/src/codec/stages/resident.rs, `gather`). One workgroup per block
// (grid-stride over blocks); every read and write is checked against its
// buffer, so a bad descriptor copies nothing out of bounds.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Src { int src[]; };
// Per block: source offset, source stride, width | height << 16, offset
// in Dst.
layout(set = 0, binding = 1) readonly buffer Blocks { uvec4 blocks[]; };
layout(set = 0, binding = 2) writeonly buffer Dst { int dst[]; };

layout(push_constant) uniform Params {
    uint count;  // blocks
} p;

void main() {
    uint count = min(p.count, uint(blocks.length()));
    for (uint b = gl_WorkGroupID.x; b < count; b += gl_NumWorkGroups.x) {
        uvec4 d = blocks[b];
        // Codeblocks are at most 64 wide and 256 tall: the loop below runs
        // at most 16384 / 64 times per block whatever the descriptor says.
        uint width = min(d.z & 0xffffu, 64u);
        uint height = min(d.z >> 16, 256u);
        uint n = width * height;
        for (uint i = gl_LocalInvocationID.x; i < n; i += gl_WorkGroupSize.x) {
            uint y = i / width;
            uint x = i - y * width;
            uint from = d.x + y * d.y + x;
            uint to = d.w + i;
            if (from < uint(src.length()) && to < uint(dst.length())) {
                dst[to] = src[from];
            }
        }
    }
}
