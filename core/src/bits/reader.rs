use bitvec::prelude::*;

use super::BitError;

/// MSB-first bit reader over a byte slice. Never reads past the slice.
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    bits: &'a BitSlice<u8, Msb0>,
    pos: usize,
}

impl<'a> BitReader<'a> {
    /// A reader that starts at bit 0 of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        BitReader {
            bits: buf.view_bits::<Msb0>(),
            pos: 0,
        }
    }

    /// A reader over the first `len_bits` bits of `buf` only (clamped to the slice).
    pub fn with_bit_len(buf: &'a [u8], len_bits: usize) -> Self {
        let bits = buf.view_bits::<Msb0>();
        let len = len_bits.min(bits.len());
        BitReader {
            bits: &bits[..len],
            pos: 0,
        }
    }

    /// Number of bits consumed so far.
    pub fn bit_position(&self) -> usize {
        self.pos
    }

    /// Number of bits left.
    pub fn remaining_bits(&self) -> usize {
        self.bits.len() - self.pos
    }

    /// Reads `n` (0..=32) bits as an unsigned value, first bit most significant.
    pub fn read_bits(&mut self, n: u32) -> Result<u32, BitError> {
        let v = self.peek_bits(n)?;
        self.pos += n as usize;
        Ok(v)
    }

    /// Returns the next `n` (0..=32) bits without consuming them.
    pub fn peek_bits(&self, n: u32) -> Result<u32, BitError> {
        if n > 32 {
            return Err(BitError::TooManyBits);
        }
        let n = n as usize;
        if n == 0 {
            return Ok(0);
        }
        if self.remaining_bits() < n {
            return Err(BitError::UnexpectedEnd);
        }
        Ok(self.bits[self.pos..self.pos + n].load_be::<u32>())
    }

    /// Returns the next `n` (0..=32) bits without consuming them, padding with
    /// zero bits past the end of the input. Table-driven decoders use this to
    /// look up a code near the end of a stream; they must still check with
    /// [`BitReader::skip_bits`] that the code they found fits.
    pub fn peek_bits_padded(&self, n: u32) -> Result<u32, BitError> {
        if n > 32 {
            return Err(BitError::TooManyBits);
        }
        let avail = self.remaining_bits().min(n as usize) as u32;
        let head = self.peek_bits(avail)?;
        Ok(if avail == n {
            head
        } else if avail == 0 {
            0 // nothing left: all padding (a shift by 32 would overflow)
        } else {
            // 0 < avail < n <= 32, so the shift is below 32.
            head << (n - avail)
        })
    }

    /// Reads one bit.
    pub fn read_bit(&mut self) -> Result<bool, BitError> {
        if self.remaining_bits() == 0 {
            return Err(BitError::UnexpectedEnd);
        }
        let b = self.bits[self.pos];
        self.pos += 1;
        Ok(b)
    }

    /// Skips `n` bits.
    pub fn skip_bits(&mut self, n: usize) -> Result<(), BitError> {
        if self.remaining_bits() < n {
            return Err(BitError::UnexpectedEnd);
        }
        self.pos += n;
        Ok(())
    }

    /// True when the position is on a byte boundary.
    pub fn is_byte_aligned(&self) -> bool {
        self.pos.is_multiple_of(8)
    }
}
