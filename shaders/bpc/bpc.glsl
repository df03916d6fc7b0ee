// BPC-PaCo shared by bpc_encode and bpc_decode: the team of 32
// lanes that codes one codeblock, its state maps, context formation and the
// probability lookup. Mirrors wavelane_core::bpc (state.rs, context.rs,
// coder.rs reserve_slots, encode/lanes.rs / decode/lanes.rs).
//
// One workgroup of 32 invocations is one codeblock; invocation `lane` owns
// columns 2*lane and 2*lane+1. Lanes are numbered like the scan shader's
// positions, (gl_SubgroupID, gl_SubgroupInvocationID), so that subgroup
// ballots are in lane order. Team-wide lane masks come from bpc_team_ballot:
// one subgroupBallot when the subgroup holds the whole team (32 lanes or
// more), else one ballot per subgroup combined through shared memory (4, 8
// or 16 lanes on lavapipe). Either way every lane gets the same mask, so
// decisions taken on masks are uniform and the barriers below are legal.
//
// Requires GL_KHR_shader_subgroup_basic and _ballot, local_size_x = 32;
// main calls bpc_team_init() first. No loop runs per step (see
// bpc_team_ballot on lavapipe's loop budget). Passes walk rows through the
// register window below.
// Define BPC_WITH_TABLES (and declare a `bpc_tables` uint buffer) for the
// probability-table loader.
//
// Which maps a build keeps (the includer defines):
// - decoder (nothing defined): significance, refinement, sign and, in 3
//   passes, pending maps, all written back by the row window;
// - BPC_ENCODER: no refinement map and no sign write-back (below);
// - BPC_ENCODER + BPC_PLANE_MAPS (2 passes only): no significance or
//   pending map either; bpc/encode_planes.glsl builds two maps per
//   bitplane from the magnitudes and has its own row window.

#define BPC_LANES 32u
// Rows of the state maps: the includer's, at most 256 (the spec's limit).
// Shared memory is 4 x 8 bytes per row, and it bounds how many teams an
// SM holds, so codeblocks of at most 64 rows get their own shaders.
#ifndef BPC_MAX_ROWS
#define BPC_MAX_ROWS 256u
#endif
#define BPC_TABLE_BITPLANES 15u
// Per group and bitplane: sig[9], sign[4], ref, cp_sig[9], cp_sign[4].
#define BPC_ROW_LEN 27u
#define BPC_SIG 0u
#define BPC_SIGN 9u
#define BPC_REF 13u
#define BPC_CP_SIG 14u
#define BPC_CP_SIGN 23u
#define BPC_GROUP_LEN (BPC_TABLE_BITPLANES * BPC_ROW_LEN)
#define BPC_GROUPS 16u
#define BPC_MAX_BITPLANE 27u
#define BPC_EMPTY 0xFFu

#define BPC_SPP 0u
#define BPC_MRP 1u
#define BPC_CP 2u

// State maps as lane masks (see core state.rs): index 2*y + x, bit t is the
// coefficient at row y, column 2t + x.
//
// The encoder keeps no refinement map: a coefficient is refined in bitplane
// j exactly when it was significant before bitplane j, and since every
// coefficient codes its significance in every bitplane until it becomes
// significant (in the SPP or, in 3 passes, the CP), that is |v| >> (j + 1)
// != 0, which each lane computes from its own magnitude. Its sign map holds
// every negative coefficient from the start (loaded once per codeblock) and
// never changes, so the row window does not store it back either. The
// decoder learns both as it decodes and keeps both maps.
#ifdef BPC_PLANE_MAPS
#if !defined(BPC_ENCODER) || !defined(BPC_TWO_PASS)
#error "the plane maps are an encoder form for 2 passes per bitplane"
#endif
// Two more rows than the codeblock's tallest, kept zero below each
// codeblock (bpc/encode_planes.glsl), so that the row window reads
// rows y + 1 and y + 2 without a bound.
#define BPC_MAP_WORDS ((BPC_MAX_ROWS + 2u) * 2u)
// Significant before bitplane j, |v| >> (j + 1) != 0 (refined in its MRP).
shared uint bpc_above[BPC_MAP_WORDS];
// Bit j of |v|.
shared uint bpc_bits[BPC_MAP_WORDS];
#else
#define BPC_MAP_WORDS (BPC_MAX_ROWS * 2u)
shared uint bpc_sig[BPC_MAX_ROWS * 2u];
#ifndef BPC_ENCODER
shared uint bpc_refine[BPC_MAX_ROWS * 2u];
#endif
#ifndef BPC_TWO_PASS
shared uint bpc_pending[BPC_MAX_ROWS * 2u];
#endif
#endif
shared uint bpc_negative[BPC_MAP_WORDS];
// The probabilities of the current pass's bitplane (one row of the tables).
shared uint bpc_plane[BPC_ROW_LEN];
// Team ballots when a subgroup is narrower than the team: two accumulators
// used in turn (see bpc_team_ballot), and the private round counter (the
// same in every lane).
shared uint bpc_ballot_acc[2];
uint bpc_ballot_round = 0u;

uint bpc_lane() {
    return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
}

// Call once at the start of main, in uniform control flow.
void bpc_team_init() {
    if (bpc_lane() == 0u) {
        bpc_ballot_acc[0] = 0u;
        bpc_ballot_acc[1] = 0u;
    }
    barrier();
}

// The team-wide lane mask of `b`. Uniform control flow only (it may contain
// barriers).
//
// No loops: lavapipe (llvmpipe) gives each shader invocation a budget of
// 65535 loop iterations shared by all its loops and silently ends loops
// beyond it, so a per-ballot loop over the subgroups made long codeblocks
// stop coding part-way on lavapipe. Each subgroup ORs its part into the
// accumulator of this round; round r also clears the other accumulator for
// round r + 1 (its last readers, round r - 1, passed round r's first
// barrier).
uint bpc_team_ballot(bool b) {
    uvec4 v = subgroupBallot(b);
    if (gl_NumSubgroups == 1u) {
        return v.x;
    }
    uint part = v.x << (gl_SubgroupID * gl_SubgroupSize);
    uint cur = bpc_ballot_round & 1u;
    bpc_ballot_round++;
    barrier(); // every lane has read the previous round's mask
    if (bpc_lane() == 0u) {
        bpc_ballot_acc[cur ^ 1u] = 0u;
    }
    if (subgroupElect()) {
        atomicOr(bpc_ballot_acc[cur], part);
    }
    barrier();
    return bpc_ballot_acc[cur];
}

// Lanes that own a present coefficient in column parity x of a codeblock
// `width` wide (core state.rs present_lanes).
uint bpc_present(uint width, uint x) {
    uint lanes = (width + 1u - x) / 2u;
    return lanes >= 32u ? 0xFFFFFFFFu : ((1u << lanes) - 1u);
}

uint bpc_bit(uint mask, uint lane) {
    return (mask >> lane) & 1u;
}

// Left and right neighbour masks of parity-x coefficients (core context.rs).
uint bpc_left(uint even, uint odd, uint x) {
    return x == 0u ? (odd << 1) : even;
}
uint bpc_right(uint even, uint odd, uint x) {
    return x == 0u ? odd : (even >> 1);
}

// The row window. A pass walks the rows top to bottom with the state of
// rows y - 1 (suffix a), y (c) and y + 1 (b) in registers, team-uniform like
// the shared maps they mirror: a step then reads no shared memory and
// needs no barrier (before, every step read six map words and synchronised
// twice). Only the coded row changes during its steps; it is written back
// (by lane 0) when the walk moves on, and row y + 2 is read then, which
// nothing in this pass has written yet. Passes start after a barrier
// (bpc_load_plane), so they see the previous pass's write-backs. (The
// plane-map encoder moves the same registers with its own functions.)
uvec2 bpc_sig_a, bpc_sig_c, bpc_sig_b;
uvec2 bpc_neg_a, bpc_neg_c, bpc_neg_b;

#ifndef BPC_PLANE_MAPS
#ifndef BPC_ENCODER
uvec2 bpc_ref_c;  // refinement-visit map of row y
#endif
uvec2 bpc_pend_c; // pending (CP candidates) map of row y

// Row y of the significance and sign maps into slot b (zero below the codeblock).
void bpc_window_load_below(uint y, uint height) {
    bool inside = y < height;
    uint r = 2u * min(y, BPC_MAX_ROWS - 1u);
    bpc_sig_b = inside ? uvec2(bpc_sig[r], bpc_sig[r + 1u]) : uvec2(0u);
    bpc_neg_b = inside ? uvec2(bpc_negative[r], bpc_negative[r + 1u]) : uvec2(0u);
}

// Row y's refinement (decoder) and pending maps (zero below the codeblock).
void bpc_window_load_maps(uint y, uint height) {
    bool inside = y < height;
    uint r = 2u * min(y, BPC_MAX_ROWS - 1u);
#ifndef BPC_ENCODER
    bpc_ref_c = inside ? uvec2(bpc_refine[r], bpc_refine[r + 1u]) : uvec2(0u);
#endif
#ifdef BPC_TWO_PASS
    bpc_pend_c = uvec2(0u);
#else
    bpc_pend_c = inside ? uvec2(bpc_pending[r], bpc_pending[r + 1u]) : uvec2(0u);
#endif
}

// The window at row 0, at the start of a pass.
void bpc_window_start(uint height) {
    bpc_sig_a = uvec2(0u);
    bpc_neg_a = uvec2(0u);
    bpc_window_load_below(0u, height);
    bpc_sig_c = bpc_sig_b;
    bpc_neg_c = bpc_neg_b;
    bpc_window_load_maps(0u, height);
    bpc_window_load_below(1u, height);
}

// Writes row y back to the shared maps and moves the window to row y + 1.
// The encoder stores only the maps it changes: significance and pending.
void bpc_window_next(uint y, uint height, uint lane) {
    if (lane == 0u && y < BPC_MAX_ROWS) {
        uint r = 2u * y;
        bpc_sig[r] = bpc_sig_c.x;
        bpc_sig[r + 1u] = bpc_sig_c.y;
#ifndef BPC_ENCODER
        bpc_negative[r] = bpc_neg_c.x;
        bpc_negative[r + 1u] = bpc_neg_c.y;
        bpc_refine[r] = bpc_ref_c.x;
        bpc_refine[r + 1u] = bpc_ref_c.y;
#endif
#ifndef BPC_TWO_PASS
        bpc_pending[r] = bpc_pend_c.x;
        bpc_pending[r + 1u] = bpc_pend_c.y;
#endif
    }
    bpc_sig_a = bpc_sig_c;
    bpc_neg_a = bpc_neg_c;
    bpc_sig_c = bpc_sig_b;
    bpc_neg_c = bpc_neg_b;
    bpc_window_load_maps(y + 1u, height);
    bpc_window_load_below(y + 2u, height);
}
#endif // !BPC_PLANE_MAPS

// Significance context of `lane` in step (y, x) of the window: its
// significant neighbours (core context.rs).
uint bpc_sig_context(uint x, uint lane) {
    uvec2 a = bpc_sig_a, c = bpc_sig_c, b = bpc_sig_b;
    return bpc_bit(a[x], lane) + bpc_bit(b[x], lane)
        + bpc_bit(bpc_left(c.x, c.y, x), lane) + bpc_bit(bpc_right(c.x, c.y, x), lane)
        + bpc_bit(bpc_left(a.x, a.y, x), lane) + bpc_bit(bpc_right(a.x, a.y, x), lane)
        + bpc_bit(bpc_left(b.x, b.y, x), lane) + bpc_bit(bpc_right(b.x, b.y, x), lane);
}

// s(n) of one neighbour: 0 not significant, +1 positive, -1 negative.
int bpc_s(uint sig, uint neg, uint lane) {
    int s = int(bpc_bit(sig, lane));
    return bpc_bit(neg, lane) != 0u ? -s : s;
}

// Sign context of `lane` in step (y, x) of the window: k in bits 0-1,
// predicted negative in bit 2 (spec section 4, core context.rs SIGN_TABLE).
// Rows outside the codeblock are all zero, so they count as insignificant.
uint bpc_sign_context(uint x, uint lane) {
    uvec2 sc = bpc_sig_c, nc = bpc_neg_c;
    int h = bpc_s(bpc_left(sc.x, sc.y, x), bpc_left(nc.x, nc.y, x), lane)
          + bpc_s(bpc_right(sc.x, sc.y, x), bpc_right(nc.x, nc.y, x), lane);
    int w = bpc_s(bpc_sig_a[x], bpc_neg_a[x], lane) + bpc_s(bpc_sig_b[x], bpc_neg_b[x], lane);
    // (k, predicted negative) by i = (sign(h) + 1) * 3 + sign(w) + 1: the
    // 3-bit entries 4|3, 4|2, 4|0, 4|1, 0, 1, 0, 2, 3 packed at bit 3i (a
    // constant array indexed at run time becomes a per-invocation local
    // array that is filled on every call).
    uint i = uint((sign(h) + 1) * 3 + sign(w) + 1);
    return (0x3408B37u >> (3u * i)) & 7u;
}

// The same two contexts as team words, for the 2-pass plane-map encoder
// (bpc/encode_planes.glsl): word logic once for all 32 lanes, then
// each lane extracts four (significance) or three (sign) bits, instead of
// eight neighbour bits and a table lookup per lane. About a third fewer
// per-lane instructions per step on RADV's compiler; the 3-pass builds and
// the decoder keep the forms above (in the 3-pass encoder this raised
// NVIDIA's register count above 64, docs/history/bpc-paco.md).

// bpc_sig_context as bit-sliced sums of team words: per lane position the
// other parity's three rows (s + 2k), plus the same at the neighbouring
// position (lane t's other-parity neighbours are lanes t - 1 and t when
// x = 0, t and t + 1 when x = 1), plus the two vertical neighbours (e + 2f);
// the lane reads bits r0..r3 of its count.
uint bpc_sig_context_sliced(uint x, uint lane) {
    uint o = 1u - x;
    uint p0 = bpc_sig_a[o], p1 = bpc_sig_c[o], p2 = bpc_sig_b[o];
    uint s = p0 ^ p1 ^ p2;
    uint k = (p0 & p1) | (p0 & p2) | (p1 & p2);
    uint s1 = x == 0u ? s << 1 : s >> 1;
    uint k1 = x == 0u ? k << 1 : k >> 1;
    uint u0 = s ^ s1;
    uint c0 = s & s1;
    uint u1 = k ^ k1 ^ c0;
    uint u2 = (k & k1) | (k & c0) | (k1 & c0);
    uint va = bpc_sig_a[x], vb = bpc_sig_b[x];
    uint e = va ^ vb, f = va & vb;
    uint r0 = u0 ^ e;
    uint d0 = u0 & e;
    uint r1 = u1 ^ f ^ d0;
    uint d1 = (u1 & f) | (u1 & d0) | (f & d0);
    uint r2 = u2 ^ d1;
    uint r3 = u2 & d1;
    return bpc_bit(r0, lane) | bpc_bit(r1, lane) << 1 | bpc_bit(r2, lane) << 2 | bpc_bit(r3, lane) << 3;
}

// bpc_sign_context of every lane in step (y, x) as team words: x = bit 0 of
// k, y = bit 1 of k, z = the encoder's sign symbol (v < 0 differs from the
// predicted sign; needs the encoder's sign map, which holds every negative
// coefficient, significant or not). With two neighbours per direction,
// h > 0 exactly when one is positive and none negative (h < 0 and w
// alike), which turns SIGN_TABLE into word logic. Rows outside the
// codeblock are all zero, so they count as insignificant.
uvec3 bpc_sign_words(uint x) {
    uvec2 sc = bpc_sig_c, nc = bpc_neg_c;
    uint ls = bpc_left(sc.x, sc.y, x), rs = bpc_right(sc.x, sc.y, x);
    uint ln = bpc_left(nc.x, nc.y, x), rn = bpc_right(nc.x, nc.y, x);
    uint us = bpc_sig_a[x], un = bpc_neg_a[x], ds = bpc_sig_b[x], dn = bpc_neg_b[x];
    uint hpos = (ls & ~ln) | (rs & ~rn), hneg = (ls & ln) | (rs & rn);
    uint wpos = (us & ~un) | (ds & ~dn), wneg = (us & un) | (ds & dn);
    uint hp = hpos & ~hneg, hn = hneg & ~hpos;
    uint wp = wpos & ~wneg, wn = wneg & ~wpos;
    uint predicted_negative = hn | (wn & ~hp);
    uint k1 = (hp | hn) & ~((hp & wn) | (hn & wp));
    uint k0 = ((wp | wn) & ~(hp | hn)) | (hp & wp) | (hn & wn);
    return uvec3(k0, k1, predicted_negative ^ nc[x]);
}

// Pass number `i` of the schedule: kind in bits 0-7, bitplane in bits 8-15
// (core passes.rs PassSchedule::pass).
// Whether the codeblocks are coded in 3 passes per bitplane. Shaders built
// with BPC_TWO_PASS (the host picks them for 2-pass tables) know it is
// false: no pending map, no cleanup pass, less shared memory and fewer
// instructions per step (docs/history/bpc-paco.md).
#ifdef BPC_TWO_PASS
#define BPC_THREE_PASS(flag) false
#else
#define BPC_THREE_PASS(flag) ((flag) != 0u)
#endif

uint bpc_pass(bool three_pass, uint top, uint i) {
    if (!three_pass) {
        return ((i & 1u) == 0u ? BPC_SPP : BPC_MRP) | ((top - i / 2u) << 8);
    }
    if (i == 0u) {
        return BPC_CP | (top << 8);
    }
    uint r = (i - 1u) % 3u;
    uint kind = r == 0u ? BPC_SPP : (r == 1u ? BPC_MRP : BPC_CP);
    return kind | ((top - 1u - (i - 1u) / 3u) << 8);
}

uint bpc_pass_count(bool three_pass, uint top) {
    return three_pass ? 1u + 3u * top : 2u * (top + 1u);
}

// Codeblock descriptor: x = offset of the top-left coefficient, y = row
// stride, z = width | height << 8 | group << 20 (core BlockDesc).
uint bpc_width(uvec4 d) { return d.z & 0xFFu; }
uint bpc_height(uvec4 d) { return (d.z >> 8) & 0x1FFu; }
uint bpc_group(uvec4 d) { return (d.z >> 20) & 0xFu; }

// Whether a descriptor is within the coder's limits.
bool bpc_descriptor_ok(uvec4 d) {
    uint w = bpc_width(d), h = bpc_height(d);
    return w >= 1u && w <= 64u && h >= 1u && h <= BPC_MAX_ROWS && d.y >= w;
}

// Whether every coefficient of a descriptor's region, offset + y * stride +
// c for y < height and c < width, lies below `len`, computed without any
// 32-bit wrap (a hostile offset or stride must not alias a lower index).
// Needs bpc_descriptor_ok(d) (1 <= w <= 64, 1 <= height <= 256).
//
// Why it suffices, with L = last_row = height - 1 and every quantity a
// uint: (1) w <= len, so len - w does not wrap; (2) for L > 0, d.y <=
// (len - w) / L gives L * d.y <= len - w, so that product does not wrap
// (for L = 0 it is 0); (3) hence len - w - L * d.y does not wrap, and d.x
// <= it means d.x + L * d.y + w <= len. Every index of the region is at
// most d.x + L * d.y + (w - 1) < len, and each partial sum of base + y *
// stride + c (y <= L, c < w) is at most that, so none of them wraps. The
// encoders check this once per codeblock and then load without a bound;
// bpc_measure and the decoder refuse such a codeblock.
bool bpc_region_ok(uvec4 d, uint len) {
    uint w = bpc_width(d);
    uint last_row = bpc_height(d) - 1u;
    if (w > len) {
        return false;
    }
    if (last_row > 0u && d.y > (len - w) / last_row) {
        return false;
    }
    return d.x <= len - w - last_row * d.y;
}

// Step 2-3 of the arithmetic coder: (S * P) >> 7.
uint bpc_split(uint size, uint p) {
    return (size * p) >> 7;
}

#ifdef BPC_WITH_TABLES
// Needs the includer's `bpc_tables` buffer (16 groups x 15 bitplanes x 27).
// Loads the probabilities of bitplane j of `group` into bpc_plane (64 above
// the tables). Uniform control flow only.
void bpc_load_plane(uint group, uint j, uint lane) {
    barrier(); // the previous pass is done with bpc_plane
    if (lane < BPC_ROW_LEN) {
        uint at = group * BPC_GROUP_LEN + j * BPC_ROW_LEN + lane;
        bpc_plane[lane] = (j < BPC_TABLE_BITPLANES && at < uint(bpc_tables.length())) ? bpc_tables[at] & 127u : 64u;
    }
    barrier();
}
#endif
