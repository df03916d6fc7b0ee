// GVLE encoder body (docs/vle.md), included by vle_encode (inter-block
// scan over 64-bit atomics, VLE_SCAN_64 defined), vle_encode_pairs (the
// same, packing two codewords per step: only for codes of at most 16 bits)
// and vle_encode32 (the 32-bit fallback). Mirrors
// wavelane_core::vle::lanes (block assembly) and wavelane_core::vle::lookback
// (the scan); see those for the argument that the plain-store-then-OR
// protocol is race-free and that the waits end.
//
// Persistent workgroups take block-inputs of 4096 symbols from an atomic
// ticket. Per block: each invocation loads its 32 symbols (two uvec4), sums
// their codeword lengths; a workgroup scan gives its offset in the block-code;
// the inter-block scan gives the block's bit position P; the block-code is
// assembled in a small shared staging buffer pre-shifted by P mod 32 and
// copied out with coalesced stores, ORing the two words it shares with its
// neighbours; a block-code too long for the buffer (long codewords) is
// packed straight into the output instead. The buffer is small because
// shared memory per workgroup bounds how many workgroups an SM holds, which
// bounds this encoder's speed (docs/history/vle.md).
// Works for any subgroup size: only scan/scan.glsl uses subgroup operations,
// and it does not assume a size.

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_EXT_control_flow_attributes : require

#include "vle/vle.glsl"

#define WORKGROUP_SIZE VLE_WORKGROUP
#define SCAN_MAX_SUBGROUPS WORKGROUP_SIZE
layout(local_size_x = WORKGROUP_SIZE) in;

layout(set = 0, binding = 0) readonly buffer Input { uvec4 input_vecs[]; };
layout(set = 0, binding = 1) readonly buffer Table { uint codes[]; }; // 256 x (code << 8 | len)
layout(set = 0, binding = 2) buffer Output { uint out_words[]; };    // zeroed; byte stream
#ifdef VLE_SCAN_64
layout(set = 0, binding = 3) coherent buffer Cells { uint64_t cells[]; };
#else
layout(set = 0, binding = 3) coherent buffer Cells { uint cells[]; };
#endif
layout(set = 0, binding = 4) coherent buffer Control { uint control[]; };
layout(set = 0, binding = 5) writeonly buffer Index { uint chunk_index[]; }; // (lo, hi) per chunk

layout(push_constant) uniform Params {
    uint n_symbols;     // symbols in this batch
    uint n_blocks;      // ceil(n_symbols / 4096)
    uint chunk_symbols; // a multiple of 32
    uint base_bit;      // 0..31: first stream bit inside out_words[0]
    uint out_capacity;  // words in out_words
    uint n_chunks;      // entries (pairs) in chunk_index
    uint control_words; // words in control
    uint loop_budget;   // wait iterations per workgroup lifetime (see below)
} params;

shared uint s_table[256];
shared uint s_buf[VLE_STAGE_WORDS];
shared uint s_block;
shared uvec2 s_pos;
shared uint s_completer;     // this block's add completed its segment...
shared uint s_segment_total; // ...whose total is this (< 2^22 bits)

shared uint scan_sg_totals[SCAN_MAX_SUBGROUPS];
shared uint scan_wg_total;
// Each block's scan follows the loop top's barrier, and the previous
// block's scan was read before the barriers of its look-back.
#define SCAN_CALLS_SEPARATED
#include "scan/scan.glsl"

void vle_flag(uint bits) {
    atomicOr(control[VLE_CTRL_ERROR], bits);
}

// The waits below run in subgroup 0 only, in lock-step: one lane does each
// atomic read and broadcasts the value, so every loop condition is uniform
// across the subgroup and one atomic is issued per poll.
//
// Loop budget: llvmpipe/lavapipe ends every loop of an invocation once the
// invocation has run 65535 loop iterations in total (all loops together),
// without telling anyone. So the waits poll VLE_POLLS times per iteration,
// spend from `budget` (params.loop_budget per workgroup lifetime, counting
// the other loops of each block too), check their condition afterwards and
// report VLE_ERR_SPIN instead of using a value that is not ready. The host
// sets a budget below 65535 on CPU devices; on GPUs each block's waits have
// a bound of their own instead (VLE_LOOP_BUDGET below).
#define VLE_POLLS 16u
#define VLE_LOOPS_PER_BLOCK 64u // the non-wait loops of one block, generously

// Whether the waits draw on the workgroup's loop budget (CPU devices, whose
// loops llvmpipe cuts as above; the host sets 1) or each block's waits are
// bounded by VLE_SPIN_LIMIT polls of their own (GPUs; the host sets 0). A
// specialization constant, so that a GPU's pipeline carries none of the
// budget's bookkeeping, which costs a GPU a large part of the encoder's
// speed (docs/history/vle.md).
layout(constant_id = 0) const uint VLE_LOOP_BUDGET = 1u;

// Spends one wait iteration; false when the budget is gone.
bool vle_spend(inout uint budget) {
    if (budget == 0u) {
        return false;
    }
    budget--;
    return true;
}

#ifdef VLE_SCAN_64
// Element layout: 55-bit sum, 8-bit add counter (up to VLE_SEGMENT_BLOCKS),
// flag P in bit 63.
#define SUM_BITS 55
#define SUM_MASK ((uint64_t(1) << SUM_BITS) - uint64_t(1))
#define FLAG_P (uint64_t(1) << 63)

uint add_count(uint64_t v) {
    return uint(v >> SUM_BITS) & 0xffu;
}

uint64_t poll(uint at) {
    uvec2 v = uvec2(0u);
    if (subgroupElect()) {
        uint64_t x = atomicAdd(cells[at], uint64_t(0));
        v = uvec2(uint(x), uint(x >> 32));
    }
    v = subgroupBroadcastFirst(v);
    return uint64_t(v.x) | (uint64_t(v.y) << 32);
}

bool cell_ready(uint64_t v, uint count, bool or_prefix) {
    return add_count(v) == count || (or_prefix && v >= FLAG_P);
}

// Polls cells[at] until it has counted `count` adds (or holds a published
// prefix, if `or_prefix`); sets `ok` to false if the budget ran out first.
uint64_t wait_cell(uint at, uint count, bool or_prefix, inout uint budget, inout bool ok) {
    uint64_t v = poll(at);
    bool ready = cell_ready(v, count, or_prefix);
    while (!ready && vle_spend(budget)) {
        [[unroll]] for (uint k = 0u; k < VLE_POLLS; k++) {
            if (!ready) {
                v = poll(at);
                ready = cell_ready(v, count, or_prefix);
            }
        }
    }
    ok = ok && ready;
    return v;
}

// The block's exclusive bit position (GVLE inter-block scan, 64-bit elements:
// sum, add counter, flag P). Uniform control flow: contains barriers.
uvec2 block_position(uint block, uint block_bits, inout uint budget) {
    uint lid = gl_LocalInvocationIndex;
    uint seg = block / VLE_SEGMENT_BLOCKS;
    uint j = block % VLE_SEGMENT_BLOCKS;
    uint add_end = min(VLE_SEGMENT_BLOCKS, params.n_blocks - seg * VLE_SEGMENT_BLOCKS);
    if (lid >= j && lid < add_end) {
        uint64_t old = atomicAdd(cells[seg * VLE_SEGMENT_BLOCKS + lid],
                                 (uint64_t(1) << SUM_BITS) | uint64_t(block_bits));
        if (lid == VLE_SEGMENT_BLOCKS - 1u && add_count(old) == VLE_SEGMENT_BLOCKS - 1u) {
            s_completer = 1u;
            s_segment_total = uint(old & SUM_MASK) + block_bits;
        }
    }
    barrier();
    if (gl_SubgroupID == 0u) {
        bool ok = true;
        uint64_t in_seg = 0;
        uint64_t before = 0;
        if (j > 0u) {
            in_seg = wait_cell(seg * VLE_SEGMENT_BLOCKS + j - 1u, j, false, budget, ok) & SUM_MASK;
        }
        // Look back over segments seg-1, ..., 0: add complete totals until a
        // published inclusive prefix (flag P) or segment 0.
        bool done = seg == 0u;
        for (uint s = seg; !done && ok && vle_spend(budget);) {
            s--;
            uint64_t v = wait_cell(s * VLE_SEGMENT_BLOCKS + VLE_SEGMENT_BLOCKS - 1u,
                                   VLE_SEGMENT_BLOCKS, true, budget, ok);
            before += v & SUM_MASK;
            done = v >= FLAG_P || s == 0u;
        }
        ok = ok && done;
        if (subgroupElect()) {
            if (!ok) {
                vle_flag(VLE_ERR_SPIN);
            } else if (s_completer != 0u && seg > 0u) {
                atomicExchange(cells[seg * VLE_SEGMENT_BLOCKS + VLE_SEGMENT_BLOCKS - 1u],
                               FLAG_P | (before + uint64_t(s_segment_total)));
            }
            uint64_t p = before + in_seg;
            s_pos = uvec2(uint(p), uint(p >> 32));
        }
    }
    barrier();
    return s_pos;
}
#else
#define SUM_BITS 24u
#define SUM_MASK ((1u << SUM_BITS) - 1u)
#define PREFIX_VALID (1u << 31)

uint poll_cell(uint at) {
    uint v = 0u;
    if (subgroupElect()) {
        v = atomicOr(cells[at], 0u);
    }
    return subgroupBroadcastFirst(v);
}

// Both words of segment s's published prefix, read by one lane.
uvec2 poll_prefix(uint s) {
    uvec2 v = uvec2(0u);
    uint pre = VLE_CTRL_PREFIX + 2u * s;
    if (subgroupElect() && pre + 1u < params.control_words) {
        v = uvec2(atomicOr(control[pre], 0u), atomicOr(control[pre + 1u], 0u));
    }
    return subgroupBroadcastFirst(v);
}

// Segment s's contribution to a look-back: (ready, published, value).
bool segment_ready(uint s, out bool published, out uvec2 value) {
    uvec2 pre = poll_prefix(s);
    published = (pre.x & pre.y & PREFIX_VALID) != 0u;
    if (published) {
        uint lo = pre.x & ~PREFIX_VALID;
        uint hi = pre.y & ~PREFIX_VALID;
        value = uvec2(lo | (hi << 31), hi >> 1);
        return true;
    }
    uint v = poll_cell(s * VLE_SEGMENT_BLOCKS + VLE_SEGMENT_BLOCKS - 1u);
    value = uvec2(v & SUM_MASK, 0u);
    return (v >> SUM_BITS) == VLE_SEGMENT_BLOCKS;
}

// The 32-bit fallback: 24-bit in-segment sums with an 8-bit counter; the
// published inclusive prefix of segment s is two write-once words
// control[VLE_CTRL_PREFIX + 2s .. +1], 31 payload bits each plus a valid bit,
// so a reader never needs ordering between two memory locations.
uvec2 block_position(uint block, uint block_bits, inout uint budget) {
    uint lid = gl_LocalInvocationIndex;
    uint seg = block / VLE_SEGMENT_BLOCKS;
    uint j = block % VLE_SEGMENT_BLOCKS;
    uint add_end = min(VLE_SEGMENT_BLOCKS, params.n_blocks - seg * VLE_SEGMENT_BLOCKS);
    if (lid >= j && lid < add_end) {
        uint old = atomicAdd(cells[seg * VLE_SEGMENT_BLOCKS + lid], (1u << SUM_BITS) | block_bits);
        if (lid == VLE_SEGMENT_BLOCKS - 1u && (old >> SUM_BITS) == VLE_SEGMENT_BLOCKS - 1u) {
            s_completer = 1u;
            s_segment_total = (old & SUM_MASK) + block_bits;
        }
    }
    barrier();
    if (gl_SubgroupID == 0u) {
        bool ok = true;
        uint in_seg = 0u;
        uvec2 before = uvec2(0u);
        if (j > 0u) {
            uint at = seg * VLE_SEGMENT_BLOCKS + j - 1u;
            uint v = poll_cell(at);
            bool ready = (v >> SUM_BITS) == j;
            while (!ready && vle_spend(budget)) {
                [[unroll]] for (uint k = 0u; k < VLE_POLLS; k++) {
                    if (!ready) {
                        v = poll_cell(at);
                        ready = (v >> SUM_BITS) == j;
                    }
                }
            }
            ok = ready;
            in_seg = v & SUM_MASK;
        }
        bool done = seg == 0u;
        for (uint s = seg; !done && ok && vle_spend(budget);) {
            s--;
            bool published;
            uvec2 value;
            bool ready = segment_ready(s, published, value);
            while (!ready && vle_spend(budget)) {
                [[unroll]] for (uint k = 0u; k < VLE_POLLS; k++) {
                    if (!ready) {
                        ready = segment_ready(s, published, value);
                    }
                }
            }
            ok = ready;
            before = vle_add64(before, value);
            done = published || s == 0u;
        }
        ok = ok && done;
        if (subgroupElect()) {
            uint pre = VLE_CTRL_PREFIX + 2u * seg;
            if (!ok) {
                vle_flag(VLE_ERR_SPIN);
            } else if (s_completer != 0u && seg > 0u && pre + 1u < params.control_words) {
                uvec2 p = vle_add64(before, s_segment_total);
                atomicExchange(control[pre], PREFIX_VALID | (p.x & ~PREFIX_VALID));
                atomicExchange(control[pre + 1u],
                               PREFIX_VALID | (((p.x >> 31) | (p.y << 1)) & ~PREFIX_VALID));
            }
            s_pos = vle_add64(before, in_seg);
        }
    }
    barrier();
    return s_pos;
}
#endif

void main() {
    uint lid = gl_LocalInvocationIndex;
    uint t = scan_position(); // this invocation's 32 symbols within the block
    for (uint i = lid; i < 256u; i += VLE_WORKGROUP) {
        s_table[i] = codes[i];
    }
    uint n_vecs = input_vecs.length();
    uint budget = params.loop_budget;
    // Every iteration takes a fresh ticket; tickets only grow, so this ends.
    while (true) {
        // One barrier: every invocation read the previous s_block and
        // s_completer before the previous block's look-back barriers, and
        // finishes its copy-out (the last reads of s_buf) before it reaches
        // this barrier, which every later write of s_buf follows.
        if (lid == 0u) {
            s_block = atomicAdd(control[VLE_CTRL_TICKET], 1u);
            s_completer = 0u;
        }
        barrier();
        uint block = s_block;
        if (block >= params.n_blocks) {
            break;
        }
        uint first = block * VLE_BLOCK_SYMBOLS + t * VLE_THREAD_SYMBOLS;
        uint count = first < params.n_symbols ? min(params.n_symbols - first, VLE_THREAD_SYMBOLS) : 0u;
        // The thread-input: VLE_THREAD_SYMBOLS / 16 uvec4 loads.
        uint words[VLE_THREAD_SYMBOLS / 4u];
        [[unroll]] for (uint v = 0u; v < VLE_THREAD_SYMBOLS / 16u; v++) {
            uvec4 x = uvec4(0u);
            if (count > 0u && first / 16u + VLE_THREAD_SYMBOLS / 16u - 1u < n_vecs) {
                x = input_vecs[first / 16u + v];
            }
            words[4u * v] = x.x;
            words[4u * v + 1u] = x.y;
            words[4u * v + 2u] = x.z;
            words[4u * v + 3u] = x.w;
        }

        // Codeword lengths (entries kept in registers for the packing pass).
        // Invocations with a full thread-input (all but the last one with
        // symbols) skip the per-symbol range test.
        uint entry[VLE_THREAD_SYMBOLS];
        uint bits = 0u;
        uint missing = 0u;
        if (count == VLE_THREAD_SYMBOLS) {
            [[unroll]] for (uint i = 0u; i < VLE_THREAD_SYMBOLS; i++) {
                entry[i] = s_table[(words[i >> 2] >> ((i & 3u) * 8u)) & 0xffu];
                uint len = entry[i] & 0xffu;
                missing |= len - 1u; // bit 31 set only where len == 0
                bits += len;
            }
        } else {
            [[unroll]] for (uint i = 0u; i < VLE_THREAD_SYMBOLS; i++) {
                uint e = s_table[(words[i >> 2] >> ((i & 3u) * 8u)) & 0xffu];
                entry[i] = i < count ? e : 0u;
                missing |= i < count ? (e & 0xffu) - 1u : 0u;
                bits += entry[i] & 0xffu;
            }
        }
        if ((missing & 0x80000000u) != 0u) {
            vle_flag(VLE_ERR_NO_CODE);
        }

        uint block_bits;
        uint off = workgroup_exclusive_scan(bits, block_bits);

        // CPU devices: what is left of the workgroup's budget after this
        // block's other loops; GPUs: a bound of this block's waits alone.
        budget = VLE_LOOP_BUDGET != 0u
            ? (budget > VLE_LOOPS_PER_BLOCK ? budget - VLE_LOOPS_PER_BLOCK : 0u)
            : VLE_SPIN_LIMIT / VLE_POLLS;
        uvec2 p = vle_add64(block_position(block, block_bits, budget), params.base_bit);
        uint lead = p.x & 31u;
        uint p_word = (p.x >> 5) | (p.y << 27);

        if (count > 0u && first % params.chunk_symbols == 0u) {
            uint c = first / params.chunk_symbols;
            if (c < params.n_chunks) {
                uvec2 at = vle_add64(p, off);
                chunk_index[2u * c] = at.x;
                chunk_index[2u * c + 1u] = at.y;
            }
        }

        // Packing. The pending bits are the low `n` bits of a 64-bit
        // accumulator (n < 32 between symbols): shift in each codeword (a
        // zero-length entry is a no-op) and once 32 or more are pending,
        // emit the oldest 32 as word `word` (EMIT), then count on.
        uint pos = lead + off;
        uint n = pos & 31u; // zero bits standing for the previous invocation's
#ifdef VLE_SCAN_64 // shaderInt64 is there too
#define VLE_ACC uint64_t acc = 0;
#define VLE_ACC_SHIFT_IN(len, code) acc = (acc << (len)) | uint64_t(code);
#define VLE_ACC_BITS(n) uint(acc >> (n))
#define VLE_ACC_TAIL(n) ((n) == 0u ? 0u : uint(acc << (32u - (n))))
#else
#define VLE_ACC uvec2 acc = uvec2(0u); /* (lo, hi) */
#define VLE_ACC_SHIFT_IN(len, code) \
    acc.y = (acc.y << (len)) | ((acc.x >> 1) >> (31u - (len))); \
    acc.x = (acc.x << (len)) | (code);
#define VLE_ACC_BITS(n) ((acc.x >> (n)) | ((acc.y << 1) << (31u - (n))))
#define VLE_ACC_TAIL(n) (acc.x << ((32u - (n)) & 31u))
#endif
// One codeword (table entry E) into the accumulator; EMIT stores `v` as
// word `word` when one is complete.
#define VLE_PACK_ONE(E, EMIT) { \
            uint e = (E); \
            uint len = e & 0xffu; \
            VLE_ACC_SHIFT_IN(len, e >> 8) \
            n += len; \
            if (n >= 32u) { \
                n -= 32u; \
                uint v = VLE_ACC_BITS(n); \
                EMIT; \
                word++; \
            } \
        }

        if (lead + block_bits <= VLE_STAGE_WORDS * 32u) {
            // The usual case: the block-code fits the shared staging buffer
            // (up to 8 bits per symbol). Phase 1: plain-store every
            // completed word.
            bool last_writer = count > 0u
                && (t == VLE_WORKGROUP - 1u || first + VLE_THREAD_SYMBOLS >= params.n_symbols);
            uint word = pos >> 5;
            VLE_ACC
#ifdef VLE_PAIRS
            // Two codewords per accumulator step: with no codeword longer
            // than 16 bits a pair is at most 32 bits, so one shift-in and at
            // most one emit per pair, half the dependent steps (faster on
            // GPUs, docs/history/vle.md). Same bits in the same order.
            // (The pair's code does not fit an entry's 24 code bits, so the
            // step is written out rather than through VLE_PACK_ONE.)
            [[unroll]] for (uint i = 0u; i < VLE_THREAD_SYMBOLS; i += 2u) {
                uint second = entry[i + 1u] & 0xffu;
                uint len = (entry[i] & 0xffu) + second;
                uint code = ((entry[i] >> 8) << second) | (entry[i + 1u] >> 8);
                VLE_ACC_SHIFT_IN(len, code)
                n += len;
                if (n >= 32u) {
                    n -= 32u;
                    uint v = VLE_ACC_BITS(n);
                    if (word < VLE_STAGE_WORDS) {
                        s_buf[word] = v;
                    }
                    word++;
                }
            }
#else
            [[unroll]] for (uint i = 0u; i < VLE_THREAD_SYMBOLS; i++) {
                VLE_PACK_ONE(entry[i], if (word < VLE_STAGE_WORDS) s_buf[word] = v)
            }
#endif
            uint tail = VLE_ACC_TAIL(n);
            if (last_writer && n > 0u && word < VLE_STAGE_WORDS) {
                s_buf[word] = tail;
            }
            barrier();
            // Phase 2: OR the incomplete last word into the next invocation's
            // first (every invocation with 32 symbols completes a word).
            if (count > 0u && !last_writer && n > 0u && word < VLE_STAGE_WORDS) {
                s_buf[word] |= tail;
            }
            barrier();
            // Coalesced copy; the first and last words are shared with the
            // neighbouring blocks.
            uint n_words = (lead + block_bits + 31u) >> 5;
            for (uint w = lid; w < n_words; w += VLE_WORKGROUP) {
                uint g = p_word + w;
                if (g >= params.out_capacity || w >= VLE_STAGE_WORDS) {
                    vle_flag(VLE_ERR_BOUNDS);
                    continue;
                }
                uint v = vle_bswap(s_buf[w]);
                if (w == 0u || w + 1u == n_words) {
                    atomicOr(out_words[g], v);
                } else {
                    out_words[g] = v;
                }
            }
        } else {
            // A block-code longer than the staging buffer (long codewords):
            // pack straight into the output. Words this invocation owns
            // alone are plain-stored; its first word when it starts inside
            // one, and its last when it ends inside one, are shared with
            // the neighbours and ORed in.
            // A rolled loop that reads the symbols again: this path is rare,
            // and a second unrolled copy of the packing would make the shader
            // half as large again (instruction cache).
            uint word = p_word + (pos >> 5);
            uint head_word = n != 0u ? word : 0xffffffffu;
            VLE_ACC
            for (uint i = 0u; i < count; i++) {
                uint at = first + i; // < n_symbols
                uvec4 x = at / 16u < n_vecs ? input_vecs[at / 16u] : uvec4(0u);
                uint sym = (x[(at / 4u) % 4u] >> ((at % 4u) * 8u)) & 0xffu;
                VLE_PACK_ONE(s_table[sym],
                             if (word >= params.out_capacity) vle_flag(VLE_ERR_BOUNDS);
                             else if (word == head_word) atomicOr(out_words[word], vle_bswap(v));
                             else out_words[word] = vle_bswap(v))
            }
            uint tail = VLE_ACC_TAIL(n);
            if (count > 0u && n > 0u) {
                if (word < params.out_capacity) atomicOr(out_words[word], vle_bswap(tail));
                else vle_flag(VLE_ERR_BOUNDS);
            }
        }
        if (lid == 0u && block + 1u == params.n_blocks) {
            uvec2 total = vle_add64(p, block_bits);
            control[VLE_CTRL_TOTAL_LO] = total.x;
            control[VLE_CTRL_TOTAL_HI] = total.y;
        }
    }
}
