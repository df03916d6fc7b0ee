// Dead-zone quantization with Q16 steps, the twin of
// host/src/codec/quant.rs (`quantize_i32`, `dequantize_i32`), and the
// per-codeblock parameters both directions read.
//
// `dequantize_i32` there multiplies in u128; here the product `a * q16`
// is formed in u64 only when it fits (the host passes each block's
// `limit = (2^64 - 1) / q16`), and saturates otherwise, since any product
// of 2^64 or more reconstructs above i32::MAX anyway. (p + 2^16) >> 17 is
// taken as (p >> 17) + ((p mod 2^17) + 2^16) >> 17, so it cannot wrap.

// Largest index magnitude BPC-PaCo codes (quant::MAX_INDEX).
const uint MAX_INDEX = (1u << 28) - 1u;
const uint64_t UNIT_STEP = 65536ul;

// One codeblock: 8 words (host: stages::device::BlockParams).
struct Block {
    uint offset;   // first coefficient in the component plane
    uint width;    // columns, 1..=64
    uint height;   // rows
    uint stride;   // plane row stride
    uint q16_lo;
    uint q16_hi;
    uint shift;    // dequantize: bitplane shift (bit 8: half-bin, bit 9: skip)
    uint slot;     // quantize: where its squared error goes
};

uint64_t u64_of(uint lo, uint hi) {
    return (uint64_t(hi) << 32) | uint64_t(lo);
}

// quant::quantize_i32
int quantize_i32(int c, uint64_t q16) {
    uint mag_in = uint(c < 0 ? -c : c); // |i32::MIN| = 2^31 as uint
    uint64_t mag = (uint64_t(mag_in) << 16) / max(q16, 1ul);
    int m = int(min(mag, uint64_t(MAX_INDEX)));
    return c < 0 ? -m : m;
}

// quant::dequantize_i32; `limit` = (2^64 - 1) / q16.
int dequantize_i32(int v, uint shift, uint64_t q16, bool half_bin, uint64_t limit) {
    if (v == 0) {
        return 0;
    }
    uint mag_in = uint(v < 0 ? -v : v);
    uint64_t two_v = 2ul * uint64_t(mag_in) + (half_bin ? 1ul : 0ul);
    // two_v < 2^33 and shift <= 31: a < 2^64.
    uint64_t a = two_v << min(shift, 31u);
    uint64_t mag;
    if (a > limit) {
        mag = 2147483647ul;
    } else {
        uint64_t prod = a * q16;
        mag = (prod >> 17) + (((prod & 0x1fffful) + 0x10000ul) >> 17);
        mag = min(mag, 2147483647ul);
    }
    int m = int(mag);
    return v < 0 ? -m : m;
}
