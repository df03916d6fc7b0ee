#version 450
// BPC-PaCo decoder for codeblocks up to 64 rows coded in 2 passes per bitplane (the host picks it for 2-pass tables): no pending map and no cleanup pass, 11% faster than bpc_decode64 on an H200 (docs/history/bpc-paco.md). See common/bpc_decode.glsl.
#extension GL_GOOGLE_include_directive : require
#define BPC_MAX_ROWS 64u
#define BPC_TWO_PASS 1
#include "common/bpc_decode.glsl"
