#version 450
// BPC-PaCo encoder, first dispatch: per codeblock (one workgroup of 32),
// M (the top bitplane, 0xFF when all coefficients are 0) and the number of
// codewords the encoder may write, core codeword_bound(width,
// symbol_count(width, height, M, nonzero), min_probability). The capacities
// are written twice: to `caps`, and to `scratch_offsets`, which the scan
// shader turns into the start of each codeblock's scratch region. Each
// codeblock is also counted in its bucket of the coding order
// (bpc_order.comp: by decreasing M).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 32) in;

layout(set = 0, binding = 0) readonly buffer Coefficients { int coefficients[]; };
layout(set = 0, binding = 1) readonly buffer Blocks { uvec4 blocks[]; };
layout(set = 0, binding = 2) writeonly buffer Tops { uint tops[]; };
layout(set = 0, binding = 3) writeonly buffer Caps { uint caps[]; };
layout(set = 0, binding = 4) writeonly buffer ScratchOffsets { uint scratch_offsets[]; };
layout(set = 0, binding = 5) writeonly buffer Status { uint status[]; };
// Codeblocks per bucket of bpc/order.glsl (zeroed by the host).
layout(set = 0, binding = 6) buffer OrderBuckets { uint order_buckets[]; };

layout(push_constant) uniform Params {
    uint block_count;
    uint min_probability;
} params;

#include "bpc/bpc.glsl"
#include "bpc/order.glsl"

#define BPC_STATUS_BAD_DESCRIPTOR 1u
#define BPC_STATUS_TOO_LARGE 2u

shared uint team_or;
shared uint team_nonzero;

void main() {
    uint lane = bpc_lane();
    bpc_team_init();
    for (uint b = gl_WorkGroupID.x; b < params.block_count; b += gl_NumWorkGroups.x) {
        uvec4 d = blocks[b];
        barrier(); // the previous codeblock's totals have been read
        if (lane == 0u) {
            team_or = 0u;
            team_nonzero = 0u;
        }
        barrier();
        bool ok = bpc_descriptor_ok(d) && bpc_region_ok(d, uint(coefficients.length()));
        uint width = bpc_width(d);
        uint height = ok ? bpc_height(d) : 0u;
        // bpc_region_ok bounds every index of the region, so the loads carry
        // no bound of their own. Eight rows' loads are issued before any is
        // used: with one load per row on the dependency chain the dispatch
        // was latency-bound (0.15 ms at 8192^2, twice its memory time).
        uint c0 = 2u * lane;
        uint c1 = c0 + 1u;
        uint my_or = 0u;
        uint my_nonzero = 0u;
        for (uint y0 = 0u; y0 < height; y0 += 8u) {
            int v[16];
            [[unroll]] for (uint k = 0u; k < 8u; k++) {
                uint y = y0 + k;
                uint row = d.x + y * d.y;
                v[2u * k] = y < height && c0 < width ? coefficients[row + c0] : 0;
                v[2u * k + 1u] = y < height && c1 < width ? coefficients[row + c1] : 0;
            }
            [[unroll]] for (uint k = 0u; k < 16u; k++) {
                my_or |= uint(abs(v[k]));
                my_nonzero += uint(v[k] != 0);
            }
        }
        atomicOr(team_or, my_or);
        atomicAdd(team_nonzero, my_nonzero);
        barrier();
        if (lane == 0u) {
            uint or_all = team_or;
            uint top = or_all == 0u ? BPC_EMPTY : uint(findMSB(or_all));
            uint cap = 0u;
            uint state = 0u;
            if (!ok) {
                state = BPC_STATUS_BAD_DESCRIPTOR;
                top = BPC_EMPTY;
            } else if (top != BPC_EMPTY && top > BPC_MAX_BITPLANE) {
                state = BPC_STATUS_TOO_LARGE;
                top = BPC_EMPTY;
            } else if (top != BPC_EMPTY) {
                uint symbols = width * height * (top + 1u) + team_nonzero;
                uint lanes = min((width + 1u) / 2u, BPC_LANES);
                cap = params.min_probability == 0u ? symbols : min(symbols, (symbols + 2u * lanes) / 3u);
            }
            tops[b] = top;
            caps[b] = cap;
            scratch_offsets[b] = cap;
            status[b] = state;
            uint k = bpc_order_bucket(top);
            if (k < uint(order_buckets.length())) {
                atomicAdd(order_buckets[k], 1u);
            }
        }
    }
}
