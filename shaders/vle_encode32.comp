#version 450
// GVLE encoder with the 32-bit-atomic fallback of the inter-block scan, for
// devices without 64-bit buffer atomics. Same output as vle_encode.comp.
#extension GL_GOOGLE_include_directive : require
#include "common/vle_encode.glsl"
