#version 450
// The encoder's quantization stage on the device, in place on one
// component's coefficient plane: every coefficient of every codeblock
// given becomes its dead-zone index (codec/quant.glsl, host
// stages::quantize `host_quantize`: a unit step keeps the coefficient
// itself), and each block's squared reconstruction error at full rate is
// summed exactly in u64 (saturating; the host weighs it into the noise
// estimate). One workgroup per codeblock (grid-stride over blocks),
// invocation x owns column x, rows in turn; the sum is reduced in shared
// memory, so it does not depend on the subgroup size.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "codec/quant.glsl"

layout(set = 0, binding = 0) buffer Plane { int plane[]; };
layout(set = 0, binding = 1) readonly buffer Blocks { Block blocks[]; };
layout(set = 0, binding = 2) writeonly buffer Errors { uvec2 errors[]; };

layout(push_constant) uniform Params {
    uint first;       // this dispatch's first block in Blocks
    uint count;       // blocks of this dispatch
    uint plane_len;   // elements of Plane
    uint error_len;   // elements of Errors
} p;

shared uint64_t partial[64];

uint64_t add_saturating(uint64_t a, uint64_t b) {
    uint64_t s = a + b;
    return s < a ? ~0ul : s;
}

void main() {
    uint x = gl_LocalInvocationID.x;
    for (uint k = gl_WorkGroupID.x; k < p.count; k += gl_NumWorkGroups.x) {
        if (p.first + k >= uint(blocks.length())) {
            break;
        }
        Block b = blocks[p.first + k];
        uint64_t q16 = u64_of(b.q16_lo, b.q16_hi);
        uint64_t limit = ~0ul / max(q16, 1ul);
        bool half_bin = q16 != UNIT_STEP; // quant::half_bin(q16, 0)
        uint64_t sum = 0ul;
        if (x < min(b.width, 64u)) {
            for (uint y = 0u; y < b.height; y++) {
                uint at = b.offset + y * b.stride + x;
                if (at >= p.plane_len) {
                    break;
                }
                int c = plane[at];
                int q = q16 == UNIT_STEP ? c : quantize_i32(c, q16);
                int64_t e = int64_t(c) - int64_t(dequantize_i32(q, 0u, q16, half_bin, limit));
                sum = add_saturating(sum, uint64_t(e * e));
                plane[at] = q;
            }
        }
        partial[x] = sum;
        barrier();
        for (uint half_n = 32u; half_n > 0u; half_n >>= 1) {
            if (x < half_n) {
                partial[x] = add_saturating(partial[x], partial[x + half_n]);
            }
            barrier();
        }
        if (x == 0u && b.slot < p.error_len) {
            errors[b.slot] = uvec2(uint(partial[0]), uint(partial[0] >> 32));
        }
        barrier();
    }
}
