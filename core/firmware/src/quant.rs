//! The integer dead-zone scalar quantizer of the lossy (fixed-point 9/7)
//! path: the rule of the host codec (`host/src/codec/quant.rs`,
//! `quantize_i32`, with steps in the 16-bit form of `QuantStep` in
//! `host/src/codec/header.rs`), so the firmware and the host quantize alike.
//!
//! A step is stored as a 16-bit code: 5 bits of exponent `e` above 11 bits
//! of mantissa `m`; its exact value is the Q16 integer
//! `q16 = ((2048 + m) << e) >> 11` (the step is `q16 / 65536`). A
//! coefficient `c` becomes `q = sign(c) · min(floor((|c| << 16) / q16),
//! 2^28 - 1)`, integer arithmetic only; the zero bin is two steps wide.
//!
//! The step of each subband is the code nearest from below to
//! `BASE_STEP / ‖b‖`, `‖b‖` being the synthesis L2 norm of the subband for
//! the unnormalized fixed-point 9/7
//! (`wavelane_core::dwt::gains::subband_norm(Fixed97, ..)`), so that every
//! subband adds about the same squared error per coefficient to the image.
//! The codes are written out so the firmware needs no floating point; the
//! host test recomputes them from the norms and fails if they drift. They
//! travel in the stream header.

use wavelane_core::bpc::{COEFFICIENT_BITS, GROUPS};

/// Target step in the image domain (8-bit sample units).
pub const BASE_STEP: u32 = 16;

/// The code of step 1.0 (no quantization).
pub const STEP_ONE: u16 = 16 << 11;

/// Step codes per BPC-PaCo table group (`3 * level + orientation` for
/// levels 0..=4 in the order HL, LH, HH; the LL band last) for 5 levels of
/// fixed-point 9/7: 15.82, 15.82, 20.32, 12.13, 12.13, 16.54, 8.76, 8.76,
/// 11.64, 6.50, 6.50, 8.52, 4.89, 4.89, 6.38 and 3.74.
pub const STEP_CODES: [u16; GROUPS] = [
    0x9fd2, 0x9fd2, 0xa229, 0x9c20, 0x9c20, 0xa045, 0x98c2, 0x98c2, 0x9ba5, 0x94fe, 0x94fe, 0x9885,
    0x91c6, 0x91c6, 0x94c4, 0x8ef9,
];

/// Largest index magnitude BPC-PaCo codes.
const MAX_INDEX: u64 = (1 << COEFFICIENT_BITS) - 1;

/// The Q16 value of a step code.
pub const fn q16(code: u16) -> u64 {
    let e = (code >> 11) as u32;
    let m = (code & 0x7ff) as u64;
    ((2048 + m) << e) >> 11
}

/// Quantizes one coefficient with a step of `q16 / 65536` (`q16 >= 1`).
#[inline]
pub fn quantize(c: i32, q16: u64) -> i32 {
    let q = (((c.unsigned_abs() as u64) << 16) / q16).min(MAX_INDEX) as i32;
    if c < 0 {
        -q
    } else {
        q
    }
}
