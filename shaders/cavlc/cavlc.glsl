// CAVLC of one residual block into a 512-bit slot: the GLSL mirror of
// wavelane_core::cavlc::{encode_block, WordSlot} and of the unit layout and
// nC derivation of wavelane_core::cavlc::frame. The including shader
// declares the buffers `tables[]` (codes as len << 16 | bits, layout of
// wavelane::h264::gpu::code_table_words) and `coeffs[]` (i16 pairs), and
// `slot_words[16]`, `slot_len` as invocation-private state.

// Offsets into tables[].
#define T_CT_NC0 0u      // [17][4] coeff_token, 0 <= nC < 2
#define T_CT_NC2 68u     // [17][4] 2 <= nC < 4
#define T_CT_NC4 136u    // [17][4] 4 <= nC < 8
#define T_CT_CDC 204u    // [5][4]  chroma DC (nC = -1)
#define T_TZ_4X4 224u    // [15][16] total_zeros by TotalCoeff - 1
#define T_TZ_CDC 464u    // [3][4]  chroma DC total_zeros
#define T_RUN 476u       // [7][15] run_before by min(zerosLeft, 7) - 1
#define T_WORDS 581u

// Block kinds (0 = not coded).
#define K_NONE 0u
#define K_LUMA4X4 1u
#define K_I16DC 2u
#define K_I16AC 3u
#define K_CDC 4u
#define K_CAC 5u

// Macroblock kinds (MbInfo::pack: kind | cbp << 8 | slice << 16).
#define MB_I4X4 0u
#define MB_I16X16 1u
#define MB_PCM 2u

#define UNITS_PER_MB 28u
#define UNIT_LUMA_DC 1u
#define UNIT_LUMA 2u
#define UNIT_CHROMA_DC 18u
#define UNIT_CHROMA_AC 20u

// Error bits reported through the status buffer.
#define ERR_LEVEL 1u
#define ERR_SLOT 2u

uint slot_words[16];
uint slot_len;
uint slot_err;

void slot_put(uint bits, uint len) {
    if (len == 0u) return;
    if (slot_len + len > 512u) { slot_err |= ERR_SLOT; return; }
    uint v = len == 32u ? bits : (bits & ((1u << len) - 1u));
    uint word = slot_len >> 5;
    uint freeb = 32u - (slot_len & 31u);
    if (len <= freeb) {
        slot_words[word] |= v << (freeb - len);
    } else {
        uint spill = len - freeb; // 1..31
        slot_words[word] |= v >> spill;
        slot_words[word + 1u] |= v << (32u - spill);
    }
    slot_len += len;
}

void put_code(uint code) {
    slot_put(code & 0xffffu, code >> 16);
}

uint max_coeffs(uint kind) {
    return kind == K_CDC ? 4u : ((kind == K_I16AC || kind == K_CAC) ? 15u : 16u);
}

// Scan position of the first coefficient the kind codes within the 16-entry slot.
uint first_pos(uint kind) {
    return (kind == K_I16AC || kind == K_CAC) ? 1u : 0u;
}

int coeff_at(uint mb, uint unit, uint k) {
    uint idx = (mb * (UNITS_PER_MB - 1u) + unit - 1u) * 16u + k;
    uint w = coeffs[idx >> 1];
    return bitfieldExtract(int(w), int((idx & 1u) * 16u), 16);
}

uint unit_kind(uint info, uint unit) {
    uint kind = info & 0xffu;
    uint cbp = (info >> 8) & 0xffu;
    uint luma = cbp & 15u;
    uint chroma = cbp >> 4;
    if (kind == MB_PCM || unit == 0u || unit >= UNITS_PER_MB) return K_NONE;
    if (unit == UNIT_LUMA_DC) return kind == MB_I16X16 ? K_I16DC : K_NONE;
    if (unit < UNIT_CHROMA_DC) {
        uint quadrant = (unit - UNIT_LUMA) / 4u;
        if (((luma >> quadrant) & 1u) == 0u) return K_NONE;
        return kind == MB_I16X16 ? K_I16AC : K_LUMA4X4;
    }
    if (unit < UNIT_CHROMA_AC) return chroma >= 1u ? K_CDC : K_NONE;
    return chroma == 2u ? K_CAC : K_NONE;
}

// TotalCoeff of a unit as its neighbours' nC counts it.
uint neighbour_count(uint info, uint mb, uint unit) {
    if ((info & 0xffu) == MB_PCM) return 16u;
    uint kind = unit_kind(info, unit);
    if (kind == K_NONE) return 0u;
    uint first = first_pos(kind);
    uint n = max_coeffs(kind);
    uint count = 0u;
    for (uint k = 0u; k < n; k++) {
        if (coeff_at(mb, unit, first + k) != 0) count++;
    }
    return count;
}

uint luma_block_index(uint x, uint y) {
    return (x & 1u) | ((y & 1u) << 1) | ((x & 2u) << 1) | ((y & 2u) << 2);
}

uvec2 luma_block_xy(uint blk) {
    return uvec2((blk & 1u) | ((blk >> 1) & 2u), ((blk >> 1) & 1u) | ((blk >> 2) & 2u));
}

uint code_at(uint base, uint index) {
    return tables[base + index];
}

uint coeff_token(uint kind, int nc, uint tc, uint t1) {
    uint i = tc * 4u + t1;
    if (kind == K_CDC) return code_at(T_CT_CDC, i);
    if (nc < 2) return code_at(T_CT_NC0, i);
    if (nc < 4) return code_at(T_CT_NC2, i);
    if (nc < 8) return code_at(T_CT_NC4, i);
    uint bits = tc == 0u ? 3u : (((tc - 1u) << 2) | t1);
    return (6u << 16) | bits;
}

void put_level(int level, uint suffix_length, bool first_after_few_t1s) {
    uint mag = uint(abs(level));
    uint code = level > 0 ? 2u * mag - 2u : 2u * mag - 1u;
    if (first_after_few_t1s) code -= 2u;
    if (suffix_length == 0u) {
        if (code < 14u) {
            slot_put(1u, code + 1u);
        } else if (code < 30u) {
            slot_put(1u, 15u);
            slot_put(code - 14u, 4u);
        } else if (code - 30u < 4096u) {
            slot_put(1u, 16u);
            slot_put(code - 30u, 12u);
        } else {
            slot_err |= ERR_LEVEL;
        }
    } else {
        uint escape = 15u << suffix_length;
        if (code < escape) {
            slot_put(1u, (code >> suffix_length) + 1u);
            slot_put(code & ((1u << suffix_length) - 1u), suffix_length);
        } else if (code - escape < 4096u) {
            slot_put(1u, 16u);
            slot_put(code - escape, 12u);
        } else {
            slot_err |= ERR_LEVEL;
        }
    }
}

// encode_block: the coefficients are read from the unit's coefficients.
void encode_block(uint mb, uint unit, uint kind, int nc) {
    uint first = first_pos(kind);
    uint maxc = max_coeffs(kind);
    int levels[16];
    uint positions[16];
    uint tc = 0u;
    for (uint p = maxc; p > 0u; p--) {
        int c = coeff_at(mb, unit, first + p - 1u);
        if (c != 0) {
            levels[tc] = c;
            positions[tc] = p - 1u;
            tc++;
        }
    }
    uint t1 = 0u;
    while (t1 < 3u && t1 < tc && abs(levels[t1]) == 1) t1++;
    put_code(coeff_token(kind, nc, tc, t1));
    if (tc == 0u) return;
    for (uint i = 0u; i < t1; i++) slot_put(levels[i] < 0 ? 1u : 0u, 1u);
    uint suffix_length = (tc > 10u && t1 < 3u) ? 1u : 0u;
    for (uint i = t1; i < tc; i++) {
        put_level(levels[i], suffix_length, i == t1 && t1 < 3u);
        uint sl = max(suffix_length, 1u);
        if (sl < 6u && uint(abs(levels[i])) > (3u << (sl - 1u))) sl++;
        suffix_length = sl;
    }
    if (tc < maxc) {
        uint total_zeros = positions[0] + 1u - tc;
        uint row = tc - 1u;
        put_code(kind == K_CDC ? code_at(T_TZ_CDC, row * 4u + total_zeros)
                               : code_at(T_TZ_4X4, row * 16u + total_zeros));
        uint zeros_left = total_zeros;
        for (uint i = 0u; i + 1u < tc; i++) {
            if (zeros_left == 0u) break;
            uint run = positions[i] - positions[i + 1u] - 1u;
            put_code(code_at(T_RUN, (min(zeros_left, 7u) - 1u) * 15u + run));
            zeros_left -= run;
        }
    }
}
