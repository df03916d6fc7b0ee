//! The codec's errors: one enum for every failure of an encode or decode,
//! and a typed enum for options that contradict each other, the image or
//! the file (callers match on the variant, the CLI prints the message).

use wavelane_core::dwt::DwtError;

use super::format::FormatError;
use crate::bpc::BpcError;
use crate::dwt::DwtHostError;

/// Errors of the codec.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The input image is not codable.
    #[error("invalid image: {0}")]
    Image(String),
    /// Options that contradict each other, the image or the file.
    #[error("invalid options: {0}")]
    Options(#[from] OptionsError),
    /// The file is malformed.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The wavelet transform failed.
    #[error(transparent)]
    Dwt(#[from] DwtHostError),
    /// The bitplane coder failed (for a decoder: the data is corrupt).
    #[error(transparent)]
    Bpc(#[from] BpcError),
}

/// Encoder and decoder options that cannot be honoured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptionsError {
    /// A bits-per-pixel target that is not a positive finite number.
    #[error("--bpp {0} must be > 0")]
    Bpp(f64),
    /// A PSNR target that is not a positive finite number.
    #[error("--psnr {0} must be > 0")]
    Psnr(f64),
    /// Lossless coding with a wavelet other than the 5/3.
    #[error("lossless coding needs the 5/3 wavelet")]
    LosslessWavelet,
    /// More decomposition levels than the image size allows.
    #[error("{levels} levels: a {width}x{height} image allows at most {max}")]
    Levels {
        /// Levels asked for.
        levels: u8,
        /// Image width.
        width: usize,
        /// Image height.
        height: usize,
        /// The most the size allows.
        max: u8,
    },
    /// A colour transform on an image of fewer than 3 components.
    #[error("a colour transform needs at least 3 components")]
    ColourComponents,
    /// The irreversible colour transform with a lossless target.
    #[error("the ICT is irreversible; lossless coding uses the RCT or none")]
    LosslessIct,
    /// Fractional bits on the integer 5/3 path.
    #[error("the 5/3 path carries no fractional bits")]
    FractionBitsOn53,
    /// A base step on the 5/3 path, which codes its integer coefficients
    /// at step 1 (rate control cuts bitplanes instead).
    #[error(
        "the 5/3 codes at step 1, so a base step does nothing there \
         (use the 9/7 for --qstep, or --bpp/--psnr to set the rate)"
    )]
    StepOn53,
    /// More fractional bits than the format allows.
    #[error("{0} fractional bits (at most 8)")]
    FractionBits(u8),
    /// A BPC-PaCo pass count other than 2 or 3.
    #[error("--passes {0} (2 or 3)")]
    Passes(u8),
    /// A pass count other than 2 or 3 given to table training.
    #[error("passes must be 2 or 3")]
    TrainingPasses(u8),
    /// A base quantization step that is not a positive finite number.
    #[error("quantization step {0} must be > 0")]
    Step(f64),
    /// The image size and levels have no subband layout.
    #[error(transparent)]
    Subbands(#[from] DwtError),
    /// A layer count outside 1..=32.
    #[error("{0} layers (1..=32)")]
    Layers(u8),
    /// A table row offset with tables that are not a preset.
    #[error("a table row offset applies to built-in presets only")]
    RowOffsetWithoutPreset,
    /// A table row offset outside -14..=14.
    #[error("table row offset {0} (-14..=14)")]
    RowOffset(i8),
    /// An unknown preset id.
    #[error("no probability-table preset {0}")]
    Preset(u8),
    /// Custom tables of the other pass mode.
    #[error("the probability tables are for the other pass mode")]
    TableMode,
    /// A decode that drops more resolutions than the file has levels.
    #[error("--reduce {reduce}: the file has only {levels} decomposition levels")]
    Reduce {
        /// Resolutions asked to drop.
        reduce: u8,
        /// Decomposition levels of the file.
        levels: u8,
    },
    /// A decode of zero layers.
    #[error("--layers must be at least 1")]
    NoLayers,
}
