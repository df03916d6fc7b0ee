// Constants and helpers shared by the VLE shaders (shaders/vle/). The numbers
// mirror wavelane_core::vle::lanes and wavelane::vle::gpu.

#define VLE_THREAD_SYMBOLS 32u     // symbols per invocation (two uvec4 loads)
#define VLE_WORKGROUP 128u         // invocations per encode workgroup
#define VLE_BLOCK_SYMBOLS 4096u    // VLE_THREAD_SYMBOLS * VLE_WORKGROUP
#define VLE_BLOCK_WORDS 3073u      // VLE_BLOCK_SYMBOLS * 24 / 32 + 1
#define VLE_STAGE_WORDS 1025u      // shared staging of a block-code: up to 8 bits a symbol
#define VLE_SEGMENT_BLOCKS 128u    // blocks per inter-block scan segment (<= VLE_WORKGROUP)

// Control buffer layout (u32 words), zeroed before every encode.
#define VLE_CTRL_TICKET 0u         // next block-input to take
#define VLE_CTRL_ERROR 1u          // error bits, below
#define VLE_CTRL_TOTAL_LO 2u       // stream length in bits (incl. base bit), low word
#define VLE_CTRL_TOTAL_HI 3u       // ... high word
#define VLE_CTRL_PREFIX 8u         // 32-bit scan: 2 words per segment from here

// Error bits reported in VLE_CTRL_ERROR (and by the decoder).
#define VLE_ERR_NO_CODE 1u         // a symbol without codeword
#define VLE_ERR_SPIN 2u            // a look-back wait exceeded its bound
#define VLE_ERR_BOUNDS 4u          // an output index past the buffer
#define VLE_ERR_INVALID_CODE 8u    // decoder: bits match no codeword
#define VLE_ERR_LENGTH 16u         // decoder: codes do not end at the chunk end

// Longest look-back wait, in polls. The waits end by the ticket argument
// (every awaited block is running); the bound only keeps a driver or
// hardware fault from hanging the device and is reported as VLE_ERR_SPIN.
#define VLE_SPIN_LIMIT (1u << 26)

// The byte order of a word reversed: turns an MSB-first bit-stream word
// into the little-endian memory layout of the byte stream, and back.
uint vle_bswap(uint x) {
    return (x << 24) | ((x & 0xff00u) << 8) | ((x >> 8) & 0xff00u) | (x >> 24);
}

// 64-bit values as (lo, hi) pairs, for devices without shaderInt64.
uvec2 vle_add64(uvec2 a, uint b) {
    uint carry;
    uint lo = uaddCarry(a.x, b, carry);
    return uvec2(lo, a.y + carry);
}

uvec2 vle_add64(uvec2 a, uvec2 b) {
    uint carry;
    uint lo = uaddCarry(a.x, b.x, carry);
    return uvec2(lo, a.y + b.y + carry);
}
