#version 450
// BPC-PaCo encoder for codeblocks up to 64 rows: a quarter of the shared memory, so an SM holds more teams (2.4x faster on an H200, docs/history/bpc-paco.md); the host picks it when every codeblock of a batch fits. See common/bpc_encode.glsl.
#extension GL_GOOGLE_include_directive : require
#define BPC_MAX_ROWS 64u
#include "common/bpc_encode.glsl"
