// One 2-D DWT level of every slice of a region: the GPU twin of
// wavelane_core::dwt::block::{forward_level_blocked, inverse_level_blocked}.
// Horizontally a subgroup owns 2 * gl_SubgroupSize sample pairs, halo
// included: lane j keeps columns 4j..4j+3 in registers, horizontal lifting
// takes one neighbour value per step from lane j-1 or j+1 by subgroup
// shuffle (the block edges mirror like the core model), and only the
// interior (without HALO_X pairs each side) is stored. No shared memory, no
// barriers. Subgroups walk the blocks of all slices in a grid-stride loop,
// so any subgroup size >= 4 and any dispatch size give the same result.
//
// Forward (BlockGeometry::forward_strip): a block is a tall strip of
// p.strip_out_pairs output pair rows plus HALO pair rows above and below and
// HALO_X pairs left and right, streamed top to bottom through a sliding
// window of NSTEPS + 3 rows, with AHEAD pair rows of loads in flight. Each
// row leaves the window final after the vertical lifting steps, is lifted
// horizontally and stored to its Mallat position: every sample is read once
// (plus the halo) and written once. HALO_X is even, so lane j's 4 columns
// start on a multiple of 4: where the row strides allow, a lane loads them
// as one 16-byte vector and stores its L and H pairs as one 8-byte vector
// each (lanes at an image edge and odd strides take the scalar path).
//
// Inverse (BlockGeometry::for_subgroup): a block of PAIR_ROWS pair rows held
// whole in registers (lane j: 4 columns of all 16 rows), lifted horizontally
// then vertically; only the interior rows are stored. Where the strides
// allow, a lane loads its L and H pairs of a row as one 8-byte vector each
// and stores its 4 columns as one 16-byte vector.
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
#include "dwt/lift.glsl"

// wavelane_core::dwt::block::SHADER_PAIR_ROWS (inverse blocks; 16 spilled
// registers on NVIDIA).
#define PAIR_ROWS 8
#define ROWS (2 * PAIR_ROWS)
// Horizontal halo pairs of both block shapes: HALO rounded up to even
// (BlockGeometry::halo_x), so lane j's 4 columns start on a multiple of 4.
#define HALO_X (HALO + (HALO & 1))
#define FLAG_X 1u
#define FLAG_Y 2u
// Forward: the LL part goes to B (last level). Inverse: the LL part comes
// from A (coarsest level).
#define FLAG_LL_IN_MAIN 4u

layout(local_size_x = 64) in;

// The three buffers are always distinct (GpuDwt binds different ones):
// `restrict` lets the compiler move loads ahead of stores.
layout(set = 0, binding = 0) restrict readonly buffer BufA { T a_buf[]; };
#if INVERSE
layout(set = 0, binding = 1) restrict readonly buffer BufB { T b_buf[]; };
#else
layout(set = 0, binding = 1) restrict writeonly buffer BufB { T b_buf[]; };
#endif
layout(set = 0, binding = 2) restrict writeonly buffer BufC { T c_buf[]; };
// The same buffers seen as vectors: a lane's 4 interleaved columns are one
// T4, its 2 even (L) and 2 odd (H) columns one T2 each in Mallat order.
// Each element is accessed through one view only.
#if INVERSE
layout(set = 0, binding = 0) restrict readonly buffer BufA2 { T2 a2_buf[]; };
layout(set = 0, binding = 1) restrict readonly buffer BufB2 { T2 b2_buf[]; };
layout(set = 0, binding = 2) restrict writeonly buffer BufC4 { T4 c4_buf[]; };
#else
layout(set = 0, binding = 0) restrict readonly buffer BufA4 { T4 a4_buf[]; };
layout(set = 0, binding = 1) restrict writeonly buffer BufB2 { T2 b2_buf[]; };
layout(set = 0, binding = 2) restrict writeonly buffer BufC2 { T2 c2_buf[]; };
#endif

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
    uint strip_out_pairs;  // forward: output pair rows per strip (>= 1); inverse: unused
} p;

// Blocks (forward: strips) are numbered slice by slice, row by row; the
// subgroups of the dispatch walk them in a grid-stride loop from
// first_block() by block_stride(), so any dispatch size covers them all.
uint first_block() { return gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID; }
uint block_stride() { return gl_NumWorkGroups.x * gl_NumSubgroups; }

// Block b of a grid of nbx x nby blocks per slice: (column, row, slice).
uvec3 block_at(uint b, uint nbx, uint nby) {
    return uvec3(b % nbx, (b / nbx) % nby, b / (nbx * nby));
}

// Horizontal lifting of one row of the subgroup's 2 * gl_SubgroupSize pairs.
void horizontal(inout T row[4], bool inverse) {
    uint lane = gl_SubgroupInvocationID;
    bool first = lane == 0u;
    bool last = lane == gl_SubgroupSize - 1u;
#if HAS_SCALING
    if (inverse) {
        row[0] *= SCALE_K; row[2] *= SCALE_K;
        row[1] *= SCALE_INV_K; row[3] *= SCALE_INV_K;
    }
#endif
    [[unroll]] for (int k = 0; k < NSTEPS; k++) {
        int s = inverse ? NSTEPS - 1 - k : k;
        if ((s & 1) == 0) {
            // Odd positions (columns 1, 3); the right neighbour of column
            // 3 is column 0 of the next lane, mirrored at the block edge.
            T right = subgroupShuffleDown(row[0], 1u);
            right = last ? row[2] : right;
            row[1] = inverse ? unlift(s, row[1], row[0], row[2]) : lift(s, row[1], row[0], row[2]);
            row[3] = inverse ? unlift(s, row[3], row[2], right) : lift(s, row[3], row[2], right);
        } else {
            T left = subgroupShuffleUp(row[3], 1u);
            left = first ? row[1] : left;
            row[0] = inverse ? unlift(s, row[0], left, row[1]) : lift(s, row[0], left, row[1]);
            row[2] = inverse ? unlift(s, row[2], row[1], row[3]) : lift(s, row[2], row[1], row[3]);
        }
    }
#if HAS_SCALING
    if (!inverse) {
        row[0] *= SCALE_INV_K; row[2] *= SCALE_INV_K;
        row[1] *= SCALE_K; row[3] *= SCALE_K;
    }
#endif
}

#if INVERSE
T v[ROWS][4];

void vertical_inverse() {
#if HAS_SCALING
    [[unroll]] for (int r = 0; r < ROWS; r++) {
        [[unroll]] for (int c = 0; c < 4; c++) {
            v[r][c] *= (r & 1) == 0 ? SCALE_K : SCALE_INV_K;
        }
    }
#endif
    [[unroll]] for (int k = 0; k < NSTEPS; k++) {
        int s = NSTEPS - 1 - k;
        [[unroll]] for (int r = (s & 1) == 0 ? 1 : 0; r < ROWS; r += 2) {
            int up = r == 0 ? 1 : r - 1;
            int down = r + 1 < ROWS ? r + 1 : r - 1;
            [[unroll]] for (int c = 0; c < 4; c++) {
                v[r][c] = unlift(s, v[r][c], v[up][c], v[down][c]);
            }
        }
    }
}

void main() {
    uint sg_size = gl_SubgroupSize;
    uint lane = gl_SubgroupInvocationID;
    uint pairs_x = 2u * sg_size;
    if (pairs_x <= 2u * HALO_X) return;  // the host refuses such devices
    uint out_px = pairs_x - 2u * HALO_X;
    uint out_py = uint(PAIR_ROWS) - 2u * HALO;
    uint w = p.width;
    uint h = p.height;
    bool do_x = (p.flags & FLAG_X) != 0u;
    bool do_y = (p.flags & FLAG_Y) != 0u;
    bool ll_main = (p.flags & FLAG_LL_IN_MAIN) != 0u;
    // Vector loads need the Mallat L and H column origins and every input
    // row start even; vector stores need every output row start on a
    // multiple of 4 samples.
    uint b_parity = ll_main ? 0u : (p.b_stride | p.b_slice);
    bool vec_cols = do_x && ((p.a_stride | p.a_slice | b_parity | ((w + 1u) >> 1)) & 1u) == 0u;
    bool vec_rows = ((p.c_stride | p.c_slice) & 3u) == 0u;
    uint nbx = ((w + 1u) / 2u + out_px - 1u) / out_px;
    uint nby = ((h + 1u) / 2u + out_py - 1u) / out_py;
    uint total = nbx * nby * p.slices;
    for (uint b = first_block(); b < total; b += block_stride()) {
        uvec3 at = block_at(b, nbx, nby);
        uint z = at.z;
        bool ll_sep = !ll_main && z < p.ll_slices;
        int x0 = int(at.x * out_px) * 2 - 2 * HALO_X + int(4u * lane);
        int y0 = int(at.y * out_py) * 2 - 2 * HALO;
        uint cx[4];
        [[unroll]] for (int c = 0; c < 4; c++) cx[c] = dwt_mirror(x0 + c, w);
        bool inside = x0 >= 0 && x0 + 3 < int(w);
        bool vec_load = vec_cols && inside;
        // HALO_X is even, so a lane's two pairs are both halo or both not.
        bool store_lane = 2u * lane >= HALO_X && 2u * lane < pairs_x - HALO_X;
        bool vec_store = vec_rows && inside && store_lane;

        [[unroll]] for (int r = 0; r < ROWS; r++) {
            uint y = dwt_mirror(y0 + r, h);
            uint row = dwt_mallat(y, h, do_y);
            bool low_y = !do_y || (y & 1u) == 0u;
            uint a_base = z * p.a_slice + row * p.a_stride;
            uint b_base = z * p.b_slice + row * p.b_stride;
            if (vec_load) {
                // x0 is even: L columns x0 / 2 + (0, 1), H columns
                // ceil(w / 2) + x0 / 2 + (0, 1).
                uint l_col = uint(x0) >> 1;
                T2 l;
                // A branch, not a select: B is not sized for this level
                // unless ll_sep.
                if (low_y && ll_sep) {
                    l = b2_buf[(b_base + l_col) >> 1];
                } else {
                    l = a2_buf[(a_base + l_col) >> 1];
                }
                T2 hi = a2_buf[(a_base + ((w + 1u) >> 1) + l_col) >> 1];
                v[r] = T[4](l.x, hi.x, l.y, hi.y);
            } else {
                [[unroll]] for (int c = 0; c < 4; c++) {
                    uint col = dwt_mallat(cx[c], w, do_x);
                    bool low = low_y && (!do_x || (cx[c] & 1u) == 0u);
                    if (low && ll_sep) {
                        v[r][c] = b_buf[b_base + col];
                    } else {
                        v[r][c] = a_buf[a_base + col];
                    }
                }
            }
        }
        if (do_x) {
            [[unroll]] for (int r = 0; r < ROWS; r++) horizontal(v[r], true);
        }
        if (do_y) vertical_inverse();

        [[unroll]] for (int r = 2 * HALO; r < ROWS - 2 * HALO; r++) {
            int yi = y0 + r;
            if (yi >= int(h)) continue;
            uint c_base = z * p.c_slice + uint(yi) * p.c_stride;
            if (vec_store) {
                c4_buf[(c_base + uint(x0)) >> 2] = T4(v[r][0], v[r][1], v[r][2], v[r][3]);
            } else {
                [[unroll]] for (int c = 0; c < 4; c++) {
                    int xi = x0 + c;
                    if (!store_lane || xi >= int(w)) continue;
                    c_buf[c_base + uint(xi)] = v[r][c];
                }
            }
        }
    }
}

#else
// Sliding window of the forward stream: at pair step k it holds strip rows
// 2k - NSTEPS - 1 .. 2k + 1. Lifting step s updates row 2k - 1 - s (window
// index WIN - 3 - s), whose neighbours went through step s - 1 already, so
// rows 2k - NSTEPS and 2k - NSTEPS + 1 (indices 1 and 2) are final.
#define WIN (NSTEPS + 3)
// Pair rows loaded ahead of the one being lifted. Deeper load-ahead costs
// registers, hence resident subgroups: on an H200 the 5/3 and float 9/7
// forwards ran fastest loading 1 pair row ahead (docs/history/dwt.md);
// more subgroups in flight beat more loads per subgroup. The fixed-point
// 9/7 ran the same with 2 and 1 and keeps 2.
#if WAVELET == 971
#define AHEAD 2
#else
#define AHEAD 1
#endif
T win[WIN][4];
T ahead[2 * AHEAD][4];

// The lane's 4 columns at vector index `at4` of the source (one 16-byte load).
T[4] load4(uint at4) {
    T4 q = a4_buf[at4];
    return T[4](q.x, q.y, q.z, q.w);
}

// A finished row's 4 columns as its L pair (columns 0, 2) and H pair (1, 3):
// the L pair at vector index c2_l of C when `to_c` (the LL band of a level
// that routes it there), else at b2_l of B; the H pair at b2_h of B.
void store_pairs(T row[4], bool to_c, uint c2_l, uint b2_l, uint b2_h) {
    T2 l = T2(row[0], row[2]);
    if (to_c) {
        c2_buf[c2_l] = l;
    } else {
        b2_buf[b2_l] = l;
    }
    b2_buf[b2_h] = T2(row[1], row[3]);
}

// Row yi (mirrored) of slice z into ahead[slot]; `vec`: the lane's columns
// are x0..x0 + 3, inside the image, and start 16-byte aligned.
void load_row(int slot, int yi, uint z, uint cx[4], bool vec) {
    uint base = z * p.a_slice + dwt_mirror(yi, p.height) * p.a_stride;
    if (vec) {
        ahead[slot] = load4((base + cx[0]) >> 2);
    } else {
        [[unroll]] for (int c = 0; c < 4; c++) ahead[slot][c] = a_buf[base + cx[c]];
    }
}

// Strips inside the image take stream_inside, the rest the window below;
// both give the same coefficients, the lean stream faster on every wavelet
// (docs/history/dwt.md). Inside strips of odd strip rows walk up:
// vertically adjacent strips share their halo rows, and strips of
// neighbouring strip rows run side by side (they are numbered row by row).
// Both walking down, the lower strip would read the shared rows first and
// the upper one a whole strip later, by when the L2 has dropped most of
// them; walking in alternate directions, two strips that share rows both
// read them at their start or both at their end, a few steps apart.
//
// Whether the lean stream leaves out the load of the strip's last odd row,
// which it never lifts: one row in 22 fewer for the 5/3 and the float 9/7
// (the strip below reads that row anyway); the fixed-point 9/7 ran slower
// with the load made conditional, so it keeps the load (docs/history/dwt.md).
#if WAVELET == 971
#define LEAN_SKIP_LAST_ODD 0
#else
#define LEAN_SKIP_LAST_ODD 1
#endif

// The forward stream of a strip whose rows and columns all lie inside the
// image, with vector loads and stores for every lane (nearly every strip of
// a large level): the same coefficients as the window below, with the state
// the lifting needs in named registers and the addresses advanced per step,
// so a step has no mirroring, no scalar fallback and no window rotation
// (docs/dwt.md; docs/history/dwt.md).
//
// Pair step k has strip pair rows k - 1 (e, o: raw) and k (ne, no: raw,
// loaded one step ahead) and lifts step s on row 2k - 1 - s (t[s]): step 0
// predicts odd row 2k - 1 from the raw even rows around it, step 1 updates
// even row 2k - 2, and step s >= 2 lifts row 2k - 1 - s (prev[s - 2], step
// s - 2's result of the previous pair step) from step s - 1's rows above
// (prev[s - 1]) and below (t[s - 1]); so after pair step k the rows of pair
// k - NSTEPS / 2 are final: even t[NSTEPS - 1], odd t[NSTEPS - 2]. prev
// starts at zero where the window mirrors at the strip's first row: those
// values reach only the top halo's rows, which are never stored.
//
// `up` walks the strip from its last loaded row (even: the last odd row is
// never loaded) to its first. The lifting steps are symmetric in their two
// neighbours and the walk keeps even rows even, so the same pair steps on
// the mirrored row order compute the same values; a pair step then finishes
// an even row and the odd row below it came out final in the previous step
// (odd_before), and the zero start reaches only bottom-halo rows.
//   a_at: the lane's first sample of strip row 0 (a multiple of 4);
//   b_even / b_odd / c_even: the Mallat row starts of the first stored pair.
void stream_inside(uint a_at, uint steps, uint b_even, uint b_odd, uint c_even,
                   uint col_l, uint col_h, bool ll_sep, bool store_lane, bool up) {
    // Vector indices: a_at, strides and Mallat offsets are multiples of 4
    // (loads) and 2 (stores) here. Walking up, the stream starts at the
    // strip's last loaded row and every index moves the other way (uint
    // arithmetic wraps, so a negative step is its two's complement).
    uint a4_row = p.a_stride >> 2;
    uint b2_row = p.b_stride >> 1;
    uint c2_row = p.c_stride >> 1;
    uint a4_odd = up ? 0u - a4_row : a4_row;
    uint a4_next = 2u * a4_odd;
    uint b2_next = up ? 0u - b2_row : b2_row;
    uint c2_next = up ? 0u - c2_row : c2_row;
    uint last_row = steps - 1u - uint(2 * HALO);  // the strip's last output pair row
    uint a4 = (a_at >> 2) + (up ? (2u * steps - 2u) * a4_row : 0u);
    uint l2 = col_l >> 1;
    uint h2 = col_h >> 1;
    uint be = (b_even >> 1) + (up ? last_row * b2_row : 0u);
    uint bo = (b_odd >> 1) + (up ? last_row * b2_row : 0u);
    uint ce = (c_even >> 1) + (up ? last_row * c2_row : 0u);
    T e[4] = load4(a4);
    T o[4] = load4(a4 + a4_odd);
    a4 += a4_next;
    T ne[4] = load4(a4);
    T no[4] = load4(a4 + a4_odd);
    T prev[NSTEPS - 1][4];
    [[unroll]] for (int s = 0; s < NSTEPS - 1; s++) prev[s] = T[4](T(0), T(0), T(0), T(0));
    for (uint k = 1u; k < steps; k++) {
        // Walking up, the odd row of the pair whose even row comes out
        // final in this step came out in the previous one.
        T odd_before[4] = prev[NSTEPS - 2];
        T t[NSTEPS][4];
        [[unroll]] for (int c = 0; c < 4; c++) {
            t[0][c] = lift(0, o[c], e[c], ne[c]);
            t[1][c] = lift(1, e[c], prev[0][c], t[0][c]);
            [[unroll]] for (int s = 2; s < NSTEPS; s++) {
                t[s][c] = lift(s, prev[s - 2][c], prev[s - 1][c], t[s - 1][c]);
            }
            [[unroll]] for (int s = 0; s < NSTEPS - 1; s++) prev[s][c] = t[s][c];
        }
        e = ne;
        o = no;
        if (k + 1u < steps) {
            a4 += a4_next;
            ne = load4(a4);
#if LEAN_SKIP_LAST_ODD
            // The strip's last odd row is never lifted (its predict would
            // be the next pair step's), so it is not loaded.
            if (k + 2u < steps) {
                no = load4(a4 + a4_odd);
            }
#else
            // Walking up, that row would be the one above the strip (not
            // always in the image): load the even row again instead.
            no = load4(a4 + (up && k + 2u == steps ? 0u : a4_odd));
#endif
        }
        if (k >= uint(2 * HALO)) {
            T s[4] = t[NSTEPS - 1];
            T d[4];
            [[unroll]] for (int c = 0; c < 4; c++) d[c] = up ? odd_before[c] : t[NSTEPS - 2][c];
#if HAS_SCALING
            [[unroll]] for (int c = 0; c < 4; c++) {
                s[c] *= SCALE_INV_K;
                d[c] *= SCALE_K;
            }
#endif
            horizontal(s, false);
            horizontal(d, false);
            if (store_lane) {
                store_pairs(s, ll_sep, ce + l2, be + l2, be + h2);
                store_pairs(d, false, 0u, bo + l2, bo + h2);
            }
            be += b2_next;
            bo += b2_next;
            ce += c2_next;
        }
    }
}

// Whether the strip whose lane 0 starts at column strip_x0 and whose first
// loaded row is y0 lies inside the image (uniform over the subgroup), so
// that it takes stream_inside on a 2-D level with vector access.
bool strip_inside(int strip_x0, int y0, uint steps) {
    return strip_x0 >= 0 && strip_x0 + int(4u * gl_SubgroupSize) <= int(p.width) && y0 >= 0
        && uint(y0) + 2u * steps <= p.height;
}

void main() {
    uint sg_size = gl_SubgroupSize;
    uint lane = gl_SubgroupInvocationID;
    uint pairs_x = 2u * sg_size;
    if (pairs_x <= 2u * HALO_X) return;  // the host refuses such devices
    uint out_px = pairs_x - 2u * HALO_X;
    uint out_py = max(p.strip_out_pairs, 1u);
    uint w = p.width;
    uint h = p.height;
    bool do_x = (p.flags & FLAG_X) != 0u;
    bool do_y = (p.flags & FLAG_Y) != 0u;
    bool ll_main = (p.flags & FLAG_LL_IN_MAIN) != 0u;
    // Vector loads need every row start on a multiple of 4 samples; vector
    // stores need the Mallat L and H column origins and every output row
    // start even.
    bool vec_rows = ((p.a_stride | p.a_slice) & 3u) == 0u;
    uint c_parity = ll_main ? 0u : (p.c_stride | p.c_slice);
    bool vec_cols = do_x && ((p.b_stride | p.b_slice | c_parity | ((w + 1u) >> 1)) & 1u) == 0u;
    uint pairs_y = (h + 1u) / 2u;
    uint nbx = ((w + 1u) / 2u + out_px - 1u) / out_px;
    uint nby = (pairs_y + out_py - 1u) / out_py;
    uint total = nbx * nby * p.slices;
    // 2-D levels with vector access: their strips inside the image take the
    // lean stream.
    bool lean = do_y && vec_rows && vec_cols;
    for (uint b = first_block(); b < total; b += block_stride()) {
        uvec3 at = block_at(b, nbx, nby);
        uint z = at.z;
        bool ll_sep = !ll_main && z < p.ll_slices;
        int strip_x0 = int(at.x * out_px) * 2 - 2 * HALO_X;  // lane 0's first column
        int x0 = strip_x0 + int(4u * lane);
        uint out_y0 = at.y * out_py;  // first output pair row of the strip
        int y0 = int(out_y0) * 2 - 2 * HALO;  // first strip row (top halo)
        // Pair step k loads strip pair row k and completes output pair row
        // out_y0 + k - 2 * HALO; the stream stops after the strip's last
        // output row inside the image (the bottom halo is loaded, never
        // finished: its lifting would need rows beyond the strip).
        uint steps = min(out_py, pairs_y - out_y0) + 2u * HALO;
        // A strip inside the image takes the lean stream; decided before the
        // window's per-column state below exists. Odd strip rows walk up.
        if (lean && strip_inside(strip_x0, y0, steps)) {
            uint pair = 2u * lane;
            stream_inside(z * p.a_slice + uint(y0) * p.a_stride + uint(x0), steps,
                          z * p.b_slice + out_y0 * p.b_stride,
                          z * p.b_slice + (pairs_y + out_y0) * p.b_stride,
                          z * p.c_slice + out_y0 * p.c_stride,
                          uint(x0) >> 1, ((w + 1u) >> 1) + (uint(x0) >> 1), ll_sep,
                          pair >= HALO_X && pair < pairs_x - HALO_X,
                          (at.y & 1u) == 1u);
            continue;
        }
        uint cx[4];
        uint col[4];
        bool low_x[4];
        bool store_x[4];
        [[unroll]] for (int c = 0; c < 4; c++) {
            cx[c] = dwt_mirror(x0 + c, w);
            uint pair = 2u * lane + uint(c >> 1);
            store_x[c] = pair >= HALO_X && pair < pairs_x - HALO_X && x0 + c < int(w);
            // x0 + c >= 0 wherever store_x holds.
            col[c] = dwt_mallat(uint(x0 + c), w, do_x);
            low_x[c] = !do_x || ((x0 + c) & 1) == 0;
        }
        bool inside = x0 >= 0 && x0 + 3 < int(w);
        bool vec_load = vec_rows && inside;
        // store_x[0] covers the whole lane: HALO_X is even, so a lane's two
        // pairs are both halo or both not.
        bool vec_store = vec_cols && inside && store_x[0];
        [[unroll]] for (int r = 0; r < WIN; r++) {
            [[unroll]] for (int c = 0; c < 4; c++) win[r][c] = T(0);
        }
        [[unroll]] for (int a = 0; a < AHEAD; a++) {
            if (uint(a) < steps) {
                load_row(2 * a, y0 + 2 * a, z, cx, vec_load);
                load_row(2 * a + 1, y0 + 2 * a + 1, z, cx, vec_load);
            }
        }
        // AHEAD steps per iteration, so that pair row k always lives in
        // slots 2 (k % AHEAD) and 2 (k % AHEAD) + 1: a loaded register is
        // never copied before its first use (a copy would wait for the load).
        for (uint k0 = 0u; k0 < steps; k0 += uint(AHEAD)) {
            [[unroll]] for (int a = 0; a < AHEAD; a++) {
                uint k = k0 + uint(a);
                if (k < steps) {
                    [[unroll]] for (int r = 0; r < WIN - 2; r++) win[r] = win[r + 2];
                    win[WIN - 2] = ahead[2 * a];
                    win[WIN - 1] = ahead[2 * a + 1];
                    if (k + uint(AHEAD) < steps) {
                        int ya = y0 + 2 * int(k) + 2 * AHEAD;
                        load_row(2 * a, ya, z, cx, vec_load);
                        // The strip's last odd row is neither lifted nor
                        // stored (a bottom halo row), so it is not loaded.
                        if (k + uint(AHEAD) + 1u < steps) {
                            load_row(2 * a + 1, ya + 1, z, cx, vec_load);
                        }
                    }
                    if (do_y) {
                        [[unroll]] for (int s = 0; s < NSTEPS; s++) {
                            // Row 2k - 1 - s of the strip; rows above the
                            // strip do not exist, and the strip's first row
                            // mirrors (row -1 is row 1) like the core
                            // model's block edge.
                            int r = 2 * int(k) - 1 - s;
                            if (r >= 0) {
                                const int i = WIN - 3 - s;
                                [[unroll]] for (int c = 0; c < 4; c++) {
                                    T up = r == 0 ? win[i + 1][c] : win[i - 1][c];
                                    win[i][c] = lift(s, win[i][c], up, win[i + 1][c]);
                                }
                            }
                        }
                    }
                    if (k >= uint(2 * HALO)) {
                        uint y_even = 2u * (out_y0 + k - uint(2 * HALO));
                        [[unroll]] for (int r = 0; r < 2; r++) {
                            T row[4] = win[1 + r];
#if HAS_SCALING
                            // Scale the copy: the window's odd row is still
                            // the upper neighbour of the next even row's
                            // last step.
                            if (do_y) {
                                [[unroll]] for (int c = 0; c < 4; c++) row[c] *= r == 0 ? SCALE_INV_K : SCALE_K;
                            }
#endif
                            if (do_x) horizontal(row, false);
                            uint y = y_even + uint(r);
                            if (y < h) {
                                uint out_row = dwt_mallat(y, h, do_y);
                                bool low_y = !do_y || r == 0;
                                uint b_base = z * p.b_slice + out_row * p.b_stride;
                                uint c_base = z * p.c_slice + out_row * p.c_stride;
                                if (vec_store) {
                                    // col[0], col[0] + 1: L; col[1], col[1] + 1: H.
                                    store_pairs(row, low_y && ll_sep, (c_base + col[0]) >> 1,
                                                (b_base + col[0]) >> 1, (b_base + col[1]) >> 1);
                                } else {
                                    [[unroll]] for (int c = 0; c < 4; c++) {
                                        if (!store_x[c]) continue;
                                        if (low_y && low_x[c] && ll_sep) {
                                            c_buf[c_base + col[c]] = row[c];
                                        } else {
                                            b_buf[b_base + col[c]] = row[c];
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
#endif
