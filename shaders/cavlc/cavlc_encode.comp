#version 450
// CAVLC of every unit of a picture: one invocation per unit (macroblock
// header or residual block), 28 per macroblock, 4 macroblocks per
// workgroup. Mirrors wavelane_core::cavlc::frame::FrameResidual::
// macroblock_slots (slot u of a macroblock is unit u: the header copied
// from headers[], then FrameResidual::encode_unit): each invocation writes
// its bit string into its 16-word slot and its length into lens[], which
// the scan then turns into offsets for cavlc_pack.comp.
//
// nC needs the TotalCoeff of the left and upper blocks. Each invocation
// counts its own block into shared memory; neighbours inside the same
// macroblock are read from there, neighbours in other macroblocks are
// counted again from their coefficients (cheaper than a global exchange,
// and free of inter-workgroup ordering). No subgroup operations are used,
// so the result does not depend on the subgroup size.
#extension GL_GOOGLE_include_directive : require

#define WORKGROUP_SIZE 112
layout(local_size_x = WORKGROUP_SIZE) in;

layout(set = 0, binding = 0) readonly buffer Mbs { uint mbs[]; };
layout(set = 0, binding = 1) readonly buffer Coeffs { uint coeffs[]; };
layout(set = 0, binding = 2) readonly buffer Headers { uint headers[]; }; // 17 words per mb: 16 bits words, len
layout(set = 0, binding = 3) readonly buffer Tables { uint tables[]; };
layout(set = 0, binding = 4) writeonly buffer Slots { uint slots[]; };
layout(set = 0, binding = 5) writeonly buffer Lens { uint lens[]; };
layout(set = 0, binding = 6) buffer Status { uint status[]; };

layout(push_constant) uniform Params {
    uint mb_width;
    uint mb_count;
} params;

shared uint counts[WORKGROUP_SIZE];

#include "cavlc/cavlc.glsl"

// nC from two neighbour counts; a count of 0xffffffff means unavailable.
int nc_of(uint a, uint b) {
    const uint NA = 0xffffffffu;
    if (a != NA && b != NA) return int((a + b + 1u) >> 1);
    if (a != NA) return int(a);
    if (b != NA) return int(b);
    return 0;
}

void main() {
    uint gid = gl_GlobalInvocationID.x;
    uint lid = gl_LocalInvocationID.x;
    uint mb = gid / UNITS_PER_MB;
    uint unit = gid % UNITS_PER_MB;
    bool live = mb < params.mb_count;
    uint info = live ? mbs[mb] : 0u;
    counts[lid] = live ? neighbour_count(info, mb, unit) : 0u;
    barrier();
    if (!live) return;

    for (uint i = 0u; i < 16u; i++) slot_words[i] = 0u;
    slot_len = 0u;
    slot_err = 0u;
    if (unit == 0u) {
        uint len = min(headers[mb * 17u + 16u], 512u);
        for (uint i = 0u; i < 16u; i++) slot_words[i] = headers[mb * 17u + i];
        slot_len = len;
    } else {
        uint kind = unit_kind(info, unit);
        if (kind != K_NONE) {
            int nc = -1;
            if (kind != K_CDC) {
                const uint NA = 0xffffffffu;
                uint mbx = mb % params.mb_width;
                uint slice = info >> 16;
                bool has_left = mbx > 0u && (mbs[mb - 1u] >> 16) == slice;
                bool has_top = mb >= params.mb_width && (mbs[mb - params.mb_width] >> 16) == slice;
                uint base = lid - unit; // this macroblock's unit 0 in counts[]
                uint a;
                uint b;
                if (unit < UNIT_CHROMA_DC) {
                    uvec2 xy = luma_block_xy(unit == UNIT_LUMA_DC ? 0u : unit - UNIT_LUMA);
                    if (xy.x > 0u) a = counts[base + UNIT_LUMA + luma_block_index(xy.x - 1u, xy.y)];
                    else a = has_left ? neighbour_count(mbs[mb - 1u], mb - 1u, UNIT_LUMA + luma_block_index(3u, xy.y)) : NA;
                    if (xy.y > 0u) b = counts[base + UNIT_LUMA + luma_block_index(xy.x, xy.y - 1u)];
                    else b = has_top ? neighbour_count(mbs[mb - params.mb_width], mb - params.mb_width, UNIT_LUMA + luma_block_index(xy.x, 3u)) : NA;
                } else {
                    uint first = UNIT_CHROMA_AC + (unit - UNIT_CHROMA_AC) / 4u * 4u;
                    uint i = unit - first;
                    uint x = i & 1u;
                    uint y = i >> 1;
                    if (x > 0u) a = counts[base + first + 2u * y];
                    else a = has_left ? neighbour_count(mbs[mb - 1u], mb - 1u, first + 1u + 2u * y) : NA;
                    if (y > 0u) b = counts[base + first + x];
                    else b = has_top ? neighbour_count(mbs[mb - params.mb_width], mb - params.mb_width, first + x + 2u) : NA;
                }
                nc = nc_of(a, b);
            }
            encode_block(mb, unit, kind, nc);
        }
    }
    uint words = (slot_len + 31u) >> 5;
    for (uint i = 0u; i < words; i++) slots[gid * 16u + i] = slot_words[i];
    lens[gid] = slot_len;
    if (slot_err != 0u) atomicOr(status[0], slot_err);
}
