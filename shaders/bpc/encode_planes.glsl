// BPC-PaCo encoder for 2 passes per bitplane, the plane-map form: body of
// bpc_encode64_2pass (BPC_TWO_PASS, BPC_MAX_ROWS 64). Its core model is
// core/src/bpc/encode/plane_maps.rs (wavelane_core::bpc::encode_plane_maps;
// the row window and the sliced contexts in plane_maps/window.rs), written
// function by function like this file and tested equal to core's
// sequential and lane encoders. Same bytes as bpc/encode.glsl and core
// bpc/encode/lanes.rs; what differs is where a step finds its state. Same bindings
// and push constants as bpc/encode.glsl (the host drives both
// alike).
//
// Maps: in 2-pass mode every insignificant coefficient codes its
// significance in every bitplane's SPP, so the significance state is a
// function of the magnitudes: before bitplane j's SPP the significant
// coefficients are exactly those with |v| >> (j + 1) != 0 (and those are
// what bitplane j's MRP refines), after it those with |v| >> j != 0. Each
// bitplane j therefore starts by reading the codeblock's coefficients once
// into a lane-mask map of bit j of every magnitude (bpc_bits, one ballot
// per row and parity) and updating "significant before bitplane j"
// (bpc_above = the previous bitplane's bpc_above | bpc_bits). Its SPP and
// MRP then only read those two maps and the sign map (loaded once per
// codeblock) and store nothing to shared memory. So there is no
// significance, refinement or pending map, and no per-row write-back.
//
// Against the map-based body this moves the coefficient loads out of the
// passes (one read per bitplane instead of one per pass, eight loads in
// flight instead of two per row on the step chain), and replaces the SPP's
// "newly significant" ballot by an AND of two team words. The step itself
// is the lean one: team-word significance and sign contexts
// (bpc_sig_context_sliced, bpc_sign_words in bpc/bpc.glsl), the slot
// prefix mask and the emit limit computed once per codeblock, no "opened"
// flag; a codeword is stored when its lane reserves the next one, the maps
// have two zero rows below the codeblock so the row window needs no bound,
// and start_bitplane loads without branches and (one subgroup) stores a
// group's eight map words in one store. Both the plane maps and the lean
// step made the 2-pass encode faster and took registers off
// (docs/history/bpc-paco.md).
//
// As in bpc/encode.glsl, main checks each codeblock's region against
// the coefficient buffer once (bpc_region_ok) and the loads carry no bound.
#include "bpc/encode_bindings.glsl"
#define BPC_PLANE_MAPS
#include "bpc/bpc.glsl"

#include "bpc/encode_block.glsl"

// Slots below it are inside both the codeblock's capacity and the scratch
// buffer (scratch_base + slot < scratch.length(), without a wrap), found
// once per codeblock instead of two bounds per codeword.
uint emit_limit = 0u;
// The lanes before this one: a slot is the count of those that need one.
uint lanes_below = 0u;

// Whether this lane's bit of a team word is set: one AND and a test
// (bpc_bit's shift, AND and test take one more).
bool lane_in(uint m, uint lane) {
    return (m & (1u << lane)) != 0u;
}

void emit(uint slot, uint value) {
    if (slot < emit_limit) {
        scratch[scratch_base + slot] = uint16_t(value);
    }
}

// One phase: the exhausted visiting lanes take slots in lane order (team
// ballot + prefix popcount), then every visiting lane codes its symbol.
// Uniform control flow only.
//
// A codeword is stored when its lane reserves the next one (or at the
// codeblock's end), not when it is exhausted: an exhausted lane's low no
// longer changes until then, so the bytes are the same, each codeword is
// stored once, and the store shares the reserving lanes' branch instead of
// a test of its own after every symbol. (The first reservation stores
// NO_SLOT, which emit refuses.)
void encode_phase(bool visit, bool symbol, uint p) {
    bool need = visit && ac_size == 0u;
    uint need_mask = bpc_team_ballot(need);
    if (need) {
        emit(ac_slot, ac_low);
        ac_slot = ac_next + bitCount(need_mask & lanes_below);
        ac_low = 0u;
        ac_size = 0xFFFFu;
    }
    ac_next += uint(bitCount(need_mask));
    if (visit) {
        uint f = bpc_split(ac_size, p);
        if (symbol) {
            ac_low += f + 1u;
            ac_size -= f + 1u;
        } else {
            ac_size = f;
        }
    }
}

// bpc_present of the codeblock's two column parities.
uvec2 present;

// The SPP's row window (the registers are bpc/bpc.glsl's): rows y - 1
// (suffix a), y (c) and y + 1 (b) of the significance and sign maps,
// team-uniform, plus bit j of row y. Row y - 1 is already coded (its
// significance is bpc_above | bpc_bits), rows y and y + 1 are not yet
// (bpc_above); only row y changes during its steps, and nothing is written
// back: the next bitplane rebuilds the maps.
uvec2 bpc_bits_c;

// Words 2y and 2y + 1 of a map. The maps have two rows more than the
// tallest codeblock, and rows height and height + 1 of each are zero
// (cleared per codeblock in main; start_bitplane and put_bits write only
// rows below the height), so rows y + 1 and y + 2 of a row y < height need
// no bound.
#define BPC_ROW(map, y) uvec2(map[2u * (y)], map[2u * (y) + 1u])

// The window at row 0, at the start of an SPP.
void bpc_window_start() {
    bpc_sig_a = uvec2(0u);
    bpc_neg_a = uvec2(0u);
    bpc_sig_c = BPC_ROW(bpc_above, 0u);
    bpc_neg_c = BPC_ROW(bpc_negative, 0u);
    bpc_bits_c = BPC_ROW(bpc_bits, 0u);
    bpc_sig_b = BPC_ROW(bpc_above, 1u);
    bpc_neg_b = BPC_ROW(bpc_negative, 1u);
}

// Moves the window from row y to row y + 1.
void bpc_window_next(uint y) {
    bpc_sig_a = bpc_sig_c;
    bpc_neg_a = bpc_neg_c;
    bpc_sig_c = bpc_sig_b;
    bpc_neg_c = bpc_neg_b;
    bpc_bits_c = BPC_ROW(bpc_bits, y + 1u);
    bpc_sig_b = BPC_ROW(bpc_above, y + 2u);
    bpc_neg_b = BPC_ROW(bpc_negative, y + 2u);
}

// |v| of the coefficient at row y < height, column c < width. main
// checked the codeblock's region (rows below height, columns below width)
// against the buffer, so the load needs no bound of its own.
uint magnitude(uint y, uint c) {
    int v = coefficients[base + y * stride + c];
    return uint(v < 0 ? -v : v);
}

// Puts this lane's bit j (jbit = 1 << j) into word r of bpc_bits. Uniform
// control flow only. With one subgroup per team its lane 0 stores the
// ballot; with narrower subgroups each ORs its part into the word
// (cleared by start_bitplane).
// The lanes of absent columns loaded a present coefficient of their row
// (see start_bitplane); `present` (bpc_present of the word's parity) drops
// their bits.
void put_bits(uint r, uint m, uint jbit, uint present_x, uint lane) {
    uint bits = subgroupBallot((m & jbit) != 0u).x;
    if (gl_NumSubgroups == 1u) {
        if (lane == 0u) {
            bpc_bits[r] = bits & present_x;
        }
    } else if (subgroupElect()) {
        atomicOr(bpc_bits[r], (bits << (gl_SubgroupID * gl_SubgroupSize)) & present_x);
    }
}

// Bitplane j's maps and probabilities. Uniform control flow only.
void start_bitplane(uint group, uint j, bool first, uint height, uint lane) {
    barrier(); // the previous bitplane's passes are done with the maps
    // Significant before bitplane j: before bitplane j + 1 or bit j + 1
    // set (nothing before the top bitplane). The previous bits are then
    // cleared for the subgroups that OR theirs in.
    for (uint i = lane; i < 2u * height; i += BPC_LANES) {
        bpc_above[i] = first ? 0u : (bpc_above[i] | bpc_bits[i]);
        if (gl_NumSubgroups != 1u) {
            bpc_bits[i] = 0u; // a single subgroup stores whole words
        }
    }
    if (lane < BPC_ROW_LEN) {
        uint at = group * BPC_GROUP_LEN + j * BPC_ROW_LEN + lane;
        bpc_plane[lane] = (j < BPC_TABLE_BITPLANES && at < uint(bpc_tables.length())) ? bpc_tables[at] & 127u : 64u;
    }
    barrier();
    uint jbit = 1u << j;
    // Every load is inside the codeblock, without a branch: a lane whose
    // column is absent loads the row's last column, a row below the
    // codeblock loads its last row (neither is put into the map).
    uint last = width - 1u;
    uint c0 = min(2u * lane, last), c1 = min(2u * lane + 1u, last);
    uint bottom = height - 1u;
    // Four rows at a time, their eight loads issued before any is used.
    for (uint y = 0u; y < height; y += 4u) {
        uint y1 = min(y + 1u, bottom), y2 = min(y + 2u, bottom), y3 = min(y + 3u, bottom);
        uint m0 = magnitude(y, c0);
        uint m1 = magnitude(y, c1);
        uint m2 = magnitude(y1, c0);
        uint m3 = magnitude(y1, c1);
        uint m4 = magnitude(y2, c0);
        uint m5 = magnitude(y2, c1);
        uint m6 = magnitude(y3, c0);
        uint m7 = magnitude(y3, c1);
        uint r = 2u * y;
        if (gl_NumSubgroups == 1u) {
            // Eight ballots, then lane i < 8 stores word r + i in one
            // store (words of rows at or below the height get 0: rows
            // height and height + 1 stay zero, and r + 7 is inside the map).
            uint b0 = subgroupBallot((m0 & jbit) != 0u).x;
            uint b1 = subgroupBallot((m1 & jbit) != 0u).x;
            uint b2 = subgroupBallot((m2 & jbit) != 0u).x;
            uint b3 = subgroupBallot((m3 & jbit) != 0u).x;
            uint b4 = subgroupBallot((m4 & jbit) != 0u).x;
            uint b5 = subgroupBallot((m5 & jbit) != 0u).x;
            uint b6 = subgroupBallot((m6 & jbit) != 0u).x;
            uint b7 = subgroupBallot((m7 & jbit) != 0u).x;
            uint w = lane == 1u ? b1 : b0;
            w = lane == 2u ? b2 : w;
            w = lane == 3u ? b3 : w;
            w = lane == 4u ? b4 : w;
            w = lane == 5u ? b5 : w;
            w = lane == 6u ? b6 : w;
            w = lane == 7u ? b7 : w;
            if (lane < 8u) {
                bpc_bits[r + lane] = y + (lane >> 1) < height ? w & present[lane & 1u] : 0u;
            }
            continue;
        }
        put_bits(r, m0, jbit, present[0], lane);
        put_bits(r + 1u, m1, jbit, present[1], lane);
        if (y + 1u < height) {
            put_bits(r + 2u, m2, jbit, present[0], lane);
            put_bits(r + 3u, m3, jbit, present[1], lane);
        }
        if (y + 2u < height) {
            put_bits(r + 4u, m4, jbit, present[0], lane);
            put_bits(r + 5u, m5, jbit, present[1], lane);
        }
        if (y + 3u < height) {
            put_bits(r + 6u, m6, jbit, present[0], lane);
            put_bits(r + 7u, m7, jbit, present[1], lane);
        }
    }
    barrier();
}

// Step (y, x) of bitplane j's SPP on the row window (bpc/bpc.glsl).
// The steps are functions rather than an inner loop over x to keep
// lavapipe's loop budget (see bpc_team_ballot in bpc/bpc.glsl) for rows.
void significance_step(uint x, uint lane) {
    uint cand = present[x] & ~bpc_sig_c[x];
    if (cand == 0u) {
        return;
    }
    // Phase A.
    bool mine = lane_in(cand, lane);
    uint ctx = bpc_sig_context_sliced(x, lane);
    uint bits = bpc_bits_c[x];
    bool one = lane_in(bits, lane);
    encode_phase(mine, one, bpc_plane[BPC_SIG + ctx]);
    uint newly = cand & bits;
    // Phase B: signs of the lanes that became significant (the sign context
    // sees the row before this step's update, like core).
    if (newly != 0u) {
        uvec3 sw = bpc_sign_words(x);
        uint k = bpc_bit(sw.x, lane) | bpc_bit(sw.y, lane) << 1;
        bool symbol = lane_in(sw.z, lane);
        encode_phase(mine && one, symbol, bpc_plane[BPC_SIGN + k]);
    }
    bpc_sig_c[x] |= newly;
}

void refinement_step(uint visit, uint bits, uint p, uint lane) {
    if (visit != 0u) {
        encode_phase(lane_in(visit, lane), lane_in(bits, lane), p);
    }
}

// Bitplane j: its SPP, then its MRP.
void code_bitplane(uint height, uint lane) {
    bpc_window_start();
    for (uint y = 0u; y < height; y++) {
        significance_step(0u, lane);
        significance_step(1u, lane);
        bpc_window_next(y);
    }
    // Read once: with narrower subgroups the team ballots' barriers would
    // make the compiler read it again at every step.
    uint p = bpc_plane[BPC_REF];
    for (uint y = 0u; y < height; y++) {
        uint r = 2u * y;
        uvec2 visit = uvec2(bpc_above[r], bpc_above[r + 1u]);
        uvec2 bits = uvec2(bpc_bits[r], bpc_bits[r + 1u]);
        refinement_step(visit.x, bits.x, p, lane);
        refinement_step(visit.y, bits.y, p, lane);
    }
}

// The hooks of the shared main (bpc/encode_main.glsl).
void bpc_body_init(uint lane) {
    lanes_below = (1u << lane) - 1u;
}

void bpc_body_start(uint width) {
    present = uvec2(bpc_present(width, 0u), bpc_present(width, 1u));
}

void bpc_body_capacity(uint cap) {
    uint scratch_len = uint(scratch.length());
    emit_limit = scratch_base <= scratch_len ? min(cap, scratch_len - scratch_base) : 0u;
}

void bpc_body_clear(uint height, bool three, uint lane) {
    barrier(); // the previous codeblock is done with the maps
    for (uint i = lane; i < 2u * height; i += BPC_LANES) {
        bpc_negative[i] = 0u;
    }
    // Rows height and height + 1 of every map stay zero for this
    // codeblock (see BPC_ROW).
    if (lane < 4u) {
        uint i = 2u * height + lane;
        bpc_negative[i] = 0u;
        bpc_above[i] = 0u;
        bpc_bits[i] = 0u;
    }
    barrier();
}

void bpc_body_code(uint group, uint top, bool three, uint height, uint lane) {
    // start_bitplane's first barrier publishes the sign map.
    for (uint i = 0u; i <= top; i++) {
        uint j = top - i;
        start_bitplane(group, j, i == 0u, height, lane);
        code_bitplane(height, lane);
    }
}

#include "bpc/encode_main.glsl"
