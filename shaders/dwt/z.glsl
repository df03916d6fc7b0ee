// The Z pass of a 3-D DWT level: lines along Z, one invocation per (x, y)
// column and block of 16 pair rows along Z (halo included), lifted in
// registers; no communication between invocations. Forward reads natural
// order from A and writes Z-Mallat order (low slices, then high) to C;
// inverse reads Z-Mallat order and writes natural order. Mirrors
// wavelane_core::dwt::volume (the Z lines of each row).
//
// The includer defines WAVELET and INVERSE.
#extension GL_EXT_control_flow_attributes : require
#include "dwt/lift.glsl"

#define PAIR_ROWS 16
#define ROWS (2 * PAIR_ROWS)

layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer BufA { T a_buf[]; };
layout(set = 0, binding = 1) writeonly buffer BufC { T c_buf[]; };

layout(push_constant) uniform Params {
    uint width;
    uint height;
    uint depth;
    uint a_stride;
    uint a_slice;
    uint c_stride;
    uint c_slice;
} p;

void main() {
    uint out_pz = uint(PAIR_ROWS) - 2u * HALO;
    uint w = p.width;
    uint h = p.height;
    uint d = p.depth;
    uint nbz = ((d + 1u) / 2u + out_pz - 1u) / out_pz;
    uint total = w * h * nbz;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    T v[ROWS];
    for (uint item = gl_GlobalInvocationID.x; item < total; item += stride) {
        uint x = item % w;
        uint y = (item / w) % h;
        uint bz = item / (w * h);
        int z0 = int(bz * out_pz) * 2 - 2 * HALO;
        uint col = y * p.a_stride + x;
        [[unroll]] for (int r = 0; r < ROWS; r++) {
            uint z = dwt_mirror(z0 + r, d);
#if INVERSE
            v[r] = a_buf[dwt_mallat(z, d, true) * p.a_slice + col];
#else
            v[r] = a_buf[z * p.a_slice + col];
#endif
        }
#if INVERSE
#if HAS_SCALING
        [[unroll]] for (int r = 0; r < ROWS; r++) v[r] *= (r & 1) == 0 ? SCALE_K : SCALE_INV_K;
#endif
        [[unroll]] for (int s = NSTEPS - 1; s >= 0; s--) {
            [[unroll]] for (int r = (s & 1) == 0 ? 1 : 0; r < ROWS; r += 2) {
                v[r] = unlift(s, v[r], v[r == 0 ? 1 : r - 1], v[r + 1 < ROWS ? r + 1 : r - 1]);
            }
        }
#else
        [[unroll]] for (int s = 0; s < NSTEPS; s++) {
            [[unroll]] for (int r = (s & 1) == 0 ? 1 : 0; r < ROWS; r += 2) {
                v[r] = lift(s, v[r], v[r == 0 ? 1 : r - 1], v[r + 1 < ROWS ? r + 1 : r - 1]);
            }
        }
#if HAS_SCALING
        [[unroll]] for (int r = 0; r < ROWS; r++) v[r] *= (r & 1) == 0 ? SCALE_INV_K : SCALE_K;
#endif
#endif
        uint ocol = y * p.c_stride + x;
        [[unroll]] for (int r = 2 * HALO; r < ROWS - 2 * HALO; r++) {
            int zi = z0 + r;
            if (zi >= int(d)) continue;
#if INVERSE
            c_buf[uint(zi) * p.c_slice + ocol] = v[r];
#else
            c_buf[dwt_mallat(uint(zi), d, true) * p.c_slice + ocol] = v[r];
#endif
        }
    }
}
