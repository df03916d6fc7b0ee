// What both BPC-PaCo encoder bodies (bpc/encode.glsl and
// bpc/encode_planes.glsl) do the same way around the coding of one
// codeblock: the lane's coder state, the codeblock's region, loading the
// sign map, and writing the count (or the overflow status) at the end.
// Included after bpc/encode_bindings.glsl and bpc/bpc.glsl; the shared
// main() that uses these is bpc/encode_main.glsl.

#define BPC_STATUS_OVERFLOW 3u

// A lane's slot before it reserves one: neither body's emit admits it (the
// capacity and the scratch buffer's length are below 2^32 - 1), so the
// codeblock's final flush needs no "ever reserved" flag.
#define NO_SLOT 0xFFFFFFFFu

// Per-invocation state of this lane's arithmetic coder (core coder.rs).
uint ac_low = 0u;
uint ac_size = 0u;
uint ac_slot = NO_SLOT;
// Slots reserved by the team so far (the same in every lane).
uint ac_next = 0u;
uint scratch_base = 0u;

// The codeblock being coded: its first coefficient, row stride and width.
uint base;
uint stride;
uint width;

// Marks this lane's negative coefficients of row y < height, parity x
// (the region is checked in main, as for the bodies' magnitudes).
void load_signs(uint y, uint x, uint lane) {
    uint c = 2u * lane + x;
    if (c < width && coefficients[base + y * stride + c] < 0) {
        atomicOr(bpc_negative[2u * y + x], 1u << lane);
    }
}

#ifndef BPC_COUNTS
// Codeblock b's codeword count, or 0 and the overflow status when the team
// reserved more slots than its capacity. (The capacity is read again
// rather than held in a register through the passes.)
void bpc_encode_finish(uint b, uint lane) {
    if (lane == 0u) {
        bool overflow = ac_next > caps[b];
        counts[b] = overflow ? 0u : ac_next;
        if (overflow) {
            status[b] = BPC_STATUS_OVERFLOW;
        }
    }
}
#endif
