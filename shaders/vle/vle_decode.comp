#version 450
// VLE decoder, one invocation per chunk: mirrors
// wavelane_core::vle::decode_chunk with a DecodeTable of 2^lut_bits entries.
// Every read is bounded by the buffers, every loop by the chunk's symbol
// count or the longest codeword; failures are reported, never trusted.
//
// Each invocation reads its own stretch of the stream, so its reads miss L1
// once per 32-byte sector, each at its own time, and a miss stalls the whole
// subgroup (the reading that fits the measurements). Every PREFETCH_PERIOD
// output words (a point all invocations of a subgroup reach together) each
// touches the next PREFETCH_SECTORS sectors ahead of its position, so that
// a subgroup's misses come together (faster on compressible data, no slower
// on random bytes: docs/history/vle.md). The output leaves as
// 16-byte vectors, four words of symbols at a time (faster than word stores).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "vle/vle.glsl"

#define MAX_LUT 2048u
#define PREFETCH_PERIOD 32u
#define PREFETCH_SECTORS 4u
#define SECTOR_WORDS 8u
#define LENGTHS 25u
layout(local_size_x = 64) in;
// The byte stream as little-endian words.
layout(set = 0, binding = 0) readonly buffer Data { uint data_words[]; };
// lut[2^lut_bits] (len << 8 | symbol), first[25], count[25], offset[25],
// limit[25], sorted[256]: wavelane_core::vle::DecodeTable's arrays.
layout(set = 0, binding = 1) readonly buffer Tables { uint tables[]; };
// n_chunks + 1 bit positions in data_words: chunk c is offsets[c]..offsets[c + 1].
layout(set = 0, binding = 2) readonly buffer Offsets { uint offsets[]; };
layout(set = 0, binding = 3) writeonly buffer Output { uint out_words[]; };
// The same buffer as 16-byte vectors (each element written through one view only).
layout(set = 0, binding = 3) writeonly buffer Output4 { uvec4 out4_words[]; };
// [0] error bits, [1] lowest failing chunk (starts at 0xffffffff).
layout(set = 0, binding = 4) buffer Control { uint control[]; };
layout(push_constant) uniform Params {
    uint n_chunks;
    uint chunk_symbols; // a multiple of 32
    uint n_symbols;
    uint lut_bits;      // 1..=11
    uint max_len;       // longest codeword, <= 24
} params;

shared uint s_lut[MAX_LUT];
shared uint s_first[LENGTHS];
shared uint s_count[LENGTHS];
shared uint s_offset[LENGTHS];
shared uint s_limit[LENGTHS];
shared uint s_sorted[256];

// One step of the binary search for the codeword length (see main).
#define BSEARCH_STEP \
    if (lo < hi) { \
        uint mid = (lo + hi) >> 1; \
        if (x < s_limit[mid]) hi = mid; else lo = mid + 1u; \
    }

uint load_word(uint i) {
    return i < data_words.length() ? vle_bswap(data_words[i]) : 0u;
}

// Bit reader state: position p, word w = p / 32 with its successor, o = p % 32.
struct DecodeState {
    uint p;
    uint w;
    uint o;
    uint cur;
    uint nxt;
};

// Decodes one symbol, advancing the state; false when the bits match no
// codeword or the codeword would end past `end`. Mirrors
// wavelane_core::vle::DecodeTable::lookup.
bool decode_symbol(inout DecodeState st, uint end, uint lut_bits, uint max_len, out uint sym) {
    uint top = st.o == 0u ? st.cur : (st.cur << st.o) | (st.nxt >> ((32u - st.o) & 31u));
    uint e = s_lut[top >> (32u - lut_bits)];
    sym = e & 0xffu;
    uint len = e >> 8;
    if (e == 0u) {
        // Longer codeword: the smallest length l whose limit exceeds the
        // next 24 bits (binary search, 5 steps cover lengths up to 32;
        // max_len + 1 means none).
        uint x = top >> 8;
        uint lo = lut_bits + 1u;
        uint hi = max_len + 1u;
        BSEARCH_STEP BSEARCH_STEP BSEARCH_STEP BSEARCH_STEP BSEARCH_STEP
        if (lo <= max_len) {
            uint d = (x >> (24u - lo)) - s_first[lo];
            if (d < s_count[lo]) {
                sym = s_sorted[min(s_offset[lo] + d, 255u)];
                len = lo;
            }
        }
    }
    if (len == 0u || end - st.p < len) {
        return false;
    }
    st.p += len;
    st.o += len;
    if (st.o >= 32u) {
        st.o -= 32u;
        st.w++;
        st.cur = st.nxt;
        st.nxt = load_word(st.w + 1u);
    }
    return true;
}

void fail(uint chunk, uint bits) {
    atomicOr(control[0], bits);
    atomicMin(control[1], chunk);
}

void main() {
    uint lid = gl_LocalInvocationIndex;
    uint lut_bits = clamp(params.lut_bits, 1u, 11u);
    uint lut_len = 1u << lut_bits;
    uint max_len = min(params.max_len, 24u);
    uint table_len = uint(tables.length());
    for (uint i = lid; i < lut_len; i += 64u) {
        s_lut[i] = i < table_len ? tables[i] : 0u;
    }
    for (uint i = lid; i < 4u * LENGTHS + 256u; i += 64u) {
        uint v = lut_len + i < table_len ? tables[lut_len + i] : 0u;
        if (i < LENGTHS) s_first[i] = v;
        else if (i < 2u * LENGTHS) s_count[i - LENGTHS] = v;
        else if (i < 3u * LENGTHS) s_offset[i - 2u * LENGTHS] = v;
        else if (i < 4u * LENGTHS) s_limit[i - 3u * LENGTHS] = v;
        else s_sorted[i - 4u * LENGTHS] = v;
    }
    barrier();

    uint c = gl_GlobalInvocationID.x;
    if (c >= params.n_chunks || c + 1u >= uint(offsets.length())) {
        return;
    }
    uint first_sym = c * params.chunk_symbols;
    if (first_sym >= params.n_symbols) {
        return;
    }
    uint count = min(params.chunk_symbols, params.n_symbols - first_sym);
    uint p = offsets[c];
    uint end = offsets[c + 1u];
    if (p > end || ((end - 1u) >> 5) >= uint(data_words.length()) && end > p) {
        fail(c, VLE_ERR_LENGTH);
        return;
    }
    DecodeState st;
    st.p = p;
    st.w = p >> 5;
    st.o = p & 31u;
    st.cur = load_word(st.w);
    st.nxt = load_word(st.w + 1u);
    uint out_len = uint(out_words.length());
    // 16 symbols (one 16-byte vector of output, four words written out
    // without a loop) per iteration: llvmpipe ends every loop of an
    // invocation after 65535 iterations in all, so this loop must stay
    // short; a cut-short loop shows up as p != end below. A chunk's output
    // starts at a multiple of 32 symbols, so the vectors are aligned.
    uint n_words = (count + 3u) / 4u;
    uint n_quads = (n_words + 3u) / 4u;
    bool ok = true;
    // The touched words, folded together: a load whose value is never used
    // would be removed by the compiler.
    uint touched = 0u;
    uint ahead = 0u;
    for (uint qi = 0u; qi < n_quads && ok; qi++) {
        uvec4 out4 = uvec4(0u);
        [[unroll]] for (uint k = 0u; k < 4u; k++) {
            uint base = (qi * 4u + k) * 4u;
            uint out_word = 0u;
            uint sym;
            if (ok && base < count) { ok = decode_symbol(st, end, lut_bits, max_len, sym); out_word |= sym; }
            if (ok && base + 1u < count) { ok = decode_symbol(st, end, lut_bits, max_len, sym); out_word |= sym << 8; }
            if (ok && base + 2u < count) { ok = decode_symbol(st, end, lut_bits, max_len, sym); out_word |= sym << 16; }
            if (ok && base + 3u < count) { ok = decode_symbol(st, end, lut_bits, max_len, sym); out_word |= sym << 24; }
            out4[k] = out_word;
        }
        if (qi % (PREFETCH_PERIOD / 4u) == 0u) {
            touched ^= ahead;
            ahead = 0u;
            [[unroll]] for (uint k = 1u; k <= PREFETCH_SECTORS; k++) {
                ahead ^= load_word(st.w + k * SECTOR_WORDS);
            }
        }
        // Only the chunk's own words (n_words), and only inside the buffer:
        // a whole vector where all four are, else word by word.
        uint at = (first_sym >> 2) + qi * 4u;
        if (ok) {
            if (qi * 4u + 3u < n_words && at + 3u < out_len) {
                out4_words[at >> 2] = out4;
            } else {
                [[unroll]] for (uint k = 0u; k < 4u; k++) {
                    if (qi * 4u + k < n_words && at + k < out_len) {
                        out_words[at + k] = out4[k];
                    }
                }
            }
        }
    }
    if (!ok) {
        fail(c, VLE_ERR_INVALID_CODE);
        return;
    }
    // No dispatch has this many chunks (the host's batches are far smaller),
    // so the store never happens; it only keeps the touches.
    if (params.n_chunks == 0xffffffffu) {
        control[1] = touched ^ ahead;
    }
    p = st.p;
    if (p != end) {
        fail(c, VLE_ERR_LENGTH);
    }
}
