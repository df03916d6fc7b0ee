// BPC-PaCo decoder: one workgroup (a team of 32 lanes) per codeblock, the
// GLSL twin of wavelane_core::bpc::decode_lanes (core bpc/decode/lanes.rs),
// including truncated streams: after a phase's slot reservation lane t
// decodes iff the slots of lanes 0..=t exist (slot + need <= available),
// and the codeblock stops when a reserved slot does not.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require

layout(local_size_x = 32) in;

// The stream: codeword k in the low (k even) or high half of word k / 2.
layout(set = 0, binding = 0) readonly buffer Packed { uint packed[]; };
layout(set = 0, binding = 1) readonly buffer Blocks { uvec4 blocks[]; };
layout(set = 0, binding = 2) readonly buffer Tables { uint bpc_tables[]; };
// Per codeblock: x = index of its first codeword in the stream, y = the
// codewords available (after truncation), z = M (0xFF empty), w = passes to
// decode at most.
layout(set = 0, binding = 3) readonly buffer Streams { uvec4 streams[]; };
layout(set = 0, binding = 4) buffer Coefficients { int coefficients[]; };
// Per codeblock: codewords used, passes completed, outcome (DEC_*), 0.
layout(set = 0, binding = 5) writeonly buffer Summary { uvec4 summary[]; };

layout(push_constant) uniform Params {
    uint block_count;
    uint three_pass;
} params;

#define BPC_WITH_TABLES
#include "bpc/bpc.glsl"

#define DEC_PARTIAL 0u
#define DEC_COMPLETE 1u
#define DEC_BAD_TOP 2u
#define DEC_TRAILING 3u
#define DEC_BAD_DESCRIPTOR 4u

uint ac_low = 0u;
uint ac_size = 0u;
uint ac_word = 0u;
uint ac_next = 0u;
uint stream_base = 0u;
uint available = 0u;
uint base;
uint stride;
uint width;

uint read_codeword(uint k) {
    uint at = stream_base + k;
    uint w = at / 2u;
    return w < uint(packed.length()) ? (packed[w] >> (16u * (at & 1u))) & 0xFFFFu : 0u;
}

// One phase: reserve slots, keep the lanes whose codewords exist, decode.
// Returns this lane's symbol; `decoded` says whether it decoded one, and
// `stopped` (the same in every lane) whether the stream ended here.
// Uniform control flow only.
bool decode_phase(bool visit, uint p, uint lane, out bool decoded, out bool stopped) {
    bool need = visit && ac_size == 0u;
    uint need_mask = bpc_team_ballot(need);
    uint before = ac_next + bitCount(need_mask & ((1u << lane) - 1u));
    uint requested = ac_next + uint(bitCount(need_mask));
    bool allowed = before + uint(need) <= available;
    decoded = visit && allowed;
    stopped = requested > available;
    ac_next = min(requested, available);
    if (need && allowed) {
        ac_word = read_codeword(before);
        ac_low = 0u;
        ac_size = 0xFFFFu;
    }
    bool symbol = false;
    if (decoded) {
        uint f = bpc_split(ac_size, p) + 1u;
        uint g = ac_low + f;
        if (ac_word >= g) {
            symbol = true;
            ac_size -= f;
            ac_low = g;
        } else {
            ac_size = f - 1u;
        }
    }
    return symbol;
}

uint coefficient_index(uint y, uint x, uint lane) {
    return base + y * stride + 2u * lane + x;
}

void store(uint y, uint x, uint lane, int v) {
    uint at = coefficient_index(y, x, lane);
    if (2u * lane + x < width && at < uint(coefficients.length())) {
        coefficients[at] = v;
    }
}

int load(uint y, uint x, uint lane) {
    uint at = coefficient_index(y, x, lane);
    return (2u * lane + x < width && at < uint(coefficients.length())) ? coefficients[at] : 0;
}

// This lane's two coefficients of the window's row, read at the row's start
// by the refinement pass (a lane only ever reads and writes its own columns,
// so no other lane's store can intervene). Not read a row ahead: that cost
// the registers that decide how many teams an SM holds (docs/history/bpc-paco.md).
ivec2 val_c;

ivec2 row_values(uint y, uint height, uint lane) {
    return y < height ? ivec2(load(y, 0u, lane), load(y, 1u, lane)) : ivec2(0);
}

// Step (y, x) of the SPP (cleanup = false) or CP of bitplane j on the row
// window (bpc/bpc.glsl); false where the stream ends. The steps are
// functions rather than an inner loop over x to keep lavapipe's loop budget
// (see bpc_team_ballot) for rows.
bool significance_step(uint y, uint x, uint j, bool cleanup, bool three, uint lane) {
    uint cand = cleanup ? bpc_pend_c[x] : (bpc_present(width, x) & ~bpc_sig_c[x]);
    if (cand == 0u) {
        return true;
    }
    uint sig_at = cleanup ? BPC_CP_SIG : BPC_SIG;
    uint sign_at = cleanup ? BPC_CP_SIGN : BPC_SIGN;
    bool mine = bpc_bit(cand, lane) != 0u;
    uint ctx = bpc_sig_context(x, lane);
    bool spp3 = !cleanup && three;
    bool visit = mine && !(spp3 && ctx == 0u);
    bool decoded, stopped;
    bool bit = decode_phase(visit, bpc_plane[sig_at + ctx], lane, decoded, stopped);
    if (stopped) {
        return false;
    }
    uint newly = bpc_team_ballot(bit);
    uint deferred = spp3 ? bpc_team_ballot(mine && ctx == 0u) : 0u;
    bool negative = false;
    if (newly != 0u) {
        uint sc = bpc_sign_context(x, lane);
        bool signed_now;
        bool symbol = decode_phase(bpc_bit(newly, lane) != 0u, bpc_plane[sign_at + (sc & 3u)], lane, signed_now, stopped);
        negative = signed_now && (symbol != ((sc & 4u) != 0u));
        if (signed_now) {
            uint mag = (1u << j) | ((1u << j) >> 1u);
            store(y, x, lane, negative ? -int(mag) : int(mag));
        }
        if (stopped) {
            return false;
        }
    }
    uint negatives = bpc_team_ballot(negative);
    bpc_sig_c[x] |= newly;
    bpc_neg_c[x] |= negatives;
    if (cleanup) {
        bpc_ref_c[x] |= newly;
        bpc_pend_c[x] = 0u;
    } else {
        bpc_pend_c[x] |= deferred;
    }
    return true;
}

// Step (y, x) of the MRP of bitplane j; false where the stream ends.
bool refinement_step(uint y, uint x, uint j, uint lane) {
    uint visit = bpc_ref_c[x];
    if (visit != 0u) {
        bool decoded, stopped;
        bool bit = decode_phase(bpc_bit(visit, lane) != 0u, bpc_plane[BPC_REF], lane, decoded, stopped);
        if (decoded) {
            int v = val_c[x];
            uint m = uint(abs(v));
            m = ((m >> (j + 1u)) << (j + 1u)) | (uint(bit) << j) | ((1u << j) >> 1u);
            store(y, x, lane, v < 0 ? -int(m) : int(m));
        }
        if (stopped) {
            return false;
        }
    }
    bpc_ref_c[x] = visit | bpc_sig_c[x];
    return true;
}

// One pass of bitplane j over the rows (kind BPC_SPP, BPC_MRP or BPC_CP);
// false where the stream ends.
bool decode_pass(uint kind, uint j, bool three, uint height, uint lane) {
    bool refine = kind == BPC_MRP;
    bpc_window_start(height);
    for (uint y = 0u; y < height; y++) {
        bool ok;
        if (refine) {
            val_c = row_values(y, height, lane);
            ok = refinement_step(y, 0u, j, lane) && refinement_step(y, 1u, j, lane);
        } else {
            ok = significance_step(y, 0u, j, kind == BPC_CP, three, lane)
                && significance_step(y, 1u, j, kind == BPC_CP, three, lane);
        }
        if (!ok) {
            return false;
        }
        bpc_window_next(y, height, lane);
    }
    return true;
}

void main() {
    uint lane = bpc_lane();
    bool three = BPC_THREE_PASS(params.three_pass);
    bpc_team_init();
    for (uint b = gl_WorkGroupID.x; b < params.block_count; b += gl_NumWorkGroups.x) {
        uvec4 d = blocks[b];
        uvec4 s = streams[b];
        if (!bpc_descriptor_ok(d) || !bpc_region_ok(d, uint(coefficients.length()))) {
            if (lane == 0u) {
                summary[b] = uvec4(0u, 0u, DEC_BAD_DESCRIPTOR, 0u);
            }
            continue;
        }
        base = d.x;
        stride = d.y;
        width = bpc_width(d);
        uint height = bpc_height(d);
        uint group = bpc_group(d);
        for (uint y = 0u; y < height; y++) {
            store(y, 0u, lane, 0);
            store(y, 1u, lane, 0);
        }
        uint top = s.z;
        stream_base = s.x;
        available = s.y;
        if (top == BPC_EMPTY || top > BPC_MAX_BITPLANE) {
            if (lane == 0u) {
                uint outcome = top != BPC_EMPTY ? DEC_BAD_TOP : (available > 0u ? DEC_TRAILING : DEC_COMPLETE);
                summary[b] = uvec4(0u, 0u, outcome, 0u);
            }
            continue;
        }
        ac_low = 0u;
        ac_size = 0u;
        ac_word = 0u;
        ac_next = 0u;
        barrier(); // the previous codeblock is done with the state maps
        for (uint i = lane; i < 2u * height; i += BPC_LANES) {
            bpc_sig[i] = 0u;
            bpc_refine[i] = 0u;
#ifndef BPC_TWO_PASS
            bpc_pending[i] = three ? bpc_present(width, i & 1u) : 0u;
#endif
            bpc_negative[i] = 0u;
        }
        barrier();

        uint passes = bpc_pass_count(three, top);
        uint completed = 0u;
        for (uint i = 0u; i < passes && i < s.w; i++) {
            uint pass = bpc_pass(three, top, i);
            uint j = pass >> 8;
            bpc_load_plane(group, j, lane);
            if (!decode_pass(pass & 0xFFu, j, three, height, lane)) {
                break;
            }
            completed++;
        }
        if (lane == 0u) {
            bool complete = completed == passes;
            uint outcome = complete ? (ac_next < available ? DEC_TRAILING : DEC_COMPLETE) : DEC_PARTIAL;
            summary[b] = uvec4(ac_next, completed, outcome, 0u);
        }
    }
}
