//! Where encoded bits go: a [`BitWriter`] (streams), a [`BitCounter`] (costs
//! for mode decision) or a [`WordSlot`] (the fixed 16-word slot per block
//! that the GPU encoder fills before packing). The encoder is written once
//! against [`BitSink`], so all three see the same bits.

use super::CavlcError;
use crate::bits::{BitError, BitWriter};

/// A destination for MSB-first bit strings.
pub trait BitSink {
    /// Appends the `len` (0..=32) low bits of `bits`, most significant first.
    fn put(&mut self, bits: u32, len: u32) -> Result<(), CavlcError>;
}

impl BitSink for BitWriter<'_> {
    fn put(&mut self, bits: u32, len: u32) -> Result<(), CavlcError> {
        Ok(self.write_bits(bits, len)?)
    }
}

/// Counts bits without storing them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct BitCounter {
    /// Bits appended so far.
    pub bits: u32,
}

impl BitSink for BitCounter {
    fn put(&mut self, _bits: u32, len: u32) -> Result<(), CavlcError> {
        if len > 32 {
            return Err(CavlcError::Bits(BitError::TooManyBits));
        }
        self.bits += len;
        Ok(())
    }
}

/// 32-bit words in one slot: 512 bits, enough for any Baseline/Main block
/// (at most [`super::MAX_BLOCK_BITS`] = 464 bits).
pub const SLOT_WORDS: usize = 16;

/// A fixed 512-bit slot, MSB-first in 32-bit words: bit `i` of the string is
/// bit `31 - i % 32` of `words[i / 32]`. This is the layout of one block's
/// output in the GPU encoder (`shaders/cavlc/cavlc_encode.comp`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct WordSlot {
    /// The bits; unused bits are zero.
    pub words: [u32; SLOT_WORDS],
    /// Number of bits written.
    pub len: u32,
}

impl BitSink for WordSlot {
    fn put(&mut self, bits: u32, len: u32) -> Result<(), CavlcError> {
        if len > 32 {
            return Err(CavlcError::Bits(BitError::TooManyBits));
        }
        if len == 0 {
            return Ok(());
        }
        if self.len + len > (SLOT_WORDS * 32) as u32 {
            return Err(CavlcError::Bits(BitError::BufferFull));
        }
        let v = if len == 32 {
            bits
        } else {
            bits & ((1u32 << len) - 1)
        };
        // Place the string in a 64-bit window starting at the current word so
        // that no shift reaches 32 (undefined in GLSL, mirrored here).
        let word = (self.len / 32) as usize;
        let used = self.len % 32;
        let window = (v as u64) << (64 - used - len);
        self.words[word] |= (window >> 32) as u32;
        if used + len > 32 {
            self.words[word + 1] |= window as u32;
        }
        self.len += len;
        Ok(())
    }
}

impl WordSlot {
    /// A slot holding the first `len_bits` bits of `buf` (MSB-first).
    pub fn from_bits(buf: &[u8], len_bits: u32) -> Result<WordSlot, CavlcError> {
        let mut r = crate::bits::BitReader::with_bit_len(buf, len_bits as usize);
        if r.remaining_bits() < len_bits as usize {
            return Err(CavlcError::Bits(BitError::UnexpectedEnd));
        }
        let mut slot = WordSlot::default();
        let mut left = len_bits;
        while left > 0 {
            let n = left.min(32);
            slot.put(r.read_bits(n)?, n)?;
            left -= n;
        }
        Ok(slot)
    }

    /// Appends the slot's bits to a writer (the sequential form of packing).
    pub fn write_to(&self, w: &mut BitWriter<'_>) -> Result<(), BitError> {
        let mut left = self.len;
        for &word in &self.words {
            if left == 0 {
                break;
            }
            let n = left.min(32);
            w.write_bits(word >> (32 - n), n)?;
            left -= n;
        }
        Ok(())
    }
}
