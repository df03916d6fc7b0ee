#version 450
// Bandwidth reference: copies n 16-byte words from src to dst, grid-stride.
// Benchmarks report their kernels against the faster of this kernel and
// vkCmdCopyBuffer (Gpu::time_copy), so "fraction of copy" is measured
// against the best plain copy the device achieves, not against a slow path.
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uvec4 dst[]; };

layout(push_constant) uniform Params {
    uint n; // 16-byte words to copy
} params;

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    for (uint i = gl_GlobalInvocationID.x; i < params.n; i += stride) {
        dst[i] = src[i];
    }
}
