#version 450
// The decoder's dequantization on the device, in place on one component's
// plane of decoded indices: host stages::quantize `host_dequantize` with
// codec/quant.glsl's `dequantize_i32` (mid-bin reconstruction where the
// block's decode reached bitplane 0, the block's bitplane shift undone;
// blocks whose indices are the coefficients are skipped). One workgroup
// per codeblock (grid-stride over blocks), invocation x owns column x.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "codec/quant.glsl"

layout(set = 0, binding = 0) buffer Plane { int plane[]; };
layout(set = 0, binding = 1) readonly buffer Blocks { Block blocks[]; };

layout(push_constant) uniform Params {
    uint first;       // this dispatch's first block in Blocks
    uint count;      // blocks of this dispatch
    uint plane_len;  // elements of Plane
} p;

void main() {
    uint x = gl_LocalInvocationID.x;
    for (uint k = gl_WorkGroupID.x; k < p.count; k += gl_NumWorkGroups.x) {
        if (p.first + k >= uint(blocks.length())) {
            break;
        }
        Block b = blocks[p.first + k];
        bool skip = (b.shift & 0x200u) != 0u;
        if (skip || x >= min(b.width, 64u)) {
            continue;
        }
        uint64_t q16 = u64_of(b.q16_lo, b.q16_hi);
        uint64_t limit = ~0ul / max(q16, 1ul);
        bool half_bin = (b.shift & 0x100u) != 0u;
        uint shift = b.shift & 0xffu;
        for (uint y = 0u; y < b.height; y++) {
            uint at = b.offset + y * b.stride + x;
            if (at >= p.plane_len) {
                break;
            }
            plane[at] = dequantize_i32(plane[at], shift, q16, half_bin, limit);
        }
    }
}
