// One 2-D DWT level of every slice of a region, block by block: the GPU
// twin of wavelane_core::dwt::block::{forward_level_blocked,
// inverse_level_blocked} with geometry BlockGeometry::for_subgroup
// (PAIRS_PER_LANE = 2, SHADER_PAIR_ROWS = 8).
//
// A subgroup owns a block of 2 * gl_SubgroupSize sample pairs by 8 pair
// rows, halo included. Lane j keeps columns 4j..4j+3 of all 16 rows in
// registers: vertical lifting is register arithmetic, horizontal lifting
// takes one neighbour value per step from lane j-1 or j+1 by subgroup
// shuffle (the block edges mirror like the core model). Only the interior
// (without HALO pairs each side) is stored. Subgroups walk the blocks of all
// slices in a grid-stride loop, so any subgroup size >= 4 and any dispatch
// size give the same result.
//
// The includer defines WAVELET and INVERSE (0 or 1).
//
// Forward: A = source region, B = coefficient output (Mallat positions),
//   C = compact LL output (the next level's source). The LL part goes to C
//   for slices < ll_slices unless FLAG_LL_IN_MAIN (last level: LL to B).
// Inverse: A = coefficients (Mallat positions), B = compact LL input (the
//   previous level's reconstruction), C = reconstructed region. The LL part
//   comes from B for slices < ll_slices unless FLAG_LL_IN_MAIN (coarsest
//   level: LL from A).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_EXT_control_flow_attributes : require
#include "common/dwt_lift.glsl"

// wavelane_core::dwt::block::SHADER_PAIR_ROWS (8: 16 spilled registers on NVIDIA).
#define PAIR_ROWS 8
#define ROWS (2 * PAIR_ROWS)
#define FLAG_X 1u
#define FLAG_Y 2u
// Forward: the LL part goes to B (last level). Inverse: the LL part comes
// from A (coarsest level).
#define FLAG_LL_IN_MAIN 4u

layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer BufA { T a_buf[]; };
#if INVERSE
layout(set = 0, binding = 1) readonly buffer BufB { T b_buf[]; };
#else
layout(set = 0, binding = 1) writeonly buffer BufB { T b_buf[]; };
#endif
layout(set = 0, binding = 2) writeonly buffer BufC { T c_buf[]; };

layout(push_constant) uniform Params {
    uint width;      // region size
    uint height;
    uint slices;     // slices of the region (1 for a 2-D image)
    uint ll_slices;  // slices whose LL part is routed to/from the compact LL buffer
    uint flags;
    uint a_stride;
    uint a_slice;
    uint b_stride;
    uint b_slice;
    uint c_stride;
    uint c_slice;
} p;

T v[ROWS][4];

void vertical(bool inverse) {
#if HAS_SCALING
    if (inverse) {
        [[unroll]] for (int r = 0; r < ROWS; r++) {
            [[unroll]] for (int c = 0; c < 4; c++) {
                v[r][c] *= (r & 1) == 0 ? SCALE_K : SCALE_INV_K;
            }
        }
    }
#endif
    [[unroll]] for (int k = 0; k < NSTEPS; k++) {
        int s = inverse ? NSTEPS - 1 - k : k;
        [[unroll]] for (int r = (s & 1) == 0 ? 1 : 0; r < ROWS; r += 2) {
            int up = r == 0 ? 1 : r - 1;
            int down = r + 1 < ROWS ? r + 1 : r - 1;
            [[unroll]] for (int c = 0; c < 4; c++) {
                v[r][c] = inverse ? unlift(s, v[r][c], v[up][c], v[down][c])
                                  : lift(s, v[r][c], v[up][c], v[down][c]);
            }
        }
    }
#if HAS_SCALING
    if (!inverse) {
        [[unroll]] for (int r = 0; r < ROWS; r++) {
            [[unroll]] for (int c = 0; c < 4; c++) {
                v[r][c] *= (r & 1) == 0 ? SCALE_INV_K : SCALE_K;
            }
        }
    }
#endif
}

void horizontal(bool inverse) {
    uint lane = gl_SubgroupInvocationID;
    bool first = lane == 0u;
    bool last = lane == gl_SubgroupSize - 1u;
    [[unroll]] for (int r = 0; r < ROWS; r++) {
#if HAS_SCALING
        if (inverse) {
            v[r][0] *= SCALE_K; v[r][2] *= SCALE_K;
            v[r][1] *= SCALE_INV_K; v[r][3] *= SCALE_INV_K;
        }
#endif
        [[unroll]] for (int k = 0; k < NSTEPS; k++) {
            int s = inverse ? NSTEPS - 1 - k : k;
            if ((s & 1) == 0) {
                // Odd positions (columns 1, 3); the right neighbour of column
                // 3 is column 0 of the next lane, mirrored at the block edge.
                T right = subgroupShuffleDown(v[r][0], 1u);
                right = last ? v[r][2] : right;
                v[r][1] = inverse ? unlift(s, v[r][1], v[r][0], v[r][2]) : lift(s, v[r][1], v[r][0], v[r][2]);
                v[r][3] = inverse ? unlift(s, v[r][3], v[r][2], right) : lift(s, v[r][3], v[r][2], right);
            } else {
                T left = subgroupShuffleUp(v[r][3], 1u);
                left = first ? v[r][1] : left;
                v[r][0] = inverse ? unlift(s, v[r][0], left, v[r][1]) : lift(s, v[r][0], left, v[r][1]);
                v[r][2] = inverse ? unlift(s, v[r][2], v[r][1], v[r][3]) : lift(s, v[r][2], v[r][1], v[r][3]);
            }
        }
#if HAS_SCALING
        if (!inverse) {
            v[r][0] *= SCALE_INV_K; v[r][2] *= SCALE_INV_K;
            v[r][1] *= SCALE_K; v[r][3] *= SCALE_K;
        }
#endif
    }
}

void main() {
    uint sg_size = gl_SubgroupSize;
    uint lane = gl_SubgroupInvocationID;
    uint pairs_x = 2u * sg_size;
    if (pairs_x <= 2u * HALO) return;  // the host refuses such devices
    uint out_px = pairs_x - 2u * HALO;
    uint out_py = uint(PAIR_ROWS) - 2u * HALO;
    uint w = p.width;
    uint h = p.height;
    bool do_x = (p.flags & FLAG_X) != 0u;
    bool do_y = (p.flags & FLAG_Y) != 0u;
    bool ll_main = (p.flags & FLAG_LL_IN_MAIN) != 0u;
    uint nbx = ((w + 1u) / 2u + out_px - 1u) / out_px;
    uint nby = ((h + 1u) / 2u + out_py - 1u) / out_py;
    uint total = nbx * nby * p.slices;
    uint first_sg = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    uint stride_sg = gl_NumWorkGroups.x * gl_NumSubgroups;
    for (uint b = first_sg; b < total; b += stride_sg) {
        uint bx = b % nbx;
        uint by = (b / nbx) % nby;
        uint z = b / (nbx * nby);
        bool ll_sep = !ll_main && z < p.ll_slices;
        int x0 = int(bx * out_px) * 2 - 2 * HALO + int(4u * lane);
        int y0 = int(by * out_py) * 2 - 2 * HALO;
        uint cx[4];
        [[unroll]] for (int c = 0; c < 4; c++) cx[c] = dwt_mirror(x0 + c, w);

#if INVERSE
        [[unroll]] for (int r = 0; r < ROWS; r++) {
            uint y = dwt_mirror(y0 + r, h);
            uint row = dwt_mallat(y, h, do_y);
            bool low_y = !do_y || (y & 1u) == 0u;
            [[unroll]] for (int c = 0; c < 4; c++) {
                uint col = dwt_mallat(cx[c], w, do_x);
                bool low = low_y && (!do_x || (cx[c] & 1u) == 0u);
                v[r][c] = (low && ll_sep) ? b_buf[z * p.b_slice + row * p.b_stride + col]
                                          : a_buf[z * p.a_slice + row * p.a_stride + col];
            }
        }
        if (do_x) horizontal(true);
        if (do_y) vertical(true);
#else
        [[unroll]] for (int r = 0; r < ROWS; r++) {
            uint base = z * p.a_slice + dwt_mirror(y0 + r, h) * p.a_stride;
            [[unroll]] for (int c = 0; c < 4; c++) v[r][c] = a_buf[base + cx[c]];
        }
        if (do_y) vertical(false);
        if (do_x) horizontal(false);
#endif

        [[unroll]] for (int r = 2 * HALO; r < ROWS - 2 * HALO; r++) {
            int yi = y0 + r;
            if (yi >= int(h)) continue;
            uint y = uint(yi);
            [[unroll]] for (int c = 0; c < 4; c++) {
                uint pair = 2u * lane + uint(c >> 1);
                int xi = x0 + c;
                if (pair < HALO || pair >= pairs_x - HALO || xi >= int(w)) continue;
                uint x = uint(xi);
#if INVERSE
                c_buf[z * p.c_slice + y * p.c_stride + x] = v[r][c];
#else
                uint col = dwt_mallat(x, w, do_x);
                uint row = dwt_mallat(y, h, do_y);
                bool low = (!do_y || (y & 1u) == 0u) && (!do_x || (x & 1u) == 0u);
                if (low && ll_sep) {
                    c_buf[z * p.c_slice + row * p.c_stride + col] = v[r][c];
                } else {
                    b_buf[z * p.b_slice + row * p.b_stride + col] = v[r][c];
                }
#endif
            }
        }
    }
}
