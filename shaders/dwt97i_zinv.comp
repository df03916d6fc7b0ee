#version 450
// Z pass of a 3-D DWT level, CDF 97i inverse: see common/dwt_z.glsl.
#extension GL_GOOGLE_include_directive : require
#define WAVELET 971
#define INVERSE 1
#include "common/dwt_z.glsl"
