//! Where the encoders read a step's bits of one bitplane: straight from the
//! coefficients (the firmware's form, no memory) or from a codeblock
//! transposed into bit planes once ([`BitPlanes`], the host's faster form).

use crate::bpc::{Codeblock, LANES};

/// The magnitudes of the coefficients the lanes visit in step `(y, x)`,
/// `row` being row `y` (0 for lanes past the codeblock's width). A full
/// row is a fixed-size copy the compiler vectorizes.
#[inline(always)]
pub(super) fn lane_magnitudes(row: &[i32], x: usize) -> [u32; LANES] {
    let mut mags = [0u32; LANES];
    if let Ok(full) = <&[i32; 2 * LANES]>::try_from(row) {
        for (t, m) in mags.iter_mut().enumerate() {
            *m = full[2 * t + (x & 1)].unsigned_abs();
        }
    } else {
        for (m, v) in mags.iter_mut().zip(row.iter().skip(x).step_by(2)) {
            *m = v.unsigned_abs();
        }
    }
    mags
}

/// Bit `t` set when bit `j` of `mags[t]` is set: a phase's symbols as one
/// mask. Branch-free over the 32 lanes; LLVM keeps it scalar (a shift, mask
/// and OR per lane: about 11% of the lossless encode when profiled,
/// docs/history/codec.md, lossless speed round 3), which is why the encoders that can afford the memory read
/// [`BitPlanes`] instead.
#[inline(always)]
pub(super) fn bitplane_mask(mags: &[u32; LANES], j: u8) -> u32 {
    let mut mask = 0u32;
    for (t, m) in mags.iter().enumerate() {
        mask |= ((m >> j) & 1) << t;
    }
    mask
}

/// Transposes a 32x32 bit matrix in place: afterwards bit `t` of `m[j]` is
/// what bit `j` of `m[t]` was. Applied to a step's lane magnitudes it gives
/// [`bitplane_mask`] of every bitplane at once, in about 5 word operations
/// per bitplane (five rounds of block swaps, halving the block each round)
/// instead of a shift, mask and OR per lane and bitplane.
#[inline(always)]
pub(super) fn transpose32(m: &mut [u32; LANES]) {
    // Round `s` swaps, in every pair of rows `(k, k + s)` with bit `s` of
    // `k` clear, the columns with bit `s` set in row `k` with the columns
    // with bit `s` clear in row `k + s`: the off-diagonal blocks of each
    // 2s x 2s block. Each round gathers its 16 pairs into two arrays first,
    // so that the swap is one loop of 16 independent lanes at every `s`
    // (with a test of `k & s` in the loop, the rounds of `s` = 2 and 1
    // compiled to scalar code with a branch per row).
    swap_round::<16>(m, 0x0000_ffff);
    swap_round::<8>(m, 0x00ff_00ff);
    swap_round::<4>(m, 0x0f0f_0f0f);
    swap_round::<2>(m, 0x3333_3333);
    swap_round::<1>(m, 0x5555_5555);
}

/// One round of [`transpose32`]: rows `k` and `k + S` (bit `S` of `k`
/// clear) swap the columns that `low` (the columns with bit `S` clear)
/// selects, shifted by `S`.
#[inline(always)]
fn swap_round<const S: usize>(m: &mut [u32; LANES], low: u32) {
    let row = |i: usize| (i / S) * 2 * S + i % S;
    let a: [u32; LANES / 2] = core::array::from_fn(|i| m[row(i)]);
    let b: [u32; LANES / 2] = core::array::from_fn(|i| m[row(i) + S]);
    for i in 0..LANES / 2 {
        let swap = ((a[i] >> S) ^ b[i]) & low;
        m[row(i)] = a[i] ^ (swap << S);
        m[row(i) + S] = b[i] ^ swap;
    }
}

/// Where the walk reads a step's bits of one bitplane: bit `t` of
/// `mask(block, y, x, j)` is bit `j` of the magnitude lane `t` visits in
/// step `(y, x)`, i.e. [`bitplane_mask`] of [`lane_magnitudes`]. The walk
/// calls [`LaneBits::start`] once per codeblock, after finding its top
/// bitplane.
pub(super) trait LaneBits {
    /// Sets up for `block`, whose magnitudes are below `2^(top + 1)`.
    fn start(&mut self, block: &Codeblock<'_>, top: u8);

    /// The lanes of step `(y, x)` whose magnitude has bit `j` set.
    fn mask(&self, block: &Codeblock<'_>, y: usize, x: usize, j: u8) -> u32;
}

/// The reference [`LaneBits`]: each mask read from the coefficients when
/// asked (no memory beyond the step's 32 magnitudes).
pub(super) struct FromCoefficients;

impl LaneBits for FromCoefficients {
    #[inline(always)]
    fn start(&mut self, _: &Codeblock<'_>, _: u8) {}

    #[inline(always)]
    fn mask(&self, block: &Codeblock<'_>, y: usize, x: usize, j: u8) -> u32 {
        bitplane_mask(&lane_magnitudes(block.row(y), x), j)
    }
}

/// A codeblock of up to `ROWS` rows transposed into bit planes once (a
/// 32x32 bit transpose per step) for [`encode_sequential_planes`](crate::bpc::encode_sequential_planes) and
/// [`observe_symbols_planes`](crate::bpc::observe_symbols_planes), instead of a mask of the step's magnitudes
/// at every pass that visits the step (two or three per bitplane). `256 * ROWS` bytes (`BitPlanes<64>` = 16 KiB,
/// `BitPlanes<256>` = 64 KiB): the encoders that read the coefficients
/// need none of it, which is what the firmware uses.
#[derive(Debug, Clone)]
pub struct BitPlanes<const ROWS: usize = 64> {
    /// Bit `t` of `masks[j][y][x]`: bit `j` of the magnitude lane `t`
    /// visits in step `(y, x)`; bitplanes above the codeblock's top are
    /// stale.
    masks: [[[u32; 2]; ROWS]; 32],
}

impl<const ROWS: usize> BitPlanes<ROWS> {
    /// Empty planes.
    pub const fn new() -> Self {
        BitPlanes {
            masks: [[[0; 2]; ROWS]; 32],
        }
    }
}

impl<const ROWS: usize> Default for BitPlanes<ROWS> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const ROWS: usize> LaneBits for BitPlanes<ROWS> {
    /// The caller ([`prepare`]) checked `block.height() <= ROWS`.
    #[inline(always)]
    fn start(&mut self, block: &Codeblock<'_>, top: u8) {
        let planes = &mut self.masks[..=top as usize];
        for y in 0..block.height() {
            let row = block.row(y);
            for x in 0..2 {
                let mut bits = lane_magnitudes(row, x);
                transpose32(&mut bits);
                for (plane, &mask) in planes.iter_mut().zip(&bits) {
                    plane[y][x] = mask;
                }
            }
        }
    }

    #[inline(always)]
    fn mask(&self, _: &Codeblock<'_>, y: usize, x: usize, j: u8) -> u32 {
        self.masks[j as usize][y][x]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The transpose gives every bitplane's mask of the lane magnitudes.
        #[test]
        fn transpose_gives_every_bitplane_mask(mags in proptest::prelude::any::<[u32; LANES]>()) {
            let mut planes = mags;
            transpose32(&mut planes);
            for j in 0..32u8 {
                proptest::prop_assert_eq!(planes[j as usize], bitplane_mask(&mags, j), "bitplane {}", j);
            }
        }
    }
}
