//! Canonical, length-limited Huffman coding of byte streams (VLE), in a form
//! that encodes and decodes in parallel: the GVLE design (docs/vle.md).
//!
//! # Stages
//!
//! The pipeline, one module per stage:
//!
//! | stage | module | what |
//! |-------|--------|------|
//! | histogram | [`huffman`] | [`histogram`]: byte counts |
//! | code construction | [`huffman`] | [`code_lengths`]: optimal lengths ≤ `max_len` (package-merge), [`CodeTable`]: canonical codewords |
//! | table serialization | [`table`] | [`CodeTable::serialize`] / [`CodeTable::deserialize`]: a presence bitmap and packed lengths |
//! | encoding | [`encode()`] | [`encode()`]: MSB-first packed bits, cut into chunks of a fixed symbol count, with a chunk index of bit offsets |
//! | decoding | [`decode()`] | [`DecodeTable`] (multi-bit lookup) and [`decode_chunk`], chunk by chunk |
//! | GPU model | [`lanes`], [`lookback`] | the lane-parallel form the shaders run: per-invocation codeword assembly and block scans; the GVLE inter-block scan with decoupled look-back |
//!
//! # Chunks
//!
//! Chunks are concatenated without padding: chunk `c` holds symbols
//! `c * chunk_symbols ..` and starts at bit `index[c]` of the stream. Each
//! chunk decodes on its own, which is what makes decoding parallel.
//!
//! # Example
//!
//! ```
//! use wavelane_core::vle::{self, CodeTable, DecodeTable};
//!
//! let text = b"abracadabra, abracadabra";
//! let mut hist = [0u64; 256];
//! vle::histogram(text, &mut hist);
//! let table = CodeTable::from_histogram(&hist, vle::DEFAULT_MAX_LEN).unwrap();
//!
//! let bits = table.encoded_bits(&hist).unwrap();
//! let mut packed = [0u8; 64];
//! let mut index = [0u64; 1];
//! let end = vle::encode(text, &table, 32, &mut packed, &mut index).unwrap();
//! assert_eq!(end, bits);
//!
//! let decoder = DecodeTable::<1024>::new(&table).unwrap();
//! let mut back = [0u8; 24];
//! vle::decode_chunk(&decoder, &packed, index[0], end, &mut back).unwrap();
//! assert_eq!(&back, text);
//! ```

pub mod decode;
pub mod encode;
pub mod huffman;
pub mod lanes;
pub mod lookback;
pub mod table;

pub use decode::{check_index, decode, decode_chunk, DecodeTable, DEFAULT_LUT_SIZE};
pub use encode::{chunk_count, encode, encode_span, span_bits, BitPacker, SpanEnd};
pub use huffman::{code_lengths, histogram, CodeTable};
pub use table::MAX_TABLE_BYTES;

use crate::bits::BitError;

/// Number of distinct symbols (bytes).
pub const SYMBOLS: usize = 256;
/// Longest codeword any table may hold.
pub const MAX_CODE_LEN: u32 = 24;
/// Default limit on codeword length (the GVLE paper's 16).
pub const DEFAULT_MAX_LEN: u32 = 16;
/// Chunk sizes must be a multiple of this many symbols: one GPU invocation's
/// thread-input ([`lanes::THREAD_SYMBOLS`]), so chunk starts fall on
/// invocation boundaries.
pub const CHUNK_ALIGN: usize = lanes::THREAD_SYMBOLS;
/// Largest chunk: a chunk's bit length must fit in 32 bits with any code
/// (`MAX_CHUNK_SYMBOLS * MAX_CODE_LEN < 2^32`).
pub const MAX_CHUNK_SYMBOLS: usize = 1 << 24;

/// Errors of code construction, encoding and decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum VleError {
    /// A maximum code length outside `1..=MAX_CODE_LEN`.
    MaxLenOutOfRange(u32),
    /// More distinct symbols are used than codes of the length limit allow.
    LengthLimitTooSmall {
        /// Distinct symbols in the histogram.
        used: u32,
        /// The requested maximum code length.
        max_len: u32,
    },
    /// A code length above [`MAX_CODE_LEN`] in a table.
    CodeLengthTooLong(u8),
    /// The code lengths violate the Kraft inequality: the code is not prefix-free.
    NotPrefixFree,
    /// A serialized table ended early.
    TableTruncated,
    /// A serialized table has a malformed field.
    TableMalformed,
    /// The input holds a symbol that has no codeword in the table.
    SymbolWithoutCode(u8),
    /// `chunk_symbols` is 0, not a multiple of [`CHUNK_ALIGN`] or above [`MAX_CHUNK_SYMBOLS`].
    BadChunkSize(usize),
    /// The output buffer is too small for the encoded bits.
    OutputTooSmall,
    /// The chunk index slice does not have one entry per chunk.
    IndexLength {
        /// Entries needed.
        needed: usize,
        /// Entries given.
        given: usize,
    },
    /// A chunk index entry lies outside the data or before the previous one.
    BadIndex {
        /// The chunk.
        chunk: usize,
    },
    /// The bits of a chunk match no codeword.
    InvalidCode {
        /// Bit position of the bad code in the stream.
        bit: u64,
    },
    /// A chunk's codes do not end exactly at the chunk's end.
    ChunkLengthMismatch {
        /// Bit where the chunk should end.
        expected: u64,
        /// Bit where its codes ended.
        actual: u64,
    },
    /// The decode lookup table size is not a power of two in `2..=65536`.
    BadLookupSize(usize),
    /// A bit I/O error (table serialization).
    Bits(BitError),
}

impl From<BitError> for VleError {
    fn from(e: BitError) -> Self {
        match e {
            BitError::UnexpectedEnd => VleError::TableTruncated,
            other => VleError::Bits(other),
        }
    }
}

impl core::fmt::Display for VleError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            VleError::MaxLenOutOfRange(l) => {
                write!(f, "maximum code length {l} outside 1..={MAX_CODE_LEN}")
            }
            VleError::LengthLimitTooSmall { used, max_len } => write!(
                f,
                "{used} distinct symbols need longer codes than the limit of {max_len} bits"
            ),
            VleError::CodeLengthTooLong(l) => {
                write!(f, "code length {l} exceeds {MAX_CODE_LEN}")
            }
            VleError::NotPrefixFree => f.write_str("code lengths violate the Kraft inequality"),
            VleError::TableTruncated => f.write_str("code table truncated"),
            VleError::TableMalformed => f.write_str("code table malformed"),
            VleError::SymbolWithoutCode(s) => write!(f, "symbol {s:#04x} has no codeword"),
            VleError::BadChunkSize(n) => write!(
                f,
                "chunk size {n} must be a positive multiple of {CHUNK_ALIGN} up to {MAX_CHUNK_SYMBOLS}"
            ),
            VleError::OutputTooSmall => f.write_str("output buffer too small"),
            VleError::IndexLength { needed, given } => {
                write!(f, "chunk index has {given} entries, {needed} needed")
            }
            VleError::BadIndex { chunk } => write!(f, "chunk index entry {chunk} out of range"),
            VleError::InvalidCode { bit } => write!(f, "no codeword matches at bit {bit}"),
            VleError::ChunkLengthMismatch { expected, actual } => write!(
                f,
                "chunk codes end at bit {actual}, the index says {expected}"
            ),
            VleError::BadLookupSize(n) => {
                write!(f, "lookup table size {n} is not a power of two in 2..=65536")
            }
            VleError::Bits(e) => write!(f, "bit I/O: {e}"),
        }
    }
}

impl core::error::Error for VleError {}

/// Checks a chunk size: a positive multiple of [`CHUNK_ALIGN`], at most [`MAX_CHUNK_SYMBOLS`].
pub fn check_chunk_symbols(chunk_symbols: usize) -> Result<(), VleError> {
    if chunk_symbols == 0
        || !chunk_symbols.is_multiple_of(CHUNK_ALIGN)
        || chunk_symbols > MAX_CHUNK_SYMBOLS
    {
        return Err(VleError::BadChunkSize(chunk_symbols));
    }
    Ok(())
}
