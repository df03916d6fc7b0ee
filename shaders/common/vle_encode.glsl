// GVLE-style encoder body, included by vle_encode.comp (inter-block scan
// over 64-bit atomics, VLE_SCAN_64 defined) and vle_encode32.comp (the
// 32-bit fallback). Mirrors wavelane_core::vle::lanes (block assembly) and
// wavelane_core::vle::lookback (the scan); see those for the argument that
// the plain-store-then-OR protocol is race-free and that the waits end.
//
// Persistent workgroups take blocks of GROUPS sub-blocks from an atomic
// ticket. Per block: each invocation loads 32 symbols (two uvec4) of every
// sub-block (coalesced: invocation t owns the t-th 32 symbols of each) and
// sums their codeword lengths per sub-block; one workgroup scan of all
// sub-blocks gives every invocation's offset and every sub-block's offset;
// one decoupled look-back per block gives the block's bit position P. Then,
// sub-block by sub-block, the code is assembled in shared memory pre-shifted
// by its position mod 32 and copied out with coalesced stores, ORing the two
// words it shares with its neighbours. Larger blocks amortise the ticket,
// the scan barriers and the look-back (its atomics and its latency) over
// more bytes.
//
// Works for any subgroup size that divides the workgroup size.

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_control_flow_attributes : require

#include "common/vle.glsl"

// Specialization constants, set by wavelane::vle::gpu (GpuVle::encode_batch)
// so that benchmarks can sweep them without rebuilding.
layout(local_size_x_id = 0) in;                  // invocations per workgroup (power of two)
layout(constant_id = 1) const uint GROUPS = 4u;        // sub-blocks per block (1..VLE_MAX_GROUPS)
layout(constant_id = 2) const uint TABLE_COPIES = 1u;  // copies of the code table in shared memory
layout(constant_id = 3) const uint BUFFERS = 2u;       // shared sub-block buffers (1 or 2)
layout(constant_id = 4) const uint POLL_RMW = 0u;      // 1: poll with atomic read-modify-writes

#define WG gl_WorkGroupSize.x
#define SUB_SYMBOLS (WG * VLE_THREAD_SYMBOLS)
#define SUB_WORDS (WG * VLE_MAX_CODE_LEN + 1u) // SUB_SYMBOLS * 24 / 32 + 1: longest sub-block-code + pre-shift

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
    uint n_blocks;      // ceil(n_symbols / (SUB_SYMBOLS * GROUPS))
    uint chunk_symbols; // a multiple of 32
    uint base_bit;      // 0..31: first stream bit inside out_words[0]
    uint out_capacity;  // words in out_words
    uint n_chunks;      // entries (pairs) in chunk_index
    uint loop_budget;   // loop iterations per workgroup lifetime (see below)
} params;

// Table entry of symbol s: copy (lane mod TABLE_COPIES) of it, so that with
// 32 copies every lane of a 32-wide subgroup reads its own bank.
shared uint s_table[256u * TABLE_COPIES];
shared uint s_buf[BUFFERS * SUB_WORDS];
// Per sub-block and subgroup: the subgroup's total, then its exclusive prefix
// (subgroups have at least 4 invocations; the host checks).
shared uint s_sg_totals[GROUPS * (WG / 4u)];
shared uint s_sub_offset[VLE_MAX_GROUPS + 1u]; // sub-block offsets in the block-code; [GROUPS] = total
shared uint s_block;
shared uvec2 s_pos;

void vle_flag(uint bits) {
    atomicOr(control[VLE_CTRL_ERROR], bits);
}

// Loop budget: llvmpipe/lavapipe ends every loop of an invocation once the
// invocation has run 65535 loop iterations in total (all loops together),
// without telling anyone. So every look-back iteration spends from `budget`
// (params.loop_budget per workgroup lifetime, minus LOOPS_PER_BLOCK for
// the other loops of each block) and polls VLE_POLLS times; a wait whose
// budget runs out reports VLE_ERR_SPIN instead of using a value that is not
// ready (the host retries). The host sets a budget below 65535 on CPU
// devices and unlimited on GPUs.
#define VLE_POLLS 16u
// The non-wait loops of one block, generously: per sub-block the copy-out
// (SUB_WORDS / WG + 1 <= 25 iterations) and the scan of subgroup totals.
#define LOOPS_PER_BLOCK (64u + 64u * GROUPS)

// Spends one loop iteration; false when the budget is gone.
bool vle_spend(inout uint budget) {
    if (budget == 0u) {
        return false;
    }
    budget--;
    return true;
}

// Status states of the look-back (wavelane_core::vle::lookback::BlockState).
#define ST_PENDING 0u
#define ST_AGGREGATE 1u
#define ST_PREFIX 2u

#ifdef VLE_SCAN_64
#define AGGREGATE_64 (uint64_t(1) << 62)
#define PREFIX_64 (uint64_t(1) << 63)
#define VALUE_MASK_64 (AGGREGATE_64 - uint64_t(1))

uint64_t load_cell(uint at) {
    if (POLL_RMW != 0u) {
        return atomicAdd(cells[at], uint64_t(0));
    }
    return atomicLoad(cells[at], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}

void publish_aggregate(uint block, uint bits) {
    atomicExchange(cells[block], (block == 0u ? PREFIX_64 : AGGREGATE_64) | uint64_t(bits));
}

void publish_prefix(uint block, uvec2 prefix) {
    atomicExchange(cells[block], PREFIX_64 | uint64_t(prefix.x) | (uint64_t(prefix.y) << 32));
}

// Block b's status: (state, value as lo/hi).
uint read_status(uint b, out uvec2 value) {
    uint64_t v = load_cell(b);
    uint64_t x = v & VALUE_MASK_64;
    value = uvec2(uint(x), uint(x >> 32));
    return (v & PREFIX_64) != uint64_t(0) ? ST_PREFIX
        : (v & AGGREGATE_64) != uint64_t(0) ? ST_AGGREGATE : ST_PENDING;
}
#else
// cells[b]: VLE_VALID | aggregate; cells[n_blocks + 2b], [.. + 1]: the
// inclusive prefix's low and high 31 bits, each with VLE_VALID (write-once
// words: a reader needs no ordering between locations).
#define VLE_VALID (1u << 31)

uint load_cell(uint at) {
    if (POLL_RMW != 0u) {
        return atomicOr(cells[at], 0u);
    }
    return atomicLoad(cells[at], gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
}

void publish_prefix(uint block, uvec2 p) {
    uint at = params.n_blocks + 2u * block;
    atomicExchange(cells[at], VLE_VALID | (p.x & ~VLE_VALID));
    atomicExchange(cells[at + 1u], VLE_VALID | (((p.x >> 31) | (p.y << 1)) & ~VLE_VALID));
}

void publish_aggregate(uint block, uint bits) {
    atomicExchange(cells[block], VLE_VALID | bits);
    if (block == 0u) {
        publish_prefix(0u, uvec2(bits, 0u));
    }
}

uint read_status(uint b, out uvec2 value) {
    uint at = params.n_blocks + 2u * b;
    uint lo = load_cell(at);
    uint hi = load_cell(at + 1u);
    if ((lo & hi & VLE_VALID) != 0u) {
        lo &= ~VLE_VALID;
        hi &= ~VLE_VALID;
        value = uvec2(lo | (hi << 31), hi >> 1);
        return ST_PREFIX;
    }
    uint a = load_cell(b);
    value = uvec2(a & ~VLE_VALID, 0u);
    return (a & VLE_VALID) != 0u ? ST_AGGREGATE : ST_PENDING;
}
#endif

// One look-back window, run by a whole subgroup: lane k reads block
// end - 1 - k (blocks before 0 count as a prefix of 0). If no block up to
// the nearest prefix is pending, adds their aggregates and that prefix to
// `acc` and sets `done` (a prefix was met) or moves `end` back by a window;
// otherwise changes nothing (a spin). Everything it changes is uniform.
void look_back_window(inout uint end, inout uvec2 acc, inout bool done) {
    uint lane = gl_SubgroupInvocationID;
    uvec2 value = uvec2(0u);
    uint state = ST_PREFIX;
    if (lane < end && end - 1u - lane < params.n_blocks) {
        state = read_status(end - 1u - lane, value);
    }
    uvec4 prefixes = subgroupBallot(state == ST_PREFIX);
    uint nearest = subgroupBallotBitCount(prefixes) > 0u ? subgroupBallotFindLSB(prefixes)
                                                         : gl_SubgroupSize;
    if (subgroupAny(state == ST_PENDING && lane < nearest)) {
        return;
    }
    // An aggregate is at most 24 x 1024 x 32 x 8 bits < 2^23: the sum over a
    // subgroup (at most 128 lanes) fits a word.
    uint aggregates = subgroupAdd(lane < nearest ? value.x : 0u);
    acc = vle_add64(acc, aggregates);
    if (nearest < gl_SubgroupSize) {
        uvec2 prefix = uvec2(subgroupAdd(lane == nearest ? value.x : 0u),
                             subgroupAdd(lane == nearest ? value.y : 0u));
        acc = vle_add64(acc, prefix);
        done = true;
    } else {
        end -= gl_SubgroupSize;
    }
}

// The block's exclusive bit position (decoupled look-back). Uniform control
// flow: contains a barrier.
uvec2 block_position(uint block, uint block_bits, inout uint budget) {
    if (gl_SubgroupID == 0u) {
        if (subgroupElect()) {
            publish_aggregate(block, block_bits);
        }
        uvec2 exclusive = uvec2(0u);
        bool ok = true;
        bool done = block == 0u;
        uint end = block;
        // Each iteration evaluates up to VLE_POLLS windows (spins or moves).
        while (!done && ok) {
            ok = vle_spend(budget);
            [[unroll]] for (uint k = 0u; k < VLE_POLLS; k++) {
                if (ok && !done) {
                    look_back_window(end, exclusive, done);
                }
            }
        }
        if (subgroupElect()) {
            if (!ok) {
                vle_flag(VLE_ERR_SPIN);
            } else if (block > 0u) {
                publish_prefix(block, vle_add64(exclusive, block_bits));
            }
            s_pos = exclusive;
        }
    }
    barrier();
    return s_pos;
}

// Word index and shift of symbol i (0..31) of the 32 loaded as (a, b).
uint symbol_of(uvec4 a, uvec4 b, uint i) {
    uvec4 v = i < 16u ? a : b;
    uint w = v[(i >> 2) & 3u];
    return (w >> ((i & 3u) * 8u)) & 0xffu;
}

void main() {
    uint lid = gl_LocalInvocationIndex;
    // This invocation's 32 symbols of each sub-block: by (subgroup, lane),
    // not gl_LocalInvocationIndex, because Vulkan does not promise that
    // subgroups are made of consecutive local invocations.
    uint t = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    uint copy = gl_SubgroupInvocationID % TABLE_COPIES;
    uint budget = params.loop_budget;
    for (uint i = lid; i < 256u * TABLE_COPIES; i += WG) {
        s_table[i] = codes[i / TABLE_COPIES];
        budget = budget > 0u ? budget - 1u : 0u;
    }
    uint n = params.n_symbols;
    uint n_vecs = input_vecs.length();
    uint nsg = gl_NumSubgroups;
    uint sg = gl_SubgroupID;
    // Every iteration takes a fresh ticket; tickets only grow, so this ends.
    while (true) {
        barrier(); // the previous block is fully copied out
        if (lid == 0u) {
            s_block = atomicAdd(control[VLE_CTRL_TICKET], 1u);
        }
        barrier();
        uint block = s_block;
        if (block >= params.n_blocks) {
            break;
        }
        budget = budget > LOOPS_PER_BLOCK ? budget - LOOPS_PER_BLOCK : 0u;
        uint block_first = block * (SUB_SYMBOLS * GROUPS);

        // Load every sub-block's 32 symbols and sum their codeword lengths;
        // the symbols stay in registers for the packing rounds.
        uvec4 in_a[VLE_MAX_GROUPS];
        uvec4 in_b[VLE_MAX_GROUPS];
        uint bits[VLE_MAX_GROUPS];
        uint incl[VLE_MAX_GROUPS];
        bool missing = false;
        [[unroll]] for (uint g = 0u; g < VLE_MAX_GROUPS; g++) {
            in_a[g] = uvec4(0u);
            in_b[g] = uvec4(0u);
            bits[g] = 0u;
            incl[g] = 0u;
            if (g < GROUPS) {
                uint first = block_first + (g * WG + t) * VLE_THREAD_SYMBOLS;
                uint count = first < n ? min(n - first, VLE_THREAD_SYMBOLS) : 0u;
                if (count > 0u && first / 16u + 1u < n_vecs) {
                    in_a[g] = input_vecs[first / 16u];
                    in_b[g] = input_vecs[first / 16u + 1u];
                }
                uint sum = 0u;
                [[unroll]] for (uint i = 0u; i < VLE_THREAD_SYMBOLS; i++) {
                    uint sym = symbol_of(in_a[g], in_b[g], i);
                    uint len = s_table[sym * TABLE_COPIES + copy] & 0xffu;
                    bool used = i < count;
                    missing = missing || (used && len == 0u);
                    sum += used ? len : 0u;
                }
                bits[g] = sum;
                // Workgroup scan, step 1: subgroup scans and totals.
                incl[g] = subgroupInclusiveAdd(sum);
                uint sg_sum = subgroupAdd(sum);
                if (subgroupElect()) {
                    s_sg_totals[g * nsg + sg] = sg_sum;
                }
            }
        }
        if (missing) {
            vle_flag(VLE_ERR_NO_CODE);
        }
        barrier();
        // Step 2: subgroup 0 scans the subgroup totals of every sub-block
        // (looping when there are more subgroups than lanes), then the
        // sub-block totals.
        if (sg == 0u) {
            uint running = 0u;
            [[unroll]] for (uint g = 0u; g < VLE_MAX_GROUPS; g++) {
                if (g < GROUPS) {
                    if (subgroupElect()) {
                        s_sub_offset[g] = running;
                    }
                    for (uint base = 0u; base < nsg; base += gl_SubgroupSize) {
                        uint idx = base + gl_SubgroupInvocationID;
                        uint v = idx < nsg ? s_sg_totals[g * nsg + idx] : 0u;
                        uint e = subgroupExclusiveAdd(v);
                        uint c = subgroupAdd(v);
                        if (idx < nsg) {
                            s_sg_totals[g * nsg + idx] = running + e;
                        }
                        running += c;
                    }
                }
            }
            if (subgroupElect()) {
                s_sub_offset[GROUPS] = running;
            }
        }
        barrier();
        uint block_bits = s_sub_offset[GROUPS];

        uvec2 p = vle_add64(block_position(block, block_bits, budget), params.base_bit);

        // Sub-block rounds: pack, OR the leftovers, copy out.
        [[unroll]] for (uint g = 0u; g < VLE_MAX_GROUPS; g++) {
            if (g < GROUPS) {
                uint sub_start = s_sub_offset[g];
                uint sub_bits = s_sub_offset[g + 1u] - sub_start;
                uvec2 at = vle_add64(p, sub_start);
                uint lead = at.x & 31u;
                uint at_word = (at.x >> 5) | (at.y << 27);
                // This invocation's offset in the sub-block-code.
                uint off = s_sg_totals[g * nsg + sg] - sub_start + incl[g] - bits[g];
                uint buf = (BUFFERS == 2u ? (g & 1u) : 0u) * SUB_WORDS;

                uint first = block_first + (g * WG + t) * VLE_THREAD_SYMBOLS;
                uint count = first < n ? min(n - first, VLE_THREAD_SYMBOLS) : 0u;
                if (count > 0u && first % params.chunk_symbols == 0u) {
                    uint c = first / params.chunk_symbols;
                    if (c < params.n_chunks) {
                        uvec2 chunk_at = vle_add64(at, off);
                        chunk_index[2u * c] = chunk_at.x;
                        chunk_index[2u * c + 1u] = chunk_at.y;
                    }
                }

                // Phase 1: pack, plain-storing each completed word.
                bool last_writer = count > 0u
                    && (t == WG - 1u || first + VLE_THREAD_SYMBOLS >= n);
                uint pos = lead + off;
                uint word = pos >> 5;
                uint fill = pos & 31u;
                uint acc = 0u;
                [[unroll]] for (uint i = 0u; i < VLE_THREAD_SYMBOLS; i++) {
                    uint sym = symbol_of(in_a[g], in_b[g], i);
                    uint entry = s_table[sym * TABLE_COPIES + copy];
                    uint len = i < count ? entry & 0xffu : 0u;
                    uint code = entry >> 8;
                    if (len != 0u) {
                        uint free_bits = 32u - fill;
                        if (len < free_bits) {
                            acc |= code << (free_bits - len);
                            fill += len;
                        } else {
                            uint rem = len - free_bits; // 0..23
                            acc |= code >> rem;
                            if (word < SUB_WORDS) s_buf[buf + word] = acc;
                            word++;
                            acc = rem == 0u ? 0u : code << ((32u - rem) & 31u);
                            fill = rem;
                        }
                    }
                }
                if (last_writer && fill > 0u && word < SUB_WORDS) {
                    s_buf[buf + word] = acc;
                }
                barrier();
                // Phase 2: OR the incomplete last word into the next invocation's first.
                if (count > 0u && !last_writer && fill > 0u && word < SUB_WORDS) {
                    s_buf[buf + word] |= acc;
                }
                barrier();

                // Coalesced copy; the first and last words are shared with
                // the neighbouring sub-blocks. An empty sub-block (past the
                // input's end) writes nothing.
                uint n_words = sub_bits == 0u ? 0u : (lead + sub_bits + 31u) >> 5;
                for (uint w = lid; w < n_words; w += WG) {
                    uint gw = at_word + w;
                    if (gw >= params.out_capacity || w >= SUB_WORDS) {
                        vle_flag(VLE_ERR_BOUNDS);
                        continue;
                    }
                    uint v = vle_bswap(s_buf[buf + w]);
                    if (w == 0u || w + 1u == n_words) {
                        atomicOr(out_words[gw], v);
                    } else {
                        out_words[gw] = v;
                    }
                }
                if (BUFFERS == 1u) {
                    barrier(); // the next round overwrites the buffer
                }
            }
        }
        if (lid == 0u && block + 1u == params.n_blocks) {
            uvec2 total = vle_add64(p, block_bits);
            control[VLE_CTRL_TOTAL_LO] = total.x;
            control[VLE_CTRL_TOTAL_HI] = total.y;
        }
    }
}
