// The bindings and push constants every BPC-PaCo encoder body shares
// (bpc/encode.glsl, bpc/encode_planes.glsl), so that the host
// drives every encoder build alike (host/src/bpc/gpu.rs), and the defines
// that select the encoder's parts of bpc/bpc.glsl.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = 32) in;

layout(set = 0, binding = 0) readonly buffer Coefficients { int coefficients[]; };
layout(set = 0, binding = 1) readonly buffer Blocks { uvec4 blocks[]; };
#ifdef BPC_COUNTS
// The counting build (bpc/counts.glsl) codes nothing: no tables, no
// codewords; each codeblock's top bitplane and status from bpc_measure.comp,
// the order, which passes count, and the cells.
layout(set = 0, binding = 2) readonly buffer Tops { uint tops[]; };
layout(set = 0, binding = 3) readonly buffer Status { uint status[]; };
layout(set = 0, binding = 4) readonly buffer Order { uint order[]; };
layout(set = 0, binding = 5) readonly buffer Selection { uint selection[]; };
layout(set = 0, binding = 6) buffer Cells { uint cells[]; };
#else
layout(set = 0, binding = 2) readonly buffer Tables { uint bpc_tables[]; };
layout(set = 0, binding = 3) readonly buffer Tops { uint tops[]; };
layout(set = 0, binding = 4) readonly buffer Caps { uint caps[]; };
layout(set = 0, binding = 5) readonly buffer ScratchOffsets { uint scratch_offsets[]; };
layout(set = 0, binding = 6) writeonly buffer Scratch { uint16_t scratch[]; };
// Codewords per codeblock (scanned to stream offsets afterwards).
layout(set = 0, binding = 7) writeonly buffer Counts { uint counts[]; };
// 0 = coded; see BPC_STATUS_* for the rest.
layout(set = 0, binding = 8) buffer Status { uint status[]; };
// The order in which the workgroups take the codeblocks (bpc_order.comp):
// entry i is the codeblock index; one outside the batch is skipped.
layout(set = 0, binding = 9) readonly buffer Order { uint order[]; };

#ifdef BPC_RECORDS
// The rate-control records (bpc/records.glsl; layout in the module docs of
// host/src/bpc/gpu/records.rs): per codeblock and pass (kind | bitplane
// << 8, codewords so far, decrease low and high word), codeblock b's from
// record_starts[b] on, and per scratch slot the decrease at that codeword
// cut.
layout(set = 0, binding = 10) writeonly buffer Records { uvec4 records[]; };
layout(set = 0, binding = 11) writeonly buffer Cuts { int64_t cuts[]; };
layout(set = 0, binding = 12) readonly buffer RecordStarts { uint record_starts[]; };
#endif
#endif

layout(push_constant) uniform Params {
    uint block_count;
    uint three_pass;
} params;

#ifndef BPC_COUNTS
#define BPC_WITH_TABLES
#endif
#define BPC_ENCODER
