#version 450
// 2-D DWT level, CDF 53 forward: see common/dwt_block.glsl.
#extension GL_GOOGLE_include_directive : require
#define WAVELET 53
#define INVERSE 0
#include "common/dwt_block.glsl"
