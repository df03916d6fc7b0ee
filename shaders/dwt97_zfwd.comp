#version 450
// Z pass of a 3-D DWT level, CDF 97 forward: see common/dwt_z.glsl.
#extension GL_GOOGLE_include_directive : require
#define WAVELET 97
#define INVERSE 0
#include "common/dwt_z.glsl"
