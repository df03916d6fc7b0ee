#version 450
// 2-D DWT level, CDF 97 forward: see common/dwt_block.glsl.
#extension GL_GOOGLE_include_directive : require
#define WAVELET 97
#define INVERSE 0
#include "common/dwt_block.glsl"
