//! BPC-PaCo: Bitplane Coding with Parallel Coefficient Processing.
//!
//! A codeblock of up to 64 x 256 quantized wavelet coefficients is coded
//! bitplane by bitplane. It is split into 32 **lanes** of two columns each;
//! every lane has its own fixed-length-codeword arithmetic coder (16-bit
//! codewords, 7-bit probabilities), and the codewords of all lanes are
//! interleaved in one stream in the order the lanes reserve them. The
//! bitstream is the one of `docs/bpc-paco.md` (normative text: the project's
//! BPC-PaCo specification), interchangeable with the published reference GPU
//! implementation.
//!
//! The forms of the coders, equal byte for byte:
//! - [`encode_sequential`] / [`decode_sequential`]: symbols in canonical
//!   order (bitplane, pass, step, phase, lane). The firmware path.
//! - [`encode_lanes`] / [`decode_lanes`]: all 32 lanes in lock-step, one
//!   phase at a time, reserving codeword slots with a ballot and a prefix
//!   popcount per subgroup, exactly as `shaders/bpc/encode.glsl` and
//!   `shaders/bpc/decode.glsl` do for any subgroup size.
//! - [`decode_phases`]: the canonical order with every phase of a step
//!   decoded for all 32 lanes at once, in vectorizable loops; the host's
//!   CPU decoder. It also takes a [`LaneMagnitudes`] (16 KiB for 64 rows).
//!   [`decode_phases_rows`] writes a [`CodeblockRows`] instead (each row a
//!   slice of its own), so that codeblocks sharing rows of one array decode
//!   in parallel straight into it.
//! - [`encode_plane_maps`]: 2-pass tables only, the model of
//!   `shaders/bpc/encode_planes.glsl`: each bitplane rebuilds two lane-mask
//!   maps from the magnitudes (its bits, and "significant before it")
//!   instead of keeping state maps; same codewords as the other encoders,
//!   no pass records. It takes [`PlaneMaps`] (1.5 KiB for 64 rows).
//!
//! # Memory
//! Nothing is allocated. The caller provides the coefficient slice, the
//! output slice and a [`Scratch`] whose const parameter bounds the codeblock
//! height: `Scratch<64>` is 2 KiB, `Scratch<256>` 8 KiB. The coders keep 32
//! lane states (384 bytes) on the stack. [`encode_sequential_planes`] and
//! [`observe_symbols_planes`] also take a [`BitPlanes`] (`BitPlanes<64>` is
//! 16 KiB, `BitPlanes<256>` 64 KiB), the codeblock's magnitudes transposed
//! once: the host's faster form; every other entry point needs none of it.
//!
//! # Output
//! Codewords are `u16` values in a caller `&mut [u16]`, slot order; the byte
//! form of a stream is each codeword big-endian ([`codewords_to_be_bytes`]).
//!
//! # Example
//! ``
//! use wavelane_core::bpc::{self, Codeblock, CodingParams, ProbabilityTables, Scratch};
//!
//! let coefficients = [5, -3, 0, 12, 0, 0, -1, 7]; // 4 wide, 2 tall
//! let block = Codeblock::new(&coefficients, 4, 4, 2).unwrap();
//! let params = CodingParams::new(&ProbabilityTables::REFERENCE_TWO_PASS, bpc::group_index(0, bpc::Orientation::HH));
//! let mut scratch = Scratch::<64>::new();
//! let mut words = [0u16; 64];
//! let mut records = [bpc::PassRecord::EMPTY; bpc::MAX_PASSES];
//! let enc = bpc::encode_sequential(&block, &params, &mut scratch, &mut words, Some(&mut records)).unwrap();
//! assert_eq!(enc.top_bitplane, Some(3)); // 12 = 0b1100
//!
//! let mut decoded = [0i32; 8];
//! let dec = bpc::decode_sequential(
//!     &params, enc.top_bitplane, &words[..enc.codewords], bpc::DecodeLimits::ALL,
//!     bpc::CodeblockMut::new(&mut decoded, 4, 4, 2).unwrap(), &mut scratch,
//! ).unwrap();
//! assert!(dec.complete);
//! assert_eq!(decoded, coefficients);
//! ``

mod block;
mod coder;
mod context;
mod decode;
mod encode;
mod error;
mod lut;
mod lut_natural;
mod lut_reference;
mod masks;
mod passes;
mod record;
mod state;

#[cfg(test)]
mod tests_hand;
#[cfg(test)]
mod tests_phases;
#[cfg(test)]
mod tests_plane_maps;
#[cfg(test)]
mod tests_prop;

pub use block::{Codeblock, CodeblockMut, CodeblockRows};
pub use coder::{reserve_slots, SlotReservation};
pub use decode::lanes::decode_lanes;
pub use decode::phases::{decode_phases, decode_phases_rows, LaneMagnitudes};
pub use decode::sequential::decode_sequential;
pub use encode::lanes::encode_lanes;
pub use encode::observe::{SymbolClass, SymbolObserver, WithoutDistortion};
pub use encode::plane_maps::{encode_plane_maps, PlaneMaps};
pub use encode::planes::BitPlanes;
pub use encode::sequential::{
    encode_sequential, encode_sequential_observed, encode_sequential_planes, observe_symbols,
    observe_symbols_planes,
};
pub use error::{DecodeError, EncodeError, GeometryError};
pub use lut::{GroupTables, LutError, ProbabilityTables};
pub use passes::{pass_count, PassKind, PassSchedule};
pub use record::{reconstruct_magnitude, squared_error, PassRecord};
pub use state::Scratch;

/// Lanes per codeblock (each owns two adjacent columns).
pub const LANES: usize = 32;
/// Maximum codeblock width.
pub const MAX_WIDTH: usize = 2 * LANES;
/// Maximum codeblock height.
pub const MAX_HEIGHT: usize = 256;
/// Default codeblock height.
pub const DEFAULT_HEIGHT: usize = 64;
/// Bits of a codeword (`W`).
pub const CODEWORD_BITS: u32 = 16;
/// Bits of a probability (`P` is in units of 1/128).
pub const PROBABILITY_BITS: u32 = 7;
/// Coefficients must satisfy `|v| < 2^COEFFICIENT_BITS`.
pub const COEFFICIENT_BITS: u32 = 28;
/// Highest possible `M` (most significant bitplane).
pub const MAX_BITPLANE: u8 = (COEFFICIENT_BITS - 1) as u8;
/// Bitplanes that have rows in the probability tables (0..=14).
pub const TABLE_BITPLANES: usize = 15;
/// Table groups: 5 levels x (HL, LH, HH), then LL.
pub const GROUPS: usize = 16;
/// The LL band's group index.
pub const LL_GROUP: usize = GROUPS - 1;
/// Most passes a codeblock can have (3-pass mode with `M` = 27).
pub const MAX_PASSES: usize = 1 + 3 * MAX_BITPLANE as usize;

/// Coding mode: which passes each bitplane has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Mode {
    /// SPP and MRP in every bitplane.
    TwoPass,
    /// CP alone in bitplane `M`, then SPP, MRP, CP in every lower bitplane.
    ThreePass,
}

impl Mode {
    /// 2 or 3.
    pub const fn passes(self) -> u8 {
        match self {
            Mode::TwoPass => 2,
            Mode::ThreePass => 3,
        }
    }

    /// The mode with `passes` passes (2 or 3).
    pub const fn from_passes(passes: u8) -> Option<Mode> {
        match passes {
            2 => Some(Mode::TwoPass),
            3 => Some(Mode::ThreePass),
            _ => None,
        }
    }
}

/// Subband orientation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Orientation {
    /// Horizontal high-pass, vertical low-pass.
    HL = 0,
    /// Horizontal low-pass, vertical high-pass.
    LH = 1,
    /// High-pass both ways.
    HH = 2,
    /// The low-pass band of the coarsest level.
    LL = 3,
}

/// The probability-table group of a subband (spec section 5): detail bands
/// use `3 * level + orientation` with level 0 the finest and levels above 4
/// clamped to 4; the LL band always uses [`LL_GROUP`], whatever its level.
///
/// ``
/// use wavelane_core::bpc::{group_index, Orientation, LL_GROUP};
/// assert_eq!(group_index(0, Orientation::HL), 0);
/// assert_eq!(group_index(2, Orientation::HH), 8);
/// assert_eq!(group_index(7, Orientation::LH), 13);
/// assert_eq!(group_index(3, Orientation::LL), LL_GROUP);
/// ``
pub const fn group_index(level: u8, orientation: Orientation) -> usize {
    let level = if level > 4 { 4 } else { level as usize };
    match orientation {
        Orientation::LL => LL_GROUP,
        o => 3 * level + o as usize,
    }
}

/// What a coder needs besides the coefficients: the probability tables (they
/// carry the [`Mode`]) and the table group of the codeblock's subband.
#[derive(Debug, Clone, Copy)]
pub struct CodingParams<'a> {
    /// Probability tables; their mode is the coding mode.
    pub tables: &'a ProbabilityTables,
    /// Group index (see [`group_index`]); values above 15 are an error.
    pub group: usize,
}

impl<'a> CodingParams<'a> {
    /// Parameters for `tables` and `group`.
    pub const fn new(tables: &'a ProbabilityTables, group: usize) -> Self {
        CodingParams { tables, group }
    }

    /// The coding mode of the tables.
    pub const fn mode(&self) -> Mode {
        self.tables.mode()
    }
}

/// Result of encoding one codeblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Encoded {
    /// `Some(M)`, the most significant bitplane, or `None` for an empty
    /// (all-zero) codeblock, which has no codewords.
    pub top_bitplane: Option<u8>,
    /// Codewords written to the front of the output slice.
    pub codewords: usize,
    /// Passes coded (and records written when records were asked for).
    pub passes: usize,
}

/// How much of a stream to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DecodeLimits {
    /// Use at most this many codewords (the stream is truncated there).
    pub max_codewords: usize,
    /// Stop after this many complete passes (for streams truncated at a
    /// known pass boundary, as rate control produces).
    pub max_passes: usize,
}

impl DecodeLimits {
    /// Decode everything the stream holds.
    pub const ALL: DecodeLimits = DecodeLimits {
        max_codewords: usize::MAX,
        max_passes: usize::MAX,
    };

    /// At most `max_codewords` codewords, all passes.
    pub const fn codewords(max_codewords: usize) -> Self {
        DecodeLimits {
            max_codewords,
            max_passes: usize::MAX,
        }
    }
}

/// Result of decoding one codeblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Decoded {
    /// Codewords read (slots reserved) by the decoder.
    pub codewords_used: usize,
    /// Passes decoded completely.
    pub passes_completed: usize,
    /// Every pass of the codeblock was decoded (the reconstruction is exact
    /// when the stream was complete).
    pub complete: bool,
}

/// `M` of a codeblock: the highest set bit of the OR of all magnitudes, or
/// `None` when every coefficient is 0. Errors if a magnitude is `>= 2^28`.
#[inline]
pub fn most_significant_bitplane(block: &Codeblock<'_>) -> Result<Option<u8>, EncodeError> {
    let mut or = 0u32;
    for y in 0..block.height() {
        for &v in block.row(y) {
            or |= v.unsigned_abs();
        }
    }
    if or >> COEFFICIENT_BITS != 0 {
        return Err(EncodeError::CoefficientTooLarge);
    }
    Ok(if or == 0 {
        None
    } else {
        Some((31 - or.leading_zeros()) as u8)
    })
}

/// Worst-case codeword count of a `width x height` codeblock whose highest
/// bitplane is `top_bitplane` (`None`: empty), for any probability tables
/// and coefficients: `width * height * (M + 2)`.
pub const fn max_codewords(width: usize, height: usize, top_bitplane: Option<u8>) -> usize {
    match top_bitplane {
        None => 0,
        Some(m) => width * height * (m as usize + 2),
    }
}

/// Worst-case codeword count for any coefficients of a `width x height`
/// codeblock (`M` = 27): the output size that can never be too small.
pub const fn max_codewords_any(width: usize, height: usize) -> usize {
    max_codewords(width, height, Some(MAX_BITPLANE))
}

/// The exact number of symbols a codeblock codes, in either mode: every
/// coefficient codes one significance or refinement symbol in each bitplane
/// `M..=0` (in 3-pass mode those the SPP skips are coded by the CP, and the
/// MRP skips exactly the bitplane of significance), plus one sign symbol
/// per nonzero coefficient.
pub const fn symbol_count(
    width: usize,
    height: usize,
    top_bitplane: Option<u8>,
    nonzero: usize,
) -> usize {
    match top_bitplane {
        None => 0,
        Some(m) => width * height * (m as usize + 1) + nonzero,
    }
}

/// A bound on the codewords of a codeblock with `symbols` symbols (see
/// [`symbol_count`]) coded with tables whose smallest probability is
/// `min_probability` ([`ProbabilityTables::min_probability`]).
///
/// Each symbol shrinks a lane's interval; with `P = 0` one symbol can
/// exhaust a codeword, but with `1 <= P <= 127` an interval of `S` keeps at
/// least `S >> 7` after a symbol, so a fresh codeword (`S = 65535`) holds at
/// least three symbols. A lane coding `s` symbols then uses at most
/// `ceil(s / 3)` codewords, and summed over the lanes of the codeblock that
/// is at most `(symbols + 2 * lanes) / 3`. The GPU encoder sizes its output
/// with this bound, so it can never overflow.
pub const fn codeword_bound(width: usize, symbols: usize, min_probability: u8) -> usize {
    if min_probability == 0 || symbols == 0 {
        return symbols;
    }
    let lanes = if width.div_ceil(2) < LANES {
        width.div_ceil(2)
    } else {
        LANES
    };
    let bound = (symbols + 2 * lanes) / 3;
    if bound < symbols {
        bound
    } else {
        symbols
    }
}

/// Number of nonzero coefficients of a codeblock.
pub fn nonzero_count(block: &Codeblock<'_>) -> usize {
    (0..block.height())
        .map(|y| block.row(y).iter().filter(|v| **v != 0).count())
        .sum()
}

/// Writes `codewords` as big-endian bytes (the byte form of a stream) into
/// the front of `out`; returns the byte count, or `None` if `out` is short.
pub fn codewords_to_be_bytes(codewords: &[u16], out: &mut [u8]) -> Option<usize> {
    let n = codewords.len().checked_mul(2)?;
    let out = out.get_mut(..n)?;
    for (pair, w) in out.chunks_exact_mut(2).zip(codewords) {
        pair.copy_from_slice(&w.to_be_bytes());
    }
    Some(n)
}

/// Reads big-endian codeword bytes into `out`; returns the codeword count, or
/// `None` if `bytes` has odd length or `out` is short.
pub fn codewords_from_be_bytes(bytes: &[u8], out: &mut [u16]) -> Option<usize> {
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    let n = bytes.len() / 2;
    let out = out.get_mut(..n)?;
    for (w, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
        *w = u16::from_be_bytes([pair[0], pair[1]]);
    }
    Some(n)
}
