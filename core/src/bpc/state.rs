//! Per-coefficient coding state, kept as lane masks.
//!
//! For row `y` and column parity `x`, bit `t` of a mask is the state of the
//! coefficient at column `2t + x`: the coefficient lane `t` visits in step
//! `(y, x)`. With this layout one `u32` holds what a whole subgroup needs in
//! a step, and neighbours in the other column parity are one shift away.

/// Coding state of one codeblock of up to `ROWS` rows (`ROWS <= 256`):
/// `32 * ROWS` bytes (`Scratch<64>` = 2 KiB, `Scratch<256>` = 8 KiB).
///
/// The encoders and decoders take it by `&mut` so that no state lives on
/// their stack or in a heap; it can be reused for any number of codeblocks
/// and needs no reset between them.
#[derive(Debug, Clone)]
pub struct Scratch<const ROWS: usize = 64> {
    /// Significant.
    pub(super) sig: [[u32; 2]; ROWS],
    /// To be refined in the MRP.
    pub(super) refine: [[u32; 2]; ROWS],
    /// Pending for the cleanup pass (3-pass mode).
    pub(super) pending: [[u32; 2]; ROWS],
    /// Negative (the encoder knows all signs; the decoder sets them as decoded).
    pub(super) negative: [[u32; 2]; ROWS],
}

impl<const ROWS: usize> Scratch<ROWS> {
    /// Tallest codeblock this scratch can code.
    pub const MAX_ROWS: usize = ROWS;

    /// A fresh scratch.
    pub const fn new() -> Self {
        Scratch {
            sig: [[0; 2]; ROWS],
            refine: [[0; 2]; ROWS],
            pending: [[0; 2]; ROWS],
            negative: [[0; 2]; ROWS],
        }
    }

    /// Clears the first `height` rows; in 3-pass mode every present
    /// coefficient starts pending for the cleanup pass.
    pub(super) fn reset(&mut self, height: usize, present: [u32; 2], three_pass: bool) {
        let pending = if three_pass { present } else { [0; 2] };
        for y in 0..height {
            self.sig[y] = [0; 2];
            self.refine[y] = [0; 2];
            self.pending[y] = pending;
            self.negative[y] = [0; 2];
        }
    }
}

impl<const ROWS: usize> Default for Scratch<ROWS> {
    fn default() -> Self {
        Self::new()
    }
}

/// Lanes that own a present coefficient in column parity `x` of a
/// codeblock `width` columns wide: lane `t` is present when `2t + x < width`.
pub(super) fn present_lanes(width: usize, x: usize) -> u32 {
    let lanes = (width + 1 - x) / 2;
    if lanes >= 32 {
        u32::MAX
    } else {
        (1u32 << lanes) - 1
    }
}

/// Both parities of [`present_lanes`].
pub(super) fn present_mask(width: usize) -> [u32; 2] {
    [present_lanes(width, 0), present_lanes(width, 1)]
}

/// Iterates the set bits of `mask`, lowest (lane 0) first.
#[inline]
pub(crate) fn lanes(mut mask: u32) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let t = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(t)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn present_lanes_follow_the_width() {
        assert_eq!(present_mask(1), [0b1, 0]);
        assert_eq!(present_mask(2), [0b1, 0b1]);
        assert_eq!(present_mask(3), [0b11, 0b1]);
        assert_eq!(present_mask(63), [u32::MAX, u32::MAX >> 1]);
        assert_eq!(present_mask(64), [u32::MAX, u32::MAX]);
    }
}
