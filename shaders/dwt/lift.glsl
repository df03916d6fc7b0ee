// Lifting steps of the three wavelets, mirroring wavelane_core::dwt::{lift53,
// lift97, fixed97}. The includer defines WAVELET as 53 (CDF 5/3, int),
// 97 (CDF 9/7, float) or 971 (fixed-point 9/7, int).
//
// Step s (0-based) updates odd positions (predict) when s is even and even
// positions (update) when s is odd; lift(s, x, a, b) is the forward update of
// x from its neighbours a (left/above) and b (right/below), unlift its exact
// inverse. HALO is the number of sample pairs each side that a block needs.
// T is the sample type, T2 and T4 its 2- and 4-vectors.

#if WAVELET == 53
#define T int
#define T2 ivec2
#define T4 ivec4
#define NSTEPS 2
#define HALO 1
T lift(int s, T x, T a, T b) {
    return s == 0 ? x - ((a + b) >> 1) : x + ((a + b + 2) >> 2);
}
T unlift(int s, T x, T a, T b) {
    return s == 0 ? x + ((a + b) >> 1) : x - ((a + b + 2) >> 2);
}

#elif WAVELET == 97
#define T float
#define T2 vec2
#define T4 vec4
#define NSTEPS 4
#define HALO 2
#define HAS_SCALING 1
// Exact f32 bit patterns of the Rust constants (f64 rounded to nearest f32):
// alpha, beta, gamma, delta, K, 1/K. Decimal literals could round twice.
float lift_coef(int s) {
    return uintBitsToFloat(s == 0 ? 0xbfcb0673u : s == 1 ? 0xbd5901aeu : s == 2 ? 0x3f620676u : 0x3ee31355u);
}
#define SCALE_K uintBitsToFloat(0x3f9d7658u)
#define SCALE_INV_K uintBitsToFloat(0x3f5019c3u)
// `precise`: no fused multiply-add, the same three roundings as the CPU.
T lift(int s, T x, T a, T b) {
    precise float r = x + lift_coef(s) * (a + b);
    return r;
}
T unlift(int s, T x, T a, T b) {
    precise float r = x - lift_coef(s) * (a + b);
    return r;
}

#elif WAVELET == 971
#define T int
#define T2 ivec2
#define T4 ivec4
#define NSTEPS 4
#define HALO 2
int lift_q(int s) {
    return s == 0 ? -103949 : s == 1 ? -3472 : s == 2 ? 57862 : 29066;
}
// (q * (a + b) + 2^15) >> 16 on the full 64-bit product, low 32 bits kept:
// the same as fixed97::term.
int lift_term(int s, int a, int b) {
    int hi;
    int lo;
    imulExtended(lift_q(s), a + b, hi, lo);
    uint carry;
    uint lo2 = uaddCarry(uint(lo), 0x8000u, carry);
    hi += int(carry);
    return (hi << 16) | int(lo2 >> 16);
}
T lift(int s, T x, T a, T b) { return x + lift_term(s, a, b); }
T unlift(int s, T x, T a, T b) { return x - lift_term(s, a, b); }

#else
#error "WAVELET must be 53, 97 or 971"
#endif

// Whole-sample symmetric extension of index i into [0, n) (dwt::mirror).
// Uses mirror(-i) == mirror(i) so that % only ever sees non-negative values.
uint dwt_mirror(int i, uint n) {
    if (n <= 1u) return 0u;
    // Inside the line (nearly every call): no division.
    if (i >= 0 && uint(i) < n) return uint(i);
    uint period = 2u * (n - 1u);
    uint m = uint(i < 0 ? -i : i) % period;
    return m >= n ? period - m : m;
}

// Position of interleaved index i in a Mallat line of n: evens to i/2, odds
// to ceil(n/2) + i/2; identity along an axis that is not transformed.
uint dwt_mallat(uint i, uint n, bool transformed) {
    if (!transformed) return i;
    return (i & 1u) == 0u ? i >> 1 : ((n + 1u) >> 1) + (i >> 1);
}
