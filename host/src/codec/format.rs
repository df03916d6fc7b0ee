//! The `.wl` container's vocabulary: magic, version, hard limits, the coded
//! enumerations (colour transform, wavelet, probability tables) and the
//! typed errors a reader reports. `docs/format.md` is the normative text;
//! this module is its code form.

use wavelane_core::bpc::Mode;
use wavelane_core::dwt::Wavelet;

/// The first 8 bytes of every `.wl` file: a non-ASCII byte (so a text tool
/// does not mistake it), the name, and CR LF (which catches text-mode
/// transfers that rewrite line ends).
pub const MAGIC: [u8; 8] = *b"\x89WLANE\r\n";

/// The format version this crate writes.
pub const VERSION: u16 = 2;
/// The oldest version this crate reads (docs/format.md, "Version history":
/// version 1 files are version 2 files with preset 0 or embedded tables and
/// a zero table row offset).
pub const OLDEST_READABLE_VERSION: u16 = 1;

/// Largest width or height.
pub const MAX_DIMENSION: u32 = 65_535;
/// Most components (gray, gray + alpha, RGB, RGBA).
pub const MAX_COMPONENTS: u8 = 4;
/// Largest bit depth per component.
pub const MAX_BIT_DEPTH: u8 = 16;
/// Most decomposition levels (65535 halves to 1 in 16 levels).
pub const MAX_LEVELS: u8 = 16;
/// Most quality layers.
pub const MAX_LAYERS: u8 = 32;
/// Most fractional bits the samples may carry before the transform.
pub const MAX_FRACTION_BITS: u8 = 8;
/// Codeblock width: the 32 BPC-PaCo lanes of two columns.
pub const CODEBLOCK_WIDTH: usize = wavelane_core::bpc::MAX_WIDTH;
/// Largest codeblock height.
pub const MAX_CODEBLOCK_HEIGHT: u16 = wavelane_core::bpc::MAX_HEIGHT as u16;
/// Default memory budget of a decoder: at most this many samples
/// (width x height x components), i.e. 1 GiB of 32-bit coefficients.
pub const DEFAULT_MAX_SAMPLES: u64 = 1 << 28;
/// Bytes of the fixed part of the main header (magic through reserved).
pub const FIXED_HEADER_BYTES: usize = 36;

/// Header flag: one quantization step list per component (else one list
/// shared by all components).
pub const FLAG_STEPS_PER_COMPONENT: u8 = 1 << 0;
/// Header flag: every non-empty codeblock carries a bitplane shift (the
/// encoder dropped its lowest bitplanes: early termination).
pub const FLAG_BLOCK_SHIFTS: u8 = 1 << 1;
/// All flags this version defines; other bits must be zero.
pub const KNOWN_FLAGS: u8 = FLAG_STEPS_PER_COMPONENT | FLAG_BLOCK_SHIFTS;

/// Colour (multi-component) transform applied to the first three components.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ColourTransform {
    /// Components are coded as they are.
    None,
    /// JPEG 2000 reversible colour transform (integer, lossless).
    Rct,
    /// Irreversible YCbCr transform in Q14 fixed point (lossy).
    Ict,
}

impl ColourTransform {
    /// The byte that stands for it in the header.
    pub const fn code(self) -> u8 {
        match self {
            ColourTransform::None => 0,
            ColourTransform::Rct => 1,
            ColourTransform::Ict => 2,
        }
    }

    /// The transform a header byte stands for.
    pub const fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(ColourTransform::None),
            1 => Some(ColourTransform::Rct),
            2 => Some(ColourTransform::Ict),
            _ => None,
        }
    }

    /// Lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            ColourTransform::None => "none",
            ColourTransform::Rct => "rct",
            ColourTransform::Ict => "ict",
        }
    }
}

/// Header byte of a wavelet.
pub const fn wavelet_code(w: Wavelet) -> u8 {
    match w {
        Wavelet::Cdf53 => 0,
        Wavelet::Cdf97 => 1,
        Wavelet::Fixed97 => 2,
    }
}

/// The wavelet of a header byte.
pub const fn wavelet_from_code(code: u8) -> Option<Wavelet> {
    match code {
        0 => Some(Wavelet::Cdf53),
        1 => Some(Wavelet::Cdf97),
        2 => Some(Wavelet::Fixed97),
        _ => None,
    }
}

/// Short name of a wavelet (`"5/3"`, `"9/7"`, `"9/7-fixed"`).
pub const fn wavelet_name(w: Wavelet) -> &'static str {
    match w {
        Wavelet::Cdf53 => "5/3",
        Wavelet::Cdf97 => "9/7",
        Wavelet::Fixed97 => "9/7-fixed",
    }
}

/// Header byte meaning the tables are embedded in the header.
pub const TABLES_EMBEDDED: u8 = 255;
/// Header byte meaning a preset with changes listed in the header
/// (version 2; [`super::adapt`]).
pub const TABLES_ADJUSTED: u8 = 254;

/// The BPC-PaCo mode of a header byte (the number of passes).
pub const fn mode_from_code(code: u8) -> Option<Mode> {
    Mode::from_passes(code)
}

/// Why a `.wl` file was rejected. Every field is checked before it is used;
/// none of these is ever a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// The bytes end before the structure being read.
    #[error("file truncated: the {what} needs {needed} bytes, only {available} present")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes it needs.
        needed: u64,
        /// Bytes there are.
        available: u64,
    },
    /// Not a `.wl` file.
    #[error("not a wavelane file (bad magic bytes)")]
    BadMagic,
    /// A version this reader does not know.
    #[error("format version {0} is not supported (this reader knows versions {OLDEST_READABLE_VERSION}..={VERSION})")]
    UnsupportedVersion(u16),
    /// A header field holds a value outside its documented range.
    #[error("header field `{field}` = {value} is invalid: {rule}")]
    BadField {
        /// Field name as in docs/format.md.
        field: &'static str,
        /// The value found.
        value: u64,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// The header's CRC-32 does not match its bytes.
    #[error("header CRC mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    HeaderCrc {
        /// CRC in the file.
        stored: u32,
        /// CRC of the bytes.
        computed: u32,
    },
    /// A data segment's CRC-32 does not match its bytes.
    #[error("CRC mismatch in the data of resolution {resolution}, layer {layer}: stored {stored:#010x}, computed {computed:#010x}")]
    SegmentCrc {
        /// Resolution (0 = LL).
        resolution: usize,
        /// Quality layer.
        layer: usize,
        /// CRC in the file.
        stored: u32,
        /// CRC of the bytes.
        computed: u32,
    },
    /// The codeblock index is malformed.
    #[error("codeblock index: {0}")]
    Index(String),
    /// The image is larger than the reader's memory budget.
    #[error("image of {samples} samples exceeds the memory budget of {limit} samples")]
    TooLarge {
        /// Samples of the image.
        samples: u64,
        /// Budget.
        limit: u64,
    },
    /// Bytes follow the last segment.
    #[error("{0} bytes of trailing data after the last segment")]
    TrailingData(u64),
    /// The writer was given something the format cannot hold.
    #[error("cannot write: {0}")]
    Unrepresentable(String),
}

/// Checks `value` is in `range`, else a [`FormatError::BadField`].
pub(crate) fn check_field(
    field: &'static str,
    value: u64,
    ok: bool,
    rule: &'static str,
) -> Result<(), FormatError> {
    if ok {
        Ok(())
    } else {
        Err(FormatError::BadField { field, value, rule })
    }
}
