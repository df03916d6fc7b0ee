#version 450
// Exclusive prefix sum of a u32 buffer (wrapping mod 2^32), in three modes
// that together equal wavelane_core::scan::exclusive_scan_lanes with a
// workgroup size of 256:
//   mode 0: scan each block of 256 values in place, store the block total in totals[block]
//   mode 1: one workgroup scans totals[0..n] in place and stores the grand total in result[0]
//   mode 2: add totals[block] to every value of the block
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_GOOGLE_include_directive : require

#define WORKGROUP_SIZE 256
#define SCAN_MAX_SUBGROUPS WORKGROUP_SIZE
layout(local_size_x = WORKGROUP_SIZE) in;

layout(set = 0, binding = 0) buffer Values { uint values[]; };
layout(set = 0, binding = 1) buffer Totals { uint totals[]; };
layout(set = 0, binding = 2) buffer Result { uint result[]; };

layout(push_constant) uniform Params {
    uint n;    // number of elements this mode works on
    uint mode; // 0, 1 or 2 as above
} params;

shared uint scan_sg_totals[SCAN_MAX_SUBGROUPS];
shared uint scan_wg_total;
#include "scan/scan.glsl"

void main() {
    uint pos = scan_position();
    uint n = params.n;
    if (params.mode == 0u) {
        uint i = gl_WorkGroupID.x * WORKGROUP_SIZE + pos;
        uint x = i < n ? values[i] : 0u;
        uint total;
        uint e = workgroup_exclusive_scan(x, total);
        if (i < n) values[i] = e;
        if (pos == 0u) totals[gl_WorkGroupID.x] = total;
    } else if (params.mode == 1u) {
        uint running = 0u;
        for (uint base = 0u; base < n; base += WORKGROUP_SIZE) {
            uint i = base + pos;
            uint x = i < n ? totals[i] : 0u;
            uint total;
            uint e = workgroup_exclusive_scan(x, total);
            if (i < n) totals[i] = running + e;
            running += total;
        }
        if (pos == 0u) result[0] = running;
    } else {
        uint i = gl_WorkGroupID.x * WORKGROUP_SIZE + pos;
        if (i < n) values[i] += totals[gl_WorkGroupID.x];
    }
}
