#version 450
// The real-valued distortions' exact integer sums of every codeblock
// given, read from one component's coefficient plane before quantization
// overwrites it: the twin of host/src/codec/distortion/sums.rs
// (`BlockSums::add`; its module docs derive the sums and their ranges).
// Per block, SUMS 128-bit sums: the energy E, then per bitplane p the
// significance (A, B) of the coefficients whose top bitplane is p and the
// refinement (A, B) of those whose top bitplane is above p.
//
// The sums are integers, so any exact way of forming them gives the
// host's. This one keeps every running sum small enough for a register:
//
// - Significance at p: R_p (twice the reconstruction) is the same for
//   every coefficient whose top bitplane is p (3 * 2^p, or 2 + half-bin at
//   p = 0), so A = R_p * (sum of s) and B = R_p^2 * (count): two running
//   sums, each far below 2^63, scaled once per block.
// - Refinement at p: R_p - R_{p+1} is d * 2^p with d = +-1 (d in -2..1 at
//   p = 0), so A = 2^p * sum(d * s) and B = 2^p * sum(d * (R_p + R_{p+1})):
//   every term is below 2^33 in magnitude, a block's 2^14 of them below
//   2^47, exact in int64; the shift by p into 128 bits happens once.
// - E = sum(s^2), terms up to 2^62: 128 bits (two words with a carry).
//
// One workgroup per codeblock (grid-stride over blocks); invocation x owns
// column x. A pass over the block sums WINDOW bitplanes in registers (the
// loop over them unrolled, so the sums are never indexed at run time and
// stay out of local memory); blocks whose indices reach bitplane WINDOW or
// above take one more pass per WINDOW bitplanes. After each pass the 64
// invocations' sums are added in shared memory, each sum by one invocation
// in lane order: integer sums, so neither the subgroup size nor the order
// changes them. Sums of bitplanes above the block's top are zero.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "codec/quant.glsl"

// distortion::sums::PLANES and SUMS.
const uint PLANES = 28u;
const uint SUMS = 1u + 4u * PLANES;
// Bitplanes a pass sums, and the running sums each one keeps: the count
// and the sum of s of its significant coefficients, the refinement's
// sum(d * s) and sum(d * (R_p + R_{p+1})).
const uint WINDOW = 8u;
const uint KINDS = 4u;
const uint PARTS = WINDOW * KINDS;
// Running sums reduced per round: 64 x 17 x 8 bytes of shared memory (the
// 17th column staggers the lanes' rows across banks), well inside the
// 16 KiB every Vulkan device has.
const uint ROUND = 16u;

layout(set = 0, binding = 0) readonly buffer Plane { int plane[]; };
layout(set = 0, binding = 1) readonly buffer Blocks { Block blocks[]; };
// SUMS entries a block at `slot * SUMS`: (low 64 bits, high 64 bits) as
// four u32 words.
layout(set = 0, binding = 2) writeonly buffer Sums { uvec4 sums[]; };

layout(push_constant) uniform Params {
    uint first;       // this dispatch's first block in Blocks
    uint count;       // blocks of this dispatch
    uint plane_len;   // elements of Plane
    uint sums_len;    // elements of Sums
} p;

shared int64_t part[64][ROUND + 1u];
shared uint64_t energy_lo[64];
shared uint64_t energy_hi[64];
// One above the highest top bitplane of the block's indices (0: all zero).
shared uint block_planes;

// 2 * reconstruct_magnitude(v, j) (+1 at j = 0 with the half-bin rule).
int64_t twice_recon(uint v, uint j, bool half_bin) {
    uint half_step = j == 0u ? 0u : 1u << (j - 1u);
    uint r = ((v >> j) << j) | half_step;
    return 2l * int64_t(r) + ((j == 0u && half_bin) ? 1l : 0l);
}

// Sum `e` of block slot `slot`, as (low, high) 64-bit words.
void put(uint slot, uint e, uint64_t lo, uint64_t hi) {
    uint to = slot * SUMS + e;
    if (slot < p.sums_len / SUMS && to < p.sums_len) {
        sums[to] = uvec4(uint(lo), uint(lo >> 32), uint(hi), uint(hi >> 32));
    }
}

// `base * 2^shift` in two's-complement 128 bits (shift < 64).
void put_shifted(uint slot, uint e, int64_t base, uint shift) {
    uint64_t lo = uint64_t(base) << shift;
    uint64_t hi = shift == 0u ? (base < 0l ? ~0ul : 0ul) : uint64_t(base >> (64u - shift));
    put(slot, e, lo, hi);
}

// Running sum `kind` of bitplane `plane`, added over the block (`total`),
// as the block's sum it stands for (header comment).
void put_part(uint slot, uint plane, uint kind, int64_t total, bool half_bin) {
    int64_t r_top = plane == 0u ? (half_bin ? 3l : 2l) : 3l;
    uint top_shift = plane == 0u ? 0u : plane;
    if (kind == 0u) { // the count: B of significance
        put_shifted(slot, 2u + 4u * plane, r_top * r_top * total, 2u * top_shift);
    } else if (kind == 1u) { // sum of s: A of significance
        put_shifted(slot, 1u + 4u * plane, r_top * total, top_shift);
    } else { // refinement A, B
        put_shifted(slot, 1u + 4u * plane + kind, total, plane);
    }
}

void main() {
    uint x = gl_LocalInvocationID.x;
    for (uint k = gl_WorkGroupID.x; k < p.count; k += gl_NumWorkGroups.x) {
        if (p.first + k >= uint(blocks.length())) {
            break;
        }
        Block b = blocks[p.first + k];
        uint64_t q16 = u64_of(b.q16_lo, b.q16_hi);
        bool half_bin = q16 != UNIT_STEP; // quant::half_bin(q16, 0)
        bool mine = x < min(b.width, 64u);
        barrier(); // the last block's readers of block_planes are done
        if (x == 0u) {
            block_planes = 0u;
        }
        barrier();
        uint64_t e_lo = 0ul;
        uint64_t e_hi = 0ul;
        uint column_planes = 0u;
        uint windows = (PLANES + WINDOW - 1u) / WINDOW;
        for (uint w = 0u; w < windows; w++) {
            uint low = w * WINDOW; // the pass's lowest bitplane
            int64_t acc[PARTS];
            [[unroll]] for (uint i = 0u; i < PARTS; i++) {
                acc[i] = 0l;
            }
            if (mine) {
                for (uint y = 0u; y < b.height; y++) {
                    uint at = b.offset + y * b.stride + x;
                    if (at >= p.plane_len) {
                        break;
                    }
                    int c = plane[at];
                    uint s = uint(c < 0 ? -c : c); // |i32::MIN| = 2^31 as uint
                    if (w == 0u) {
                        uint64_t sq = uint64_t(s) * uint64_t(s);
                        e_lo += sq;
                        e_hi += e_lo < sq ? 1ul : 0ul;
                    }
                    // sums::index_magnitude: the coder's index, clamped.
                    uint v = min(q16 == UNIT_STEP ? s : uint(abs(quantize_i32(c, q16))), MAX_INDEX);
                    if (v == 0u) {
                        continue;
                    }
                    uint top = uint(findMSB(v)); // v < 2^28: top < PLANES
                    column_planes = max(column_planes, top + 1u);
                    if (top < low) {
                        continue; // nothing in this pass's bitplanes
                    }
                    [[unroll]] for (uint i = 0u; i < WINDOW; i++) {
                        uint j = low + i;
                        if (j == top) {
                            acc[KINDS * i] += 1l;
                            acc[KINDS * i + 1u] += int64_t(s);
                        } else if (j < top) {
                            int64_t r = twice_recon(v, j, half_bin);
                            int64_t u = twice_recon(v, j + 1u, half_bin);
                            int64_t d = (r - u) >> j; // exact: r - u = d * 2^j
                            acc[KINDS * i + 2u] += d * int64_t(s);
                            acc[KINDS * i + 3u] += d * (r + u);
                        }
                    }
                }
            }
            if (w == 0u) {
                atomicMax(block_planes, column_planes);
                energy_lo[x] = e_lo;
                energy_hi[x] = e_hi;
            }
            for (uint r0 = 0u; r0 < PARTS; r0 += ROUND) {
                [[unroll]] for (uint i = 0u; i < PARTS; i++) {
                    if (i >= r0 && i < r0 + ROUND) {
                        part[x][i - r0] = acc[i];
                    }
                }
                barrier();
                if (x < ROUND) {
                    int64_t total = 0l;
                    for (uint lane = 0u; lane < 64u; lane++) {
                        total += part[lane][x];
                    }
                    uint i = r0 + x;
                    uint plane = low + i / KINDS;
                    if (plane < PLANES) {
                        put_part(b.slot, plane, i % KINDS, total, half_bin);
                    }
                } else if (w == 0u && r0 == 0u && x == ROUND) {
                    uint64_t lo = 0ul;
                    uint64_t hi = 0ul;
                    for (uint lane = 0u; lane < 64u; lane++) {
                        uint64_t t = energy_lo[lane];
                        lo += t;
                        hi += energy_hi[lane] + (lo < t ? 1ul : 0ul);
                    }
                    put(b.slot, 0u, lo, hi);
                }
                barrier();
            }
            // block_planes is final after the first pass's barriers, and the
            // same in every invocation: a uniform exit.
            if (low + WINDOW >= block_planes) {
                // The bitplanes above the passes made have zero sums.
                for (uint e = 1u + 4u * (low + WINDOW) + x; e < SUMS; e += 64u) {
                    put(b.slot, e, 0ul, 0ul);
                }
                break;
            }
        }
    }
}
