#version 450
// Packs the per-unit bit strings of cavlc_encode.comp into the slice data:
// unit i starts at bit base_bits + offsets[i] (offsets = exclusive scan of
// the lengths; its total in result[0]). One invocation per unit ORs its
// words into place; neighbouring units share boundary words, hence the
// atomics. Mirrors wavelane::h264::encode::pack_slice. out[] starts zeroed.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer Slots { uint slots[]; };
layout(set = 0, binding = 1) readonly buffer Offsets { uint offsets[]; };
layout(set = 0, binding = 2) readonly buffer Result { uint result[]; };
layout(set = 0, binding = 3) buffer Out { uint out_words[]; };

layout(push_constant) uniform Params {
    uint unit_count;
    uint base_bits;
    uint out_len; // words in out_words
} params;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= params.unit_count) return;
    uint start = offsets[i];
    uint end = i + 1u < params.unit_count ? offsets[i + 1u] : result[0];
    uint len = min(end - start, 512u);
    uint words = (len + 31u) >> 5;
    for (uint j = 0u; j < words; j++) {
        uint w = slots[i * 16u + j];
        uint p = params.base_bits + start + 32u * j;
        uint wi = p >> 5;
        uint s = p & 31u;
        if (wi < params.out_len) atomicOr(out_words[wi], w >> s);
        if (s != 0u && wi + 1u < params.out_len) atomicOr(out_words[wi + 1u], w << (32u - s));
    }
}
