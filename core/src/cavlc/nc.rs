//! nC, the context that selects the coeff_token table (clause 9.2.1).
//!
//! nC is the rounded mean of the TotalCoeff of the left block (nA) and the
//! upper block (nB) when both are available, the one that is available
//! otherwise, and 0 when neither is. A neighbour is available when it lies
//! inside the picture and in the same slice. Its TotalCoeff counts 16 when its
//! macroblock is I_PCM, 0 when it is skipped or the block was not coded
//! (coded_block_pattern), and the coeff_token's TotalCoeff otherwise (for an
//! Intra16x16 macroblock, that of the AC block). Chroma DC always uses nC = -1.

/// The TotalCoeff of an available neighbouring block, as nC counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Neighbour {
    /// Outside the picture or in another slice.
    Unavailable,
    /// A block of an I_PCM macroblock: counts 16.
    Pcm,
    /// A skipped macroblock or a block not coded because of
    /// coded_block_pattern: counts 0.
    NotCoded,
    /// A coded block with this TotalCoeff (0..=16).
    Coded(u8),
}

impl Neighbour {
    /// The count nC uses, or `None` when unavailable.
    pub const fn count(self) -> Option<u8> {
        match self {
            Neighbour::Unavailable => None,
            Neighbour::Pcm => Some(16),
            Neighbour::NotCoded => Some(0),
            Neighbour::Coded(n) => Some(n),
        }
    }
}

/// nC from the left (`a`) and upper (`b`) neighbours (Table 2 of the
/// CAVLCU paper, docs/h264.md; clause 9.2.1 of H.264).
pub const fn nc_from_neighbours(a: Neighbour, b: Neighbour) -> i8 {
    match (a.count(), b.count()) {
        (Some(na), Some(nb)) => (na as i8 + nb as i8 + 1) >> 1,
        (Some(na), None) => na as i8,
        (None, Some(nb)) => nb as i8,
        (None, None) => 0,
    }
}

/// Position (x, y) in 4x4-block units inside the macroblock of the luma block
/// with index `luma4x4BlkIdx` (the order blocks are coded in: 8x8 quadrants
/// in raster order, 4x4 blocks in raster order inside each).
pub const fn luma_block_xy(blk: u8) -> (u8, u8) {
    (
        (blk & 1) | ((blk >> 1) & 2),
        ((blk >> 1) & 1) | ((blk >> 2) & 2),
    )
}

/// The luma4x4BlkIdx of the block at (x, y) in 4x4 units (inverse of
/// [`luma_block_xy`]).
pub const fn luma_block_index(x: u8, y: u8) -> u8 {
    (x & 1) | ((y & 1) << 1) | ((x & 2) << 1) | ((y & 2) << 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nc_rules() {
        use Neighbour::*;
        assert_eq!(nc_from_neighbours(Coded(4), Coded(6)), 5);
        assert_eq!(nc_from_neighbours(Coded(4), Coded(5)), 5);
        assert_eq!(nc_from_neighbours(Coded(3), Unavailable), 3);
        assert_eq!(nc_from_neighbours(Unavailable, Coded(7)), 7);
        assert_eq!(nc_from_neighbours(Unavailable, Unavailable), 0);
        assert_eq!(nc_from_neighbours(Pcm, Pcm), 16);
        assert_eq!(nc_from_neighbours(Pcm, NotCoded), 8);
        assert_eq!(nc_from_neighbours(NotCoded, Unavailable), 0);
    }

    #[test]
    fn block_index_layout() {
        // Figure 6-10 of H.264: the first row holds blocks 0, 1, 4, 5.
        let first_row: [u8; 4] = core::array::from_fn(|x| luma_block_index(x as u8, 0));
        assert_eq!(first_row, [0, 1, 4, 5]);
        let first_col: [u8; 4] = core::array::from_fn(|y| luma_block_index(0, y as u8));
        assert_eq!(first_col, [0, 2, 8, 10]);
        for blk in 0..16 {
            let (x, y) = luma_block_xy(blk);
            assert_eq!(luma_block_index(x, y), blk);
        }
    }
}
