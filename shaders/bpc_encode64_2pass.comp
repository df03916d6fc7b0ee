#version 450
// BPC-PaCo encoder for codeblocks up to 64 rows coded in 2 passes per bitplane (the host picks it for 2-pass tables): the plane-map body, which rebuilds two maps per bitplane from the magnitudes instead of keeping state maps, with team-word contexts (on an H200 11% faster than the map-based 2-pass build it replaced, and 15% faster again with session 16's trims, docs/history/bpc-paco.md). See common/bpc_encode_planes.glsl.
#extension GL_GOOGLE_include_directive : require
#define BPC_MAX_ROWS 64u
#define BPC_TWO_PASS 1
#include "common/bpc_encode_planes.glsl"
