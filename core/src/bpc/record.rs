//! Reconstruction rule (spec section 8) and the per-pass records that rate
//! control needs.

use super::{Codeblock, PassKind};

/// What rate control needs to know about one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PassRecord {
    /// The pass.
    pub kind: PassKind,
    /// Its bitplane.
    pub bitplane: u8,
    /// Codewords needed to decode through this pass: slots reserved so far.
    pub codewords: u32,
    /// Decrease of the squared error of the reconstruction in this pass (in
    /// squared coefficient units). A refinement pass can increase the error
    /// of a coefficient that sat exactly on its old reconstruction point, so
    /// this can be negative; its sum over all passes is the codeblock's
    /// energy `sum(v^2)`. `i128` because that energy can reach 2^70.
    pub distortion_decrease: i128,
}

impl PassRecord {
    /// A placeholder value to initialise record buffers with.
    pub const EMPTY: PassRecord = PassRecord {
        kind: PassKind::Significance,
        bitplane: 0,
        codewords: 0,
        distortion_decrease: 0,
    };
}

/// `2^(j-1)`, or 0 for `j = 0`: the half step put below a decoded bit.
#[inline]
pub(super) const fn half_step(j: u8) -> u32 {
    if j == 0 {
        0
    } else {
        1 << (j - 1)
    }
}

/// The magnitude a decoder reconstructs for magnitude `magnitude` once
/// bitplane `j` has been decoded for a significant coefficient: the bits
/// above and including `j`, plus the half step below `j`.
///
/// ```
/// use wavelane_core::bpc::reconstruct_magnitude;
/// assert_eq!(reconstruct_magnitude(0b1011, 3), 0b1100); // 2^3 + 2^2
/// assert_eq!(reconstruct_magnitude(0b1011, 1), 0b1011);
/// assert_eq!(reconstruct_magnitude(0b1011, 0), 0b1011);
/// ```
#[inline]
pub const fn reconstruct_magnitude(magnitude: u32, j: u8) -> u32 {
    ((magnitude >> j) << j) | half_step(j)
}

#[inline]
fn square(e: i64) -> i64 {
    e * e
}

/// Squared-error decrease when a coefficient of magnitude `mag` becomes
/// significant at bitplane `j` (its reconstruction goes from 0 to
/// `2^j + 2^(j-1)`).
#[inline]
pub(super) fn significance_decrease(mag: u32, j: u8) -> i64 {
    let m = mag as i64;
    square(m) - square(m - reconstruct_magnitude(mag, j) as i64)
}

/// Squared-error decrease of refining magnitude `mag` at bitplane `j`.
#[inline]
pub(super) fn refinement_decrease(mag: u32, j: u8) -> i64 {
    let m = mag as i64;
    let before = reconstruct_magnitude(mag, j + 1) as i64;
    square(m - before) - square(m - reconstruct_magnitude(mag, j) as i64)
}

/// Sum of squared differences of two codeblocks of the same size (for
/// example original and decoded); `u128` because it can exceed 2^64.
///
/// Returns `None` if the sizes differ.
pub fn squared_error(a: &Codeblock<'_>, b: &Codeblock<'_>) -> Option<u128> {
    if a.width() != b.width() || a.height() != b.height() {
        return None;
    }
    let mut sum = 0u128;
    for y in 0..a.height() {
        for (p, q) in a.row(y).iter().zip(b.row(y)) {
            let d = (*p as i64 - *q as i64).unsigned_abs() as u128;
            sum += d * d;
        }
    }
    Some(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decreases_match_the_reconstruction_rule() {
        // 5 = 0b101 significant at 2: 25 -> (5 - 6)^2 = 1.
        assert_eq!(significance_decrease(5, 2), 24);
        // Refined at 1 (bit 0): 6 -> 0b100 | 1 = 5, error 1 -> 0.
        assert_eq!(refinement_decrease(5, 1), 1);
        // 6 = 0b110 sits on its reconstruction point 6; refining at 1 moves it to 7.
        assert_eq!(refinement_decrease(6, 1), -1);
        assert_eq!(significance_decrease(1, 0), 1);
        let big = (1u32 << 28) - 1;
        assert!(significance_decrease(big, 27) > 0);
    }
}
