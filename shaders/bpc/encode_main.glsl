// The main() of both BPC-PaCo encoder bodies (bpc/encode.glsl and
// bpc/encode_planes.glsl): take codeblocks in the coding order, refuse
// what bpc_measure.comp refused, set up the lane's coder, load the sign
// map, code, flush and write the count. Each body defines these hooks and
// then includes this file:
//   bpc_body_init(lane)        once per invocation, before the team's;
//   bpc_body_start(width)      per codeblock, once its width is known;
//   bpc_body_capacity(cap)     per codeblock, once scratch_base is known;
//   bpc_body_clear(height, three, lane)  its maps, between barriers;
//   bpc_body_code(group, top, three, height, lane)  the passes.
// The hooks are void functions without out parameters, so that glslc
// inlines them into the same code as one main per body (the loop that
// takes a codeblock stays here: as a function with out parameters it
// doubled RADV's latency estimate of both bodies). Either body compiles
// to the SPIR-V its own main gave, up to the numbering of ids
// (scripts/spirv-identical.sh checks it).

void main() {
    uint lane = bpc_lane();
    bool three = BPC_THREE_PASS(params.three_pass);
    bpc_body_init(lane);
    bpc_team_init();
#ifdef BPC_RECORDS
    // Sums over more subgroups than bpc/records.glsl combines would be
    // wrong: refuse every codeblock instead (the host does not ask).
    if (gl_NumSubgroups > BPC_REC_SUBGROUPS) {
        for (uint i = gl_WorkGroupID.x; i < params.block_count; i += gl_NumWorkGroups.x) {
            if (lane == 0u && i < uint(status.length())) {
                status[i] = BPC_STATUS_RECORDS_SUBGROUPS;
            }
        }
        return;
    }
#endif
    // Codeblocks beyond the grid size loop; the condition is per workgroup.
    // They are taken in the order of bpc_order.comp (heaviest first).
    for (uint i = gl_WorkGroupID.x; i < params.block_count; i += gl_NumWorkGroups.x) {
        uint b = i < uint(order.length()) ? order[i] : params.block_count;
        if (b >= params.block_count) {
            continue;
        }
        uvec4 d = blocks[b];
        uint top = tops[b];
        if (!bpc_descriptor_ok(d) || top > BPC_MAX_BITPLANE
            || !bpc_region_ok(d, uint(coefficients.length()))) {
            // Empty, or refused by bpc_measure.comp (which set the status;
            // it refuses a region outside the buffer too, checked again
            // here because every coefficient load below relies on it).
            if (lane == 0u) {
                counts[b] = 0u;
            }
            continue;
        }
        base = d.x;
        stride = d.y;
        width = bpc_width(d);
        bpc_body_start(width);
        uint height = bpc_height(d);
        uint group = bpc_group(d);
        uint block_cap = caps[b];
        scratch_base = scratch_offsets[b];
        bpc_body_capacity(block_cap);
        ac_low = 0u;
        ac_size = 0u;
        ac_slot = NO_SLOT;
        ac_next = 0u;
#ifdef BPC_RECORDS
        // The host sized each codeblock's run from its top bitplane; one
        // outside the buffer writes nothing (`rec_pass_end` bounds `at`).
        rec_base = b < uint(record_starts.length()) ? record_starts[b] : 0xFFFFFFFFu;
        rec_acc = 0l;
        rec_pass = 0l;
#endif

        bpc_body_clear(height, three, lane);
        for (uint y = 0u; y < height; y++) {
            load_signs(y, 0u, lane);
            load_signs(y, 1u, lane);
        }
        bpc_body_code(group, top, three, height, lane);
        emit(ac_slot, ac_low);
        bpc_encode_finish(b, lane);
    }
}
