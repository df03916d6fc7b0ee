#version 450
// Byte histogram, pass 1: workgroup g counts the bytes of input vectors
// [g * vecs_per_group, (g + 1) * vecs_per_group) and writes its 256 counts to
// partials[g * 256 ..]. Equal to wavelane_core::vle::histogram summed over
// the groups (vle_histogram_reduce.comp does the sum).
//
// The workgroup keeps 8 copies of the table in shared memory (invocation i
// adds to copy i % 8) against same-address contention; every byte is one
// shared atomic add. Merging runs of equal bytes before adding, and 32
// copies, were both slower on the H200 (docs/history/vle.md).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "vle/vle.glsl"

#define COPIES 8u
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer Input { uvec4 input_vecs[]; };
layout(set = 0, binding = 1) writeonly buffer Partials { uint partials[]; };
layout(push_constant) uniform Params {
    uint n_symbols;      // bytes to count
    uint vecs_per_group; // 16-byte vectors per workgroup (< 2^28)
} params;

shared uint s_hist[COPIES * 256u];

void main() {
    uint lid = gl_LocalInvocationIndex;
    for (uint i = lid; i < COPIES * 256u; i += 256u) {
        s_hist[i] = 0u;
    }
    barrier();
    uint copy = (lid % COPIES) * 256u;
    uint n_vecs = min((params.n_symbols + 15u) / 16u, uint(input_vecs.length()));
    uint start = gl_WorkGroupID.x * params.vecs_per_group;
    uint end = min(start + params.vecs_per_group, n_vecs);
    for (uint v = start + lid; v < end; v += 256u) {
        uvec4 x = input_vecs[v];
        uint valid = min(params.n_symbols - v * 16u, 16u);
        [[unroll]] for (uint k = 0u; k < 16u; k++) {
            uint sym = (x[k >> 2] >> ((k & 3u) * 8u)) & 0xffu;
            if (k < valid) {
                atomicAdd(s_hist[copy + sym], 1u);
            }
        }
    }
    barrier();
    uint sum = 0u;
    for (uint c = 0u; c < COPIES; c++) {
        sum += s_hist[c * 256u + lid];
    }
    partials[gl_WorkGroupID.x * 256u + lid] = sum;
}
