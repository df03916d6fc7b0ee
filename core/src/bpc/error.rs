//! Error types of the BPC-PaCo coders.

use core::fmt;

/// A codeblock view could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum GeometryError {
    /// Width not in 1..=64, height not in 1..=256, or stride below width.
    BadGeometry,
    /// The slice does not hold the last row of the codeblock.
    SliceTooShort,
}

impl fmt::Display for GeometryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GeometryError::BadGeometry => {
                "codeblock width must be 1..=64, height 1..=256 and stride >= width"
            }
            GeometryError::SliceTooShort => "coefficient slice shorter than the codeblock",
        })
    }
}

impl core::error::Error for GeometryError {}

/// Errors of the encoders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EncodeError {
    /// A coefficient magnitude is `>= 2^28`.
    CoefficientTooLarge,
    /// The table group index is above 15.
    BadGroup,
    /// The codeblock is taller than the [`Scratch`](super::Scratch) allows.
    HeightExceedsScratch,
    /// The output slice has room for only `capacity` codewords; see
    /// [`max_codewords`](super::max_codewords) for a size that always fits.
    OutputTooSmall {
        /// Length of the output slice.
        capacity: usize,
    },
    /// The record slice is shorter than the `needed` passes.
    RecordsTooSmall {
        /// Passes of this codeblock.
        needed: usize,
    },
    /// The lane model's subgroup size is not a power of two in 1..=32.
    BadSubgroupSize,
    /// The plane-map encoder ([`encode_plane_maps`](super::encode_plane_maps))
    /// was given 3-pass tables: it codes 2 passes per bitplane only.
    NeedsTwoPasses,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::CoefficientTooLarge => f.write_str("coefficient magnitude >= 2^28"),
            EncodeError::BadGroup => f.write_str("probability-table group index above 15"),
            EncodeError::HeightExceedsScratch => {
                f.write_str("codeblock taller than the scratch buffer allows")
            }
            EncodeError::OutputTooSmall { capacity } => {
                write!(f, "output buffer of {capacity} codewords is too small")
            }
            EncodeError::RecordsTooSmall { needed } => {
                write!(f, "pass record buffer needs {needed} entries")
            }
            EncodeError::BadSubgroupSize => {
                f.write_str("subgroup size must be 1, 2, 4, 8, 16 or 32")
            }
            EncodeError::NeedsTwoPasses => f.write_str("the plane-map encoder needs 2-pass tables"),
        }
    }
}

impl core::error::Error for EncodeError {}

/// Errors of the decoders (the stream is untrusted input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum DecodeError {
    /// `M` is above 27.
    BadTopBitplane(u8),
    /// The table group index is above 15.
    BadGroup,
    /// The codeblock is taller than the [`Scratch`](super::Scratch) allows.
    HeightExceedsScratch,
    /// The stream decoded completely with codewords left over: it does not
    /// belong to this codeblock geometry, `M`, mode or tables.
    TrailingCodewords {
        /// Codewords the decoder read.
        used: usize,
        /// Codewords it was given.
        given: usize,
    },
    /// The lane model's subgroup size is not a power of two in 1..=32.
    BadSubgroupSize,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::BadTopBitplane(m) => write!(f, "top bitplane {m} above 27"),
            DecodeError::BadGroup => f.write_str("probability-table group index above 15"),
            DecodeError::HeightExceedsScratch => {
                f.write_str("codeblock taller than the scratch buffer allows")
            }
            DecodeError::TrailingCodewords { used, given } => write!(
                f,
                "stream decoded completely after {used} of its {given} codewords"
            ),
            DecodeError::BadSubgroupSize => {
                f.write_str("subgroup size must be 1, 2, 4, 8, 16 or 32")
            }
        }
    }
}

impl core::error::Error for DecodeError {}
