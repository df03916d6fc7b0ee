#version 450
// Keeps the device busy for a set number of iterations: the clock warm-up
// that benchmarks record ahead of every timed submission
// (Gpu::set_clock_warm_up). An idle GPU drops its clocks within a fraction
// of a second and needs a similar time under load to raise them again, so
// without it a kernel timed after a pause of the host (downloading and
// checking a result, say) runs at a fraction of its speed.
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) writeonly buffer Sink { uint sink[]; };

layout(push_constant) uniform Params {
    uint iterations;
} p;

void main() {
    uint x = gl_GlobalInvocationID.x;
    for (uint i = 0u; i < p.iterations; i++) {
        x = x * 1664525u + 1013904223u;
        x ^= x >> 13;
    }
    // Depends on the whole loop, so it cannot be compiled away; true for
    // (almost) no invocation, so it writes (almost) nothing.
    if (x == 0x2545F491u && sink.length() > 0) {
        sink[0] = x;
    }
}
