#version 450
// The real-valued distortions' exact integer sums of every codeblock
// given, read from one component's coefficient plane before quantization
// overwrites it: the twin of host/src/codec/distortion/sums.rs
// (`BlockSums::add`; its module docs derive the sums and their ranges).
// Per block, SUMS 128-bit sums: the energy, then per bitplane the
// significance and refinement (A, B). Every per-coefficient term is below
// 2^62 in magnitude, exact in int64; the sums are two's-complement 128-bit
// integers (low and high 64-bit words with a carry), which hold any block
// of any coefficients. One workgroup per codeblock (grid-stride over
// blocks); invocation x owns column x and keeps its own sums, then the 64
// invocations' sums are added in shared memory, 16 sums at a time, each by
// one invocation in lane order: integer sums, so neither the subgroup size
// nor the order changes them.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 64) in;
#include "codec/quant.glsl"

// distortion::sums::PLANES and SUMS.
const uint PLANES = 28u;
const uint SUMS = 1u + 4u * PLANES;
// Sums added per round of the reduction: 16 x 64 x 16 bytes = 16 KiB of
// shared memory, the least a Vulkan device guarantees.
const uint CHUNK = 16u;

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

shared uint64_t part_lo[CHUNK][64];
shared uint64_t part_hi[CHUNK][64];

uint64_t lo[SUMS];
uint64_t hi[SUMS];

// Adds a signed 64-bit term to sum i: the high word takes the carry out
// of the low word and the term's sign extension.
void add(uint i, int64_t term) {
    uint64_t t = uint64_t(term);
    uint64_t l = lo[i] + t;
    hi[i] += (l < t ? 1ul : 0ul) + (term < 0l ? ~0ul : 0ul);
    lo[i] = l;
}

// 2 * reconstruct_magnitude(v, j) (+1 at j = 0 with the half-bin rule).
int64_t twice_recon(uint v, uint j, bool half_bin) {
    uint half_step = j == 0u ? 0u : 1u << (j - 1u);
    uint r = ((v >> j) << j) | half_step;
    return 2l * int64_t(r) + ((j == 0u && half_bin) ? 1l : 0l);
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
        for (uint i = 0u; i < SUMS; i++) {
            lo[i] = 0ul;
            hi[i] = 0ul;
        }
        if (x < min(b.width, 64u)) {
            for (uint y = 0u; y < b.height; y++) {
                uint at = b.offset + y * b.stride + x;
                if (at >= p.plane_len) {
                    break;
                }
                int c = plane[at];
                uint s = uint(c < 0 ? -c : c); // |i32::MIN| = 2^31 as uint
                add(0u, int64_t(uint64_t(s) * uint64_t(s)));
                // sums::index_magnitude: the coder's index, clamped.
                uint v = min(q16 == UNIT_STEP ? s : uint(abs(quantize_i32(c, q16))), MAX_INDEX);
                if (v == 0u) {
                    continue;
                }
                uint top = uint(findMSB(v)); // v < 2^28: top < PLANES
                int64_t upper = twice_recon(v, top, half_bin);
                add(1u + 4u * top, upper * int64_t(s));
                add(2u + 4u * top, upper * upper);
                for (uint j = top; j > 0u; j--) {
                    int64_t r = twice_recon(v, j - 1u, half_bin);
                    add(3u + 4u * (j - 1u), (r - upper) * int64_t(s));
                    add(4u + 4u * (j - 1u), r * r - upper * upper);
                    upper = r;
                }
            }
        }
        for (uint c0 = 0u; c0 < SUMS; c0 += CHUNK) {
            for (uint i = 0u; i < CHUNK; i++) {
                uint at = min(c0 + i, SUMS - 1u);
                part_lo[i][x] = lo[at];
                part_hi[i][x] = hi[at];
            }
            barrier();
            if (x < CHUNK && c0 + x < SUMS) {
                uint64_t l = 0ul;
                uint64_t h = 0ul;
                for (uint lane = 0u; lane < 64u; lane++) {
                    uint64_t t = part_lo[x][lane];
                    l += t;
                    h += part_hi[x][lane] + (l < t ? 1ul : 0ul);
                }
                uint to = b.slot * SUMS + c0 + x;
                if (b.slot < p.sums_len / SUMS && to < p.sums_len) {
                    sums[to] = uvec4(uint(l), uint(l >> 32), uint(h), uint(h >> 32));
                }
            }
            barrier();
        }
    }
}
