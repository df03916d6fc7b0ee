// The component planes of the codec's device stages
// (host/src/codec/stages/device/): up to four i32 planes of `n` samples,
// one binding each from binding FIRST_PLANE_BINDING on (a dispatch with
// fewer components binds a one-element buffer for the rest, which no
// invocation reads because every access is bounded by `comps`), and the
// image's samples packed at their own width, 1 or 2 bytes each, plane c
// at sample c * n, little-endian in 32-bit words.

layout(set = 0, binding = FIRST_PLANE_BINDING + 0) PLANE_QUALIFIER buffer P0 { int p0[]; };
layout(set = 0, binding = FIRST_PLANE_BINDING + 1) PLANE_QUALIFIER buffer P1 { int p1[]; };
layout(set = 0, binding = FIRST_PLANE_BINDING + 2) PLANE_QUALIFIER buffer P2 { int p2[]; };
layout(set = 0, binding = FIRST_PLANE_BINDING + 3) PLANE_QUALIFIER buffer P3 { int p3[]; };

// Q14 ICT, as host/src/codec/colour.rs ICT_FORWARD and the ICT_C* constants.
const int64_t ICT_FORWARD[9] = int64_t[9](
    4899l, 9617l, 1868l,
    -2765l, -5427l, 8192l,
    8192l, -6860l, -1332l);
const int64_t ICT_CR_R = 22970l;
const int64_t ICT_CB_G = 5638l;
const int64_t ICT_CR_G = 11700l;
const int64_t ICT_CB_B = 29032l;
const int64_t HALF_Q14 = 8192l;

const uint COLOUR_NONE = 0u;
const uint COLOUR_RCT = 1u;
const uint COLOUR_ICT = 2u;

int saturate_i32(int64_t v) {
    return int(clamp(v, int64_t(-2147483648l), int64_t(2147483647l)));
}
