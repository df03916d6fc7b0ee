#version 450
// Byte histogram, pass 2: one workgroup sums the per-workgroup counts of
// vle_histogram.comp into 64-bit totals, hist[2s] (low) and hist[2s + 1] (high).
#extension GL_GOOGLE_include_directive : require
#include "vle/vle.glsl"

layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer Partials { uint partials[]; };
layout(set = 0, binding = 1) writeonly buffer Hist { uint hist[]; };
layout(push_constant) uniform Params { uint n_groups; } params;

void main() {
    uint s = gl_LocalInvocationIndex;
    uint groups = min(params.n_groups, uint(partials.length()) / 256u);
    uvec2 total = uvec2(0u);
    for (uint g = 0u; g < groups; g++) {
        total = vle_add64(total, partials[g * 256u + s]);
    }
    hist[2u * s] = total.x;
    hist[2u * s + 1u] = total.y;
}
