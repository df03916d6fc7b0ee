//! Bit-level I/O over caller-provided byte slices.
//!
//! All wavelane bitstreams that are not made of fixed-size words (CAVLC,
//! Exp-Golomb headers, Huffman-coded chunks) are written most significant bit
//! first: the first bit written is bit 7 of byte 0. Both the writer and the
//! reader are bounded by the slice they were given and report typed errors
//! instead of panicking, so they are safe on untrusted input.

mod expgolomb;
mod reader;
mod writer;

pub use reader::BitReader;
pub use writer::BitWriter;

/// Errors of the bit writer and reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum BitError {
    /// The output buffer has no room for the bits being written.
    BufferFull,
    /// The input ended before the requested bits.
    UnexpectedEnd,
    /// An Exp-Golomb code has more leading zeros than a 32-bit value allows.
    ExpGolombTooLong,
    /// More than 32 bits were requested in one call.
    TooManyBits,
}

impl core::fmt::Display for BitError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            BitError::BufferFull => "output buffer full",
            BitError::UnexpectedEnd => "unexpected end of bitstream",
            BitError::ExpGolombTooLong => "Exp-Golomb code longer than 32 bits",
            BitError::TooManyBits => "more than 32 bits requested at once",
        })
    }
}

impl core::error::Error for BitError {}
