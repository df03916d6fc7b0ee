#version 450
// BPC-PaCo encoder for codeblocks up to 256 rows (8 KiB of state maps per workgroup). See common/bpc_encode.glsl.
#extension GL_GOOGLE_include_directive : require
#define BPC_MAX_ROWS 256u
#include "common/bpc_encode.glsl"
