#version 450
// 2-D DWT level, CDF 97i forward: see common/dwt_block.glsl.
#extension GL_GOOGLE_include_directive : require
#define WAVELET 971
#define INVERSE 0
#include "common/dwt_block.glsl"
