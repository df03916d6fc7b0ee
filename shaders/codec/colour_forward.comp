#version 450
// The encoder's first stage on the device: every sample, uploaded at its
// own width (1 or 2 bytes; plane after plane, or interleaved pixel by
// pixel as image files hold them), level-shifted with the header's fractional
// bits (host/src/codec/colour.rs `level_shift`), then the first three
// planes colour-transformed (`colour::forward`: the RCT in wrapping i32
// arithmetic, the Q14 ICT in i64, saturated), into one i32 plane per
// component: the DWT's input. One invocation per sample position, all
// components at once (the colour transform needs all three), grid-stride.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;

layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
#define FIRST_PLANE_BINDING 1
#define PLANE_QUALIFIER writeonly
#include "codec/planes.glsl"

layout(push_constant) uniform Params {
    uint n;          // samples per plane
    uint comps;      // planes, 1..=4
    uint transform;  // COLOUR_*; applied to planes 0..2 when comps >= 3
    uint bytes;      // bytes per packed sample, 1 or 2
    uint depth;      // bit depth, 1..=16
    uint is_signed;  // samples are signed (two's complement in `bytes`)
    uint fraction;   // fractional bits
    uint src_words;  // words of Src (every read is bounded by it)
    uint interleaved; // 1: pixel by pixel (`Interleaved`), else plane after plane
} p;

int sample_at(uint c, uint i) {
    // The host checks comps * n * bytes < 2^32.
    uint b = (p.interleaved != 0u ? i * p.comps + c : c * p.n + i) * p.bytes;
    uint w = b >> 2;
    uint word = w < p.src_words ? src[w] : 0u;
    int bits = int(p.bytes * 8u);
    int v = p.is_signed != 0u
        ? bitfieldExtract(int(word), int((b & 3u) * 8u), bits)
        : int(bitfieldExtract(word, int((b & 3u) * 8u), bits));
    // colour::level_shift
    int offset = p.is_signed != 0u ? 0 : (1 << (p.depth - 1u));
    return (v - offset) << p.fraction;
}

void store(uint c, uint i, int v) {
    switch (c) {
    case 0u: p0[i] = v; break;
    case 1u: p1[i] = v; break;
    case 2u: p2[i] = v; break;
    default: p3[i] = v; break;
    }
}

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    bool colour = p.comps >= 3u && p.transform != COLOUR_NONE;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint first = 0u;
        if (colour) {
            int r = sample_at(0u, i), g = sample_at(1u, i), b = sample_at(2u, i);
            if (p.transform == COLOUR_RCT) {
                p0[i] = (r + g * 2 + b) >> 2;
                p1[i] = b - g;
                p2[i] = r - g;
            } else {
                int64_t x0 = int64_t(r), x1 = int64_t(g), x2 = int64_t(b);
                for (uint row = 0u; row < 3u; row++) {
                    int64_t s = ICT_FORWARD[row * 3u] * x0 + ICT_FORWARD[row * 3u + 1u] * x1
                        + ICT_FORWARD[row * 3u + 2u] * x2 + HALF_Q14;
                    store(row, i, saturate_i32(s >> 14));
                }
            }
            first = 3u;
        }
        for (uint c = first; c < p.comps; c++) {
            store(c, i, sample_at(c, i));
        }
    }
}
