#version 450
// GVLE encoder with the inter-block scan on 64-bit atomics (devices with
// shaderInt64 + shaderBufferInt64Atomics). See common/vle_encode.glsl.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#define VLE_SCAN_64 1
#include "common/vle_encode.glsl"
