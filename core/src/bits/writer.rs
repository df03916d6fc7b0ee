use bitvec::prelude::*;

use super::BitError;

/// MSB-first bit writer into a caller-provided byte slice.
///
/// Bits that have not been written yet are left as they are in the slice; the
/// writer ORs nothing in, it stores whole bit ranges, so the buffer need not be
/// zeroed beforehand.
#[derive(Debug)]
pub struct BitWriter<'a> {
    bits: &'a mut BitSlice<u8, Msb0>,
    pos: usize,
}

impl<'a> BitWriter<'a> {
    /// A writer that starts at bit 0 of `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        BitWriter {
            bits: buf.view_bits_mut::<Msb0>(),
            pos: 0,
        }
    }

    /// Number of bits written so far.
    pub fn bit_position(&self) -> usize {
        self.pos
    }

    /// Number of bits that can still be written.
    pub fn remaining_bits(&self) -> usize {
        self.bits.len() - self.pos
    }

    /// Writes the `n` low bits of `value`, most significant first. `n` may be 0..=32.
    pub fn write_bits(&mut self, value: u32, n: u32) -> Result<(), BitError> {
        if n > 32 {
            return Err(BitError::TooManyBits);
        }
        let n = n as usize;
        if n == 0 {
            return Ok(());
        }
        if self.remaining_bits() < n {
            return Err(BitError::BufferFull);
        }
        let v = if n == 32 {
            value
        } else {
            value & ((1u32 << n) - 1)
        };
        self.bits[self.pos..self.pos + n].store_be::<u32>(v);
        self.pos += n;
        Ok(())
    }

    /// Writes one bit.
    pub fn write_bit(&mut self, bit: bool) -> Result<(), BitError> {
        if self.remaining_bits() == 0 {
            return Err(BitError::BufferFull);
        }
        self.bits.set(self.pos, bit);
        self.pos += 1;
        Ok(())
    }

    /// Writes `1` followed by zero bits up to the next byte boundary (the
    /// H.264 `rbsp_trailing_bits`); writes nothing else when already aligned
    /// apart from the stop bit.
    pub fn write_trailing_bits(&mut self) -> Result<(), BitError> {
        self.write_bit(true)?;
        self.align_zero()
    }

    /// Pads with zero bits to the next byte boundary.
    pub fn align_zero(&mut self) -> Result<(), BitError> {
        let pad = (8 - self.pos % 8) % 8;
        self.write_bits(0, pad as u32)
    }

    /// Number of whole or partial bytes touched so far.
    pub fn byte_len(&self) -> usize {
        self.pos.div_ceil(8)
    }
}
