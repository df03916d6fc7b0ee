#version 450
// BPC-PaCo encoder, records builds with cut decreases, last dispatch:
// gathers the candidate cuts that bpc_cut_hull.comp flagged into one list,
// codeblock after codeblock, so that the host downloads the candidates
// alone (bpc::gpu::records). `places` is the exclusive scan of the flags
// (one per codeword position, `place_count` of them) and `place_total[0]`
// their sum: a position is a candidate where the next place differs from
// its own. Codeblock b's candidates start at starts[b]; each candidate is
// its cut m (codewords kept) and the cut's decrease.
//
// One workgroup per codeblock (grid-stride over codeblocks), consecutive
// invocations taking consecutive cuts, as bpc_pack does for codewords.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Offsets { uint offsets[]; };
layout(set = 0, binding = 1) readonly buffer Total { uint total[]; };
layout(set = 0, binding = 2) readonly buffer Cuts { int64_t cuts[]; };
layout(set = 0, binding = 3) readonly buffer Places { uint places[]; };
layout(set = 0, binding = 4) readonly buffer PlaceTotal { uint place_total[]; };
layout(set = 0, binding = 5) writeonly buffer Starts { uint starts[]; };
layout(set = 0, binding = 6) writeonly buffer Slots { uint slots[]; };
layout(set = 0, binding = 7) writeonly buffer Decreases { int64_t decreases[]; };

layout(push_constant) uniform Params {
    uint block_count;
    uint place_count;
} params;

void main() {
    uint n = min(params.block_count, min(uint(offsets.length()), uint(starts.length())));
    uint place_count = min(params.place_count, uint(places.length()));
    uint candidates = place_total[0];
    uint cut_len = uint(cuts.length());
    uint out_len = min(uint(slots.length()), uint(decreases.length()));
    for (uint b = gl_WorkGroupID.x; b < n; b += gl_NumWorkGroups.x) {
        uint base = offsets[b];
        uint end = b + 1u < n ? offsets[b + 1u] : total[0];
        end = min(end, min(place_count, cut_len));
        if (gl_LocalInvocationID.x == 0u) {
            starts[b] = base < place_count ? places[base] : candidates;
        }
        uint count = end > base ? end - base : 0u;
        for (uint m = gl_LocalInvocationID.x; m < count; m += 64u) {
            uint at = base + m;
            uint place = places[at];
            uint next = at + 1u < place_count ? places[at + 1u] : candidates;
            if (next != place && place < out_len) {
                slots[place] = m;
                decreases[place] = cuts[at];
            }
        }
    }
}
