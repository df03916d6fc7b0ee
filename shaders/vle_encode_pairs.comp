#version 450
// GVLE encoder with the inter-block scan on 64-bit atomics, packing two
// codewords per accumulator step; the host uses it when no codeword is
// longer than 16 bits (a pair then fits the 32 bits one step shifts in).
// See common/vle_encode.glsl.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#define VLE_SCAN_64 1
#define VLE_PAIRS 1
#include "common/vle_encode.glsl"
