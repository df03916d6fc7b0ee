// BPC-PaCo encoder: one workgroup (a team of 32 lanes) per codeblock, the
// GLSL twin of wavelane_core::bpc::encode_lanes (core bpc/encode/lanes.rs).
// Body of bpc_encode, bpc_encode64, bpc_encode_records (either mode;
// BPC_RECORDS also writes the rate-control records, bpc/records.glsl) and
// bpc_count (BPC_COUNTS: the same walk counting the symbols instead of
// coding them, bpc/counts.glsl); bpc_encode64_2pass has its own,
// bpc/encode_planes.glsl. The two encoders share main(),
// bpc/encode_main.glsl, through the bpc_body_* hooks at the end; the
// counting build has its own (bpc/counts_main.glsl), which calls the same
// hooks bpc_body_clear and bpc_body_code.
//
// Maps: significance (and pending in 3 passes) in the row window, written
// back per row; the sign map loaded once per codeblock and never stored
// again; no refinement map: a refinement pass visits the lanes with
// |v| >> (j + 1) != 0 (bpc/bpc.glsl says why that is the same set) and
// touches no shared memory. main checks each codeblock's region against the
// coefficient buffer once (bpc_region_ok), so coefficient loads carry no
// bound of their own.
//
// Codeword k of codeblock b goes to scratch[scratch_offsets[b] + k]; the
// scratch region of b holds caps[b] codewords, the bound of core
// codeword_bound computed by bpc_measure.comp, so it cannot overflow (an
// overflow would still only be reported, never written out of bounds).
// bpc_pack (bpc/pack.glsl) then packs all codeblocks into one stream.
#include "bpc/encode_bindings.glsl"
#include "bpc/bpc.glsl"

#include "bpc/encode_block.glsl"

#ifndef BPC_COUNTS
// This codeblock's capacity in codewords.
uint cap = 0u;
#endif

// BPC_RECORDS builds pass each lane's distortion decrease to encode_phase
// and write the records (bpc/records.glsl); the plain builds compile
// without any of it (the same SPIR-V as before it existed).
#ifdef BPC_RECORDS
#include "bpc/records.glsl"
#define BPC_DECREASE(d) , d
#define BPC_DECREASE_PARAM , int64_t decrease
#else
#define BPC_DECREASE(d)
#define BPC_DECREASE_PARAM
#endif

#ifdef BPC_COUNTS
// The counting build's encode_phase and main.
#include "bpc/counts.glsl"
#else
void emit(uint slot, uint value) {
    uint at = scratch_base + slot;
    if (slot < cap && at < uint(scratch.length())) {
        scratch[at] = uint16_t(value);
    }
}

// One phase: the exhausted visiting lanes take slots in lane order (team
// ballot + prefix popcount), then every visiting lane codes its symbol.
// Uniform control flow only. (The counting build's encode_phase, in
// bpc/counts.glsl, counts the visiting lanes' symbols instead.)
//
// A codeword is stored when its lane reserves the next one (or at the
// codeblock's end), not when it is exhausted: an exhausted lane's low no
// longer changes until then, so the bytes are the same, each codeword is
// stored once, and the store shares the reserving lanes' branch instead of
// a test of its own after every symbol (as in bpc/encode_planes.glsl).
void encode_phase(bool visit, bool symbol, uint p, uint lane BPC_DECREASE_PARAM) {
    bool need = visit && ac_size == 0u;
    uint need_mask = bpc_team_ballot(need);
    if (need) {
        emit(ac_slot, ac_low);
        ac_slot = ac_next + bitCount(need_mask & ((1u << lane) - 1u));
        ac_low = 0u;
        ac_size = 0xFFFFu;
    }
#ifdef BPC_RECORDS
    rec_phase(need_mask, need, ac_slot, decrease, cap);
#endif
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
#endif // BPC_COUNTS

// A symbol's probability: its entry of the bitplane's table row. The
// counting build passes the entry's index instead (it names the symbol's
// table and context, which is the cell the symbol counts in).
#ifdef BPC_COUNTS
#define BPC_PROB(at) (at)
#else
#define BPC_PROB(at) bpc_plane[at]
#endif

// This lane's two magnitudes of the window's row, loaded once per row.
// (Loading the next row's a row ahead cost the 3 registers that keep this
// shader at 63, and so 32 teams per SM instead of 28: docs/history/bpc-paco.md.)
uvec2 mag_c;

// |v| of this lane's coefficient in step (y, x), 0 where absent. Needs
// y < height: main checked the codeblock's whole region against the buffer
// (bpc_region_ok), so the load needs no bound of its own.
uint magnitude(uint y, uint x, uint lane) {
    uint c = 2u * lane + x;
    if (c >= width) {
        return 0u;
    }
    int v = coefficients[base + y * stride + c];
    return uint(v < 0 ? -v : v);
}

uvec2 row_magnitudes(uint y, uint height, uint lane) {
    return y < height ? uvec2(magnitude(y, 0u, lane), magnitude(y, 1u, lane)) : uvec2(0u);
}

// Step (y, x) of the SPP (cleanup = false) or CP of bitplane j, on the row
// window (bpc/bpc.glsl). The steps are functions rather than an inner
// loop over x to keep lavapipe's loop budget (see bpc_team_ballot in
// bpc/bpc.glsl) for rows.
void significance_step(uint x, uint j, bool cleanup, bool three, uint lane) {
    uint cand = cleanup ? bpc_pend_c[x] : (bpc_present(width, x) & ~bpc_sig_c[x]);
    if (cand == 0u) {
        return;
    }
    uint sig_at = cleanup ? BPC_CP_SIG : BPC_SIG;
    uint sign_at = cleanup ? BPC_CP_SIGN : BPC_SIGN;
    // Phase A.
    bool mine = bpc_bit(cand, lane) != 0u;
    uint ctx = bpc_sig_context(x, lane);
    bool bit = mine && ((mag_c[x] >> j) & 1u) != 0u;
    bool spp3 = !cleanup && three;
    bool visit = mine && !(spp3 && ctx == 0u);
    encode_phase(visit, bit, BPC_PROB(sig_at + ctx), lane BPC_DECREASE(int64_t(0)));
    uint newly = bpc_team_ballot(visit && bit);
    uint deferred = spp3 ? bpc_team_ballot(mine && ctx == 0u) : 0u;
    // Phase B: signs of the lanes that became significant (the sign context
    // sees the row before this step's update, like core).
    if (newly != 0u) {
        uint sc = bpc_sign_context(x, lane);
        bool negative = bpc_bit(bpc_neg_c[x], lane) != 0u;
        bool symbol = negative != ((sc & 4u) != 0u);
        bool signs = bpc_bit(newly, lane) != 0u;
        encode_phase(signs, symbol, BPC_PROB(sign_at + (sc & 3u)), lane
                     BPC_DECREASE(signs ? rec_significance_decrease(mag_c[x], j) : int64_t(0)));
    }
    bpc_sig_c[x] |= newly;
    if (cleanup) {
        bpc_pend_c[x] = 0u;
    } else {
        bpc_pend_c[x] |= deferred;
    }
}

// Step (y, x) of bitplane j's MRP. It reads no map: the lanes that refine
// are those significant before bitplane j, |v| >> (j + 1) != 0 (see the
// state maps in bpc/bpc.glsl; absent coefficients have |v| = 0). Every
// lane takes part in the phase; a step that refines nothing costs a ballot,
// not a shared-memory row. (Faster than a refinement map loaded and
// stored per row, docs/history/bpc-paco.md.)
void refinement_step(uint x, uint j, uint lane) {
    uint mag = mag_c[x];
    bool mine = (mag >> (j + 1u)) != 0u;
    bool bit = ((mag >> j) & 1u) != 0u;
    encode_phase(mine, bit, BPC_PROB(BPC_REF), lane
                 BPC_DECREASE(mine ? rec_refinement_decrease(mag, j) : int64_t(0)));
}

// One pass of bitplane j over the rows: kind BPC_SPP, BPC_MRP or BPC_CP.
void code_pass(uint kind, uint j, bool three, uint height, uint lane) {
    if (kind == BPC_MRP) {
        for (uint y = 0u; y < height; y++) {
            mag_c = row_magnitudes(y, height, lane);
            refinement_step(0u, j, lane);
            refinement_step(1u, j, lane);
        }
        return;
    }
    bpc_window_start(height);
    for (uint y = 0u; y < height; y++) {
        mag_c = row_magnitudes(y, height, lane);
        significance_step(0u, j, kind == BPC_CP, three, lane);
        significance_step(1u, j, kind == BPC_CP, three, lane);
        bpc_window_next(y, height, lane);
    }
}

// The hooks of the shared main (bpc/encode_main.glsl).
#ifndef BPC_COUNTS
void bpc_body_init(uint lane) {}

void bpc_body_start(uint width) {}

void bpc_body_capacity(uint block_cap) {
    cap = block_cap;
}
#endif

void bpc_body_clear(uint height, bool three, uint lane) {
    barrier(); // the previous codeblock is done with the state maps
    for (uint i = lane; i < 2u * height; i += BPC_LANES) {
        bpc_sig[i] = 0u;
#ifndef BPC_TWO_PASS
        bpc_pending[i] = three ? bpc_present(width, i & 1u) : 0u;
#endif
        bpc_negative[i] = 0u;
    }
    barrier();
}

void bpc_body_code(uint group, uint top, bool three, uint height, uint lane) {
    barrier(); // publishes the sign map
    uint passes = bpc_pass_count(three, top);
    for (uint i = 0u; i < passes; i++) {
        uint pass = bpc_pass(three, top, i);
        uint j = pass >> 8;
#ifdef BPC_COUNTS
        // The counted passes are a prefix of the schedule (count_pass).
        if (!count_pass(pass & 0xFFu, j)) {
            break;
        }
        count_j = j;
        barrier(); // the previous pass's row write-backs are visible
#else
        bpc_load_plane(group, j, lane);
#endif
        code_pass(pass & 0xFFu, j, three, height, lane);
#ifdef BPC_RECORDS
        rec_pass_end(i, pass & 0xFFu, j, three, lane);
#endif
    }
#ifdef BPC_COUNTS
    count_flush(group, lane);
#endif
}

#ifdef BPC_COUNTS
#include "bpc/counts_main.glsl"
#else
#include "bpc/encode_main.glsl"
#endif
