// The main() of the counting build of the BPC-PaCo encoder (BPC_COUNTS,
// bpc/counts.glsl): the encoders' loop over the codeblocks
// (bpc/encode_main.glsl) without the coder: take the codeblocks in the
// coding order (bpc_order.comp), skip the empty ones and report those
// bpc_measure.comp refused, load the sign map and walk the selected passes
// (bpc_body_code), which count the symbols.

void main() {
    uint lane = bpc_lane();
    bool three = BPC_THREE_PASS(params.three_pass);
    count_init(lane);
    bpc_team_init();
    // Codeblocks beyond the grid size loop; the condition is per workgroup.
    for (uint i = gl_WorkGroupID.x; i < params.block_count; i += gl_NumWorkGroups.x) {
        uint b = i < uint(order.length()) ? order[i] : params.block_count;
        if (b >= params.block_count || b >= uint(blocks.length())) {
            continue;
        }
        uvec4 d = blocks[b];
        uint top = b < uint(tops.length()) ? tops[b] : BPC_EMPTY;
        if (!bpc_descriptor_ok(d) || top > BPC_MAX_BITPLANE
            || !bpc_region_ok(d, uint(coefficients.length()))) {
            // Empty (nothing to count), or refused by bpc_measure.comp.
            if (lane == 0u) {
                count_refused(b);
            }
            continue;
        }
        count_select(b);
        base = d.x;
        stride = d.y;
        width = bpc_width(d);
        uint height = bpc_height(d);
        uint group = bpc_group(d);
        bpc_body_clear(height, three, lane);
        for (uint y = 0u; y < height; y++) {
            load_signs(y, 0u, lane);
            load_signs(y, 1u, lane);
        }
        bpc_body_code(group, top, three, height, lane);
    }
}
