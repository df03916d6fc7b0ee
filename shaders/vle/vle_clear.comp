#version 450
// Zeroes the first n words of a buffer (the VLE output, scan cells and
// control words must start at zero: block ends are ORed in, the scan counts adds).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer Data { uint data[]; };
layout(push_constant) uniform Params { uint n; } params;
void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    uint n = min(params.n, uint(data.length()));
    for (uint i = gl_GlobalInvocationID.x; i < n; i += stride) {
        data[i] = 0u;
    }
}
