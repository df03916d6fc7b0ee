// Workgroup-wide exclusive prefix sum of one u32 per invocation, correct for
// any subgroup size (4/8/16 on lavapipe, 32 on NVIDIA, 64 on AMD).
//
// Mirrors wavelane_core::scan::exclusive_scan_lanes: a subgroup scan inside
// each subgroup, then an exclusive scan of the subgroup totals by subgroup 0.
// Sums wrap modulo 2^32, exactly as in core.
//
// Requires: GL_KHR_shader_subgroup_basic + _arithmetic, a workgroup size that
// is a multiple of the subgroup size, and the caller to declare
//   shared uint scan_sg_totals[SCAN_MAX_SUBGROUPS];
//   shared uint scan_wg_total;
// A caller whose every call is separated from the previous one by a
// workgroup barrier (after the previous call's last reads) may define
// SCAN_CALLS_SEPARATED to skip the scan's own first barrier.
// Positions are taken from (gl_SubgroupID, gl_SubgroupInvocationID), not from
// gl_LocalInvocationIndex, because Vulkan does not promise that subgroups are
// made of consecutive local invocations: the element an invocation owns is
// scan_position().

uint scan_position() {
    return gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
}

// Returns the exclusive prefix of `x` over scan_position() order; `total`
// receives the sum over the whole workgroup. Contains barriers: every
// invocation of the workgroup must call it (uniform control flow).
uint workgroup_exclusive_scan(uint x, out uint total) {
#ifndef SCAN_CALLS_SEPARATED
    barrier(); // the shared arrays may still be read by a previous call
#endif
    uint incl = subgroupInclusiveAdd(x);
    uint sg_sum = subgroupAdd(x);
    if (subgroupElect()) {
        scan_sg_totals[gl_SubgroupID] = sg_sum;
    }
    barrier();
    if (gl_SubgroupID == 0) {
        // Subgroup 0 scans the subgroup totals, looping when there are more
        // subgroups than lanes (e.g. 64 subgroups of 4 on lavapipe).
        uint running = 0u;
        for (uint base = 0u; base < gl_NumSubgroups; base += gl_SubgroupSize) {
            uint idx = base + gl_SubgroupInvocationID;
            uint t = idx < gl_NumSubgroups ? scan_sg_totals[idx] : 0u;
            uint e = subgroupExclusiveAdd(t);
            uint chunk = subgroupAdd(t);
            if (idx < gl_NumSubgroups) {
                scan_sg_totals[idx] = running + e;
            }
            running += chunk;
        }
        if (subgroupElect()) {
            scan_wg_total = running;
        }
    }
    barrier();
    total = scan_wg_total;
    return scan_sg_totals[gl_SubgroupID] + (incl - x);
}
