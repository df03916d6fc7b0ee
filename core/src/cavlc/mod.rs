//! H.264 CAVLC residual block coding (clause 9.2), for every residual block
//! type of the Baseline and Main profiles with 4:2:0 chroma.
//!
//! One block is coded by [`encode_block`] and read back by [`decode_block`]
//! given its [`BlockKind`] and its context `nC`. Coefficients are `i16` in
//! **scan order** (zigzag already applied, see [`tables::ZIGZAG_4X4`]); a
//! block holds [`BlockKind::max_coeffs`] of them: 16 for a 4x4 luma block and
//! the Intra16x16 DC block, 15 for AC blocks (scan positions 1..=15), 4 for
//! the 2x2 chroma DC block.
//!
//! `nC` is derived from the TotalCoeff of the left and upper neighbouring
//! blocks ([`nc`]); [`frame`] lays out all blocks of a picture the way the
//! GPU encoder reads them and derives every block's `nC` from that layout.
//!
//! ```
//! use wavelane_core::bits::{BitReader, BitWriter};
//! use wavelane_core::cavlc::{decode_block, encode_block, BlockKind};
//!
//! // The worked example of the CAVLCU paper (scan order), nC = 5.
//! let coeffs = [5i16, 1, 0, -1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0];
//! let mut buf = [0u8; 8];
//! let mut w = BitWriter::new(&mut buf);
//! let total = encode_block(&mut w, BlockKind::Luma4x4, 5, &coeffs).unwrap();
//! assert_eq!((total, w.bit_position()), (5, 22));
//! let mut back = [0i16; 16];
//! let mut r = BitReader::new(&buf);
//! decode_block(&mut r, BlockKind::Luma4x4, 5, &mut back).unwrap();
//! assert_eq!(back, coeffs);
//! ```

mod decode;
mod encode;
pub mod frame;
pub mod nc;
mod sink;
pub mod tables;

pub use decode::decode_block;
pub use encode::{encode_block, level_fits, MAX_BLOCK_BITS};
pub use sink::{BitCounter, BitSink, WordSlot, SLOT_WORDS};

use crate::bits::BitError;

/// The residual block types of 4:2:0 Baseline/Main CAVLC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum BlockKind {
    /// A 4x4 luma block of an Intra4x4 (or inter) macroblock: 16 coefficients.
    Luma4x4,
    /// The 16 Hadamard-transformed DC coefficients of an Intra16x16 macroblock.
    Intra16x16Dc,
    /// The 15 AC coefficients of a 4x4 luma block of an Intra16x16 macroblock.
    Intra16x16Ac,
    /// The 4 DC coefficients of one 4:2:0 chroma component (always nC = -1).
    ChromaDc,
    /// The 15 AC coefficients of a 4x4 chroma block.
    ChromaAc,
}

impl BlockKind {
    /// Number of coefficients the block codes (`maxNumCoeff`).
    pub const fn max_coeffs(self) -> usize {
        match self {
            BlockKind::Luma4x4 | BlockKind::Intra16x16Dc => 16,
            BlockKind::Intra16x16Ac | BlockKind::ChromaAc => 15,
            BlockKind::ChromaDc => 4,
        }
    }

    /// All kinds, for tests and tools that iterate over them.
    pub const ALL: [BlockKind; 5] = [
        BlockKind::Luma4x4,
        BlockKind::Intra16x16Dc,
        BlockKind::Intra16x16Ac,
        BlockKind::ChromaDc,
        BlockKind::ChromaAc,
    ];
}

/// Errors of CAVLC encoding and decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum CavlcError {
    /// The bit writer or reader failed (output full, input ended).
    Bits(BitError),
    /// The coefficient slice does not hold `max_coeffs` values of the kind.
    WrongCoeffCount {
        /// Coefficients the block kind codes.
        expected: u8,
        /// Length of the slice given.
        got: usize,
    },
    /// nC is not valid for the kind: chroma DC needs -1, every other kind nC >= 0.
    BadNc(i8),
    /// A level cannot be coded with level_prefix <= 15 (Baseline/Main limit).
    LevelTooLarge(i16),
    /// No coeff_token code matches the input.
    InvalidCoeffToken,
    /// coeff_token gives more coefficients than the block holds.
    TooManyCoeffs(u8),
    /// level_prefix above 15, which Baseline/Main streams may not contain.
    LevelPrefixTooLarge,
    /// No total_zeros code matches, or total_zeros exceeds the free positions.
    InvalidTotalZeros,
    /// No run_before code matches, or the run exceeds the zeros left.
    InvalidRunBefore,
}

impl From<BitError> for CavlcError {
    fn from(e: BitError) -> Self {
        CavlcError::Bits(e)
    }
}

impl core::fmt::Display for CavlcError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            CavlcError::Bits(e) => write!(f, "CAVLC bit I/O: {e}"),
            CavlcError::WrongCoeffCount { expected, got } => {
                write!(f, "block needs {expected} coefficients, got {got}")
            }
            CavlcError::BadNc(nc) => write!(f, "nC {nc} is not valid for this block kind"),
            CavlcError::LevelTooLarge(l) => {
                write!(
                    f,
                    "level {l} needs level_prefix > 15 (not allowed in Baseline/Main)"
                )
            }
            CavlcError::InvalidCoeffToken => f.write_str("invalid coeff_token"),
            CavlcError::TooManyCoeffs(n) => write!(
                f,
                "coeff_token says {n} coefficients, more than the block holds"
            ),
            CavlcError::LevelPrefixTooLarge => f.write_str("level_prefix above 15"),
            CavlcError::InvalidTotalZeros => f.write_str("invalid total_zeros"),
            CavlcError::InvalidRunBefore => f.write_str("invalid run_before"),
        }
    }
}

impl core::error::Error for CavlcError {}

#[cfg(test)]
mod tests;
