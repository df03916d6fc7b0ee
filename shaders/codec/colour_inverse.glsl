// The decoder's last stage on the device: the reduced fixed-point 9/7's
// LL gain undone where asked (host stages::dwt `inverse_reduced`: f64
// multiply, rounded half away from zero), the inverse colour transform of
// the first three planes (host/src/codec/colour.rs `inverse`), the
// fractional bits rounded away, the level shift undone and the sample
// clamped to its range (`colour::shift_out`), and the result packed at the
// image's own width (1 or 2 bytes, two's complement when signed): the only
// plane-sized data the decoder downloads. The samples go plane after plane
// (the `Image` the decoder returns), or pixel by pixel (`Interleaved`,
// which the host copies out unchanged). One invocation per output word,
// so no two invocations write the same word. The includer defines GAIN
// (1: the f64 gain step is compiled in, which needs shaderFloat64; rows
// `colour_inverse` and `colour_inverse_gain` of host/build/variants.rs).
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 256) in;

#define FIRST_PLANE_BINDING 0
#define PLANE_QUALIFIER readonly
#include "codec/planes.glsl"
layout(set = 0, binding = 4) writeonly buffer Dst { uint dst[]; };

layout(push_constant) uniform Params {
    uint n;          // samples per plane
    uint comps;      // planes, 1..=4
    uint transform;  // COLOUR_*; applied to planes 0..2 when comps >= 3
    uint bytes;      // bytes per packed sample, 1 or 2
    uint depth;      // bit depth, 1..=16
    uint is_signed;
    uint fraction;   // fractional bits
    uint dst_words;  // words of Dst
    uint gain;       // 1: multiply by `scale` first (GAIN variant only)
    uint scale_lo;   // the f64 scale's bits
    uint scale_hi;
    uint interleaved; // 1: sample g is component g % comps of pixel g / comps
} p;

int load(uint c, uint i) {
    int v;
    switch (c) {
    case 0u: v = p0[i]; break;
    case 1u: v = p1[i]; break;
    case 2u: v = p2[i]; break;
    default: v = p3[i]; break;
    }
#if GAIN
    if (p.gain != 0u) {
        // (v as f64 * scale).round() as i32; |scale| < 1, so no saturation.
        // `precise`: one correctly rounded multiply, never fused with what
        // follows, as on the host.
        precise double x = double(v) * packDouble2x32(uvec2(p.scale_lo, p.scale_hi));
        precise double a = abs(x);
        precise double t = trunc(a);
        if (a - t >= 0.5lf) {
            t += 1.0lf;
        }
        v = x < 0.0lf ? -int(t) : int(t);
    }
#endif
    return v;
}

// Sample c of position i after the inverse colour transform.
int64_t colour_at(uint c, uint i) {
    if (c < 3u && p.comps >= 3u && p.transform != COLOUR_NONE) {
        int y = load(0u, i), cb = load(1u, i), cr = load(2u, i);
        if (p.transform == COLOUR_RCT) {
            int g = y - ((cb + cr) >> 2);
            return int64_t(c == 0u ? cr + g : (c == 1u ? g : cb + g));
        }
        int64_t yv = int64_t(y), cbv = int64_t(cb), crv = int64_t(cr);
        int64_t v;
        if (c == 0u) {
            v = yv + ((ICT_CR_R * crv + HALF_Q14) >> 14);
        } else if (c == 1u) {
            v = yv + ((-ICT_CB_G * cbv - ICT_CR_G * crv + HALF_Q14) >> 14);
        } else {
            v = yv + ((ICT_CB_B * cbv + HALF_Q14) >> 14);
        }
        return int64_t(saturate_i32(v));
    }
    return int64_t(load(c, i));
}

// colour::shift_out of one sample.
uint sample_out(uint c, uint i) {
    int64_t half_v = p.fraction == 0u ? 0l : (1l << (p.fraction - 1u));
    int64_t offset = p.is_signed != 0u ? 0l : (1l << (p.depth - 1u));
    int64_t lo = p.is_signed != 0u ? -(1l << (p.depth - 1u)) : 0l;
    int64_t hi = p.is_signed != 0u ? (1l << (p.depth - 1u)) - 1l : (1l << p.depth) - 1l;
    int64_t x = ((colour_at(c, i) + half_v) >> p.fraction) + offset;
    return uint(int(clamp(x, lo, hi)));
}

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint per = 4u / p.bytes;
    uint bits = p.bytes * 8u;
    uint mask = p.bytes == 1u ? 0xffu : 0xffffu;
    // The host checks comps * n * bytes < 2^32.
    uint total = p.comps * p.n;
    for (uint k = gl_GlobalInvocationID.x; k < p.dst_words; k += stride) {
        uint word = 0u;
        for (uint j = 0u; j < per; j++) {
            uint g = k * per + j;
            if (g < total) {
                uint c = p.interleaved != 0u ? g % p.comps : g / p.n;
                uint i = p.interleaved != 0u ? g / p.comps : g - c * p.n;
                word |= (sample_out(c, i) & mask) << (j * bits);
            }
        }
        dst[k] = word;
    }
}
