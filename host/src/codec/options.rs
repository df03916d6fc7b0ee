//! What the caller asks of the encoder and the decoder (docs/codec.md).
//! [`super::plan`] turns encoder options into the file's coding parameters.

use wavelane_core::bpc::ProbabilityTables;
use wavelane_core::dwt::Wavelet;

use super::file::ReadOptions;
use super::format::ColourTransform;

/// What the encoder aims for.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RateTarget {
    /// Bit-exact reconstruction (5/3, RCT, every pass).
    Lossless,
    /// At most this many bits per pixel for the whole file.
    Bpp(f64),
    /// The smallest file whose PSNR reaches this (dB).
    Psnr(f64),
    /// Every pass of the lossy quantization (quality set by the step).
    AllPasses,
}

/// Which probability tables to code with.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum TableChoice {
    /// The built-in natural-image preset of the wavelet's path
    /// ([`super::tables::default_preset`]), rows moved to the image's scale; for
    /// lossless targets fitted like [`TableChoice::Trained`], on large
    /// images on a sample of the codeblocks ([`super::tables::lossless_fit_sample`]);
    /// for `--bpp` and `--psnr` targets (without early termination) fitted to
    /// the symbols of the passes a first allocation keeps, and kept when rate
    /// control predicts a better file (a fit on every symbol did not pay
    /// there: docs/history/codec.md).
    #[default]
    Default,
    /// The built-in natural-image preset of the wavelet's path, rows moved to
    /// the image's scale, never fitted ([`TableChoice::Default`] without the
    /// lossless fit).
    Natural,
    /// A built-in preset by id ([`super::tables`]), rows moved to the
    /// image's scale ([`super::tables::row_offset`]), not fitted.
    Preset(u8),
    /// These tables, embedded in the file.
    Custom(Box<ProbabilityTables>),
    /// The default preset fitted to the symbols of every codeblock: the row
    /// offset within one of the default that codes them in the fewest bits,
    /// and the cells worth changing stored as a change list in the header
    /// ([`super::adapt`]) when that saves more than it costs. Counting the
    /// symbols is one more coding pass.
    Trained,
}

/// Default codeblock height of lossless files.
pub const LOSSLESS_CODEBLOCK_HEIGHT: u16 = 64;

/// Default codeblock height of lossy files: the tallest. Every codeblock
/// that a file codes in part pays for its 32 lanes' unfinished codewords
/// where rate control cuts it (about a byte per lane), so fewer, taller
/// blocks waste less of a small budget: +0.2 dB at 1 bpp over 64 rows
/// (docs/history/codec.md).
pub const LOSSY_CODEBLOCK_HEIGHT: u16 = 256;

/// Encoder settings; `None` fields take the documented defaults.
#[derive(Debug, Clone)]
pub struct EncodeOptions {
    /// Rate or quality target.
    pub target: RateTarget,
    /// Wavelet (default: 5/3 lossless, fixed-point 9/7 lossy).
    pub wavelet: Option<Wavelet>,
    /// Decomposition levels (default `min(5, max for the size)`).
    pub levels: Option<u8>,
    /// BPC-PaCo passes per bitplane, 2 or 3 (default 3: 0.3 dB and 1% of
    /// lossless size better than 2 on photographs, docs/history/codec.md).
    pub passes: u8,
    /// Quality layers, 1..=32.
    pub layers: u8,
    /// Codeblock height, 1..=256 (default: [`LOSSLESS_CODEBLOCK_HEIGHT`]
    /// lossless, [`LOSSY_CODEBLOCK_HEIGHT`] for other targets).
    pub codeblock_height: Option<u16>,
    /// Colour transform (default: RCT lossless, ICT lossy, with >= 3 components).
    pub colour: Option<ColourTransform>,
    /// Probability tables.
    pub tables: TableChoice,
    /// Bitplanes a preset's rows are moved up (down when negative); `None`
    /// picks [`super::tables::row_offset`] from the bit depth and step. Presets
    /// only, -14..=14.
    pub table_row_offset: Option<i8>,
    /// Predict which low bitplanes rate control will drop and do not code
    /// them (lossy targets only; see docs/codec.md).
    pub early_termination: bool,
    /// Base quantization step in sample units (default `2^(bit_depth-8)`).
    pub base_step: Option<f64>,
    /// Fractional bits through the transform (default: 0 lossless, else up
    /// to 4 as the sample range allows).
    pub fraction_bits: Option<u8>,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            target: RateTarget::Lossless,
            wavelet: None,
            levels: None,
            passes: 3,
            layers: 1,
            codeblock_height: None,
            colour: None,
            tables: TableChoice::Default,
            table_row_offset: None,
            early_termination: false,
            base_step: None,
            fraction_bits: None,
        }
    }
}

impl EncodeOptions {
    /// Lossless with every default.
    pub fn lossless() -> Self {
        EncodeOptions::default()
    }

    /// `bpp` bits per pixel with every default.
    pub fn bpp(bpp: f64) -> Self {
        EncodeOptions {
            target: RateTarget::Bpp(bpp),
            ..EncodeOptions::default()
        }
    }
}

/// What to decode.
#[derive(Debug, Clone, Copy, Default)]
pub struct DecodeOptions {
    /// Skip the `reduce` finest resolutions: the image comes out
    /// `ceil(size / 2^reduce)` in each dimension.
    pub reduce: u8,
    /// Decode only this many quality layers (`None`: all).
    pub layers: Option<u8>,
    /// Memory budget and CRC checking.
    pub read: ReadOptions,
}
