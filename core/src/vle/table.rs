//! Compact serialization of a [`CodeTable`]: canonical codes are fully
//! described by their lengths, so only the lengths are stored.
//!
//! Layout (bits MSB-first, written with [`BitWriter`]):
//!
//! | field | size | meaning |
//! |-------|------|---------|
//! | `max_len` | 8 bits | longest codeword `L`, 0 for an empty table (then nothing follows) |
//! | presence | 256 bits | bit `s` set when symbol `s` has a codeword |
//! | lengths | `w` bits per present symbol, ascending | `len - 1`, with `w` = bits needed for `L - 1` (0 when `L = 1`) |
//! | padding | 0..=7 bits | zeros up to the byte boundary |
//!
//! A full 256-symbol table with `L = 16` takes 1 + 32 + 128 = 161 bytes;
//! English text (≈ 70 symbols) about 70 bytes. Reading validates every field:
//! `L ≤ 24`, at least one symbol present, every length ≤ `L` and one equal
//! to it, zero padding, and the Kraft inequality (via [`CodeTable::from_lengths`]).

use super::{CodeTable, VleError, MAX_CODE_LEN, SYMBOLS};
use crate::bits::{BitReader, BitWriter};

/// Largest serialized table: `1 + 32 + 256 * 5 / 8` bytes.
pub const MAX_TABLE_BYTES: usize = 1 + SYMBOLS / 8 + SYMBOLS * 5 / 8;

/// Bits needed to write values `0..=max`.
fn width(max: u32) -> u32 {
    32 - max.leading_zeros()
}

impl CodeTable {
    /// Number of bytes [`CodeTable::serialize`] writes.
    pub fn serialized_len(&self) -> usize {
        if self.is_empty() {
            return 1;
        }
        let w = width(self.max_len() - 1) as usize;
        1 + SYMBOLS / 8 + (self.used_symbols() as usize * w).div_ceil(8)
    }

    /// Writes the table into `out`; returns the number of bytes written.
    pub fn serialize(&self, out: &mut [u8]) -> Result<usize, VleError> {
        let n = self.serialized_len();
        let out = out.get_mut(..n).ok_or(VleError::OutputTooSmall)?;
        let mut w = BitWriter::new(out);
        w.write_bits(self.max_len(), 8)?;
        if self.is_empty() {
            return Ok(n);
        }
        for &l in self.lengths().iter() {
            w.write_bit(l > 0)?;
        }
        let bits = width(self.max_len() - 1);
        for &l in self.lengths().iter().filter(|&&l| l > 0) {
            w.write_bits(l as u32 - 1, bits)?;
        }
        w.align_zero()?;
        debug_assert_eq!(w.byte_len(), n);
        Ok(n)
    }

    /// Reads a table written by [`CodeTable::serialize`] from the start of
    /// `input`; returns it and the number of bytes it took.
    pub fn deserialize(input: &[u8]) -> Result<(CodeTable, usize), VleError> {
        let mut r = BitReader::new(input);
        let max_len = r.read_bits(8)?;
        let mut lens = [0u8; SYMBOLS];
        if max_len == 0 {
            return Ok((CodeTable::from_lengths(&lens)?, 1));
        }
        if max_len > MAX_CODE_LEN {
            return Err(VleError::TableMalformed);
        }
        let mut present = [false; SYMBOLS];
        for p in present.iter_mut() {
            *p = r.read_bit()?;
        }
        let bits = width(max_len - 1);
        let mut longest = 0;
        for (l, _) in lens.iter_mut().zip(present).filter(|(_, p)| *p) {
            let len = r.read_bits(bits)? + 1;
            if len > max_len {
                return Err(VleError::TableMalformed);
            }
            *l = len as u8;
            longest = longest.max(len);
        }
        if longest != max_len {
            // Also catches an empty presence bitmap.
            return Err(VleError::TableMalformed);
        }
        let pad = (8 - r.bit_position() % 8) % 8;
        if r.read_bits(pad as u32)? != 0 {
            return Err(VleError::TableMalformed);
        }
        let table = CodeTable::from_lengths(&lens)?;
        Ok((table, r.bit_position() / 8))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes() {
        let full = CodeTable::from_histogram(&[1; SYMBOLS], 16).unwrap();
        assert_eq!(full.serialized_len(), 1 + 32 + 256 * 3 / 8); // all 8 bits: w = 3
        let mut h = [0u64; SYMBOLS];
        h[0] = 5;
        let one = CodeTable::from_histogram(&h, 16).unwrap();
        assert_eq!(one.serialized_len(), 33); // L = 1: w = 0
        let mut buf = [0u8; MAX_TABLE_BYTES];
        let n = one.serialize(&mut buf).unwrap();
        assert_eq!(CodeTable::deserialize(&buf[..n]).unwrap(), (one, 33));
        let empty = CodeTable::from_histogram(&[0; SYMBOLS], 16).unwrap();
        assert_eq!(empty.serialize(&mut buf), Ok(1));
        assert_eq!(CodeTable::deserialize(&[0]).unwrap(), (empty, 1));
        assert_eq!(
            full.serialize(&mut buf[..10]),
            Err(VleError::OutputTooSmall)
        );
    }

    #[test]
    fn malformed_tables_are_errors() {
        assert_eq!(CodeTable::deserialize(&[]), Err(VleError::TableTruncated));
        assert_eq!(CodeTable::deserialize(&[25]), Err(VleError::TableMalformed));
        assert_eq!(
            CodeTable::deserialize(&[3; 5]),
            Err(VleError::TableTruncated)
        );
        // L = 2, nothing present.
        let mut t = [0u8; 34];
        t[0] = 2;
        assert_eq!(CodeTable::deserialize(&t), Err(VleError::TableMalformed));
        // L = 1, three symbols of length 1: Kraft sum 3/2.
        t[0] = 1;
        t[1] = 0b1110_0000;
        assert_eq!(CodeTable::deserialize(&t), Err(VleError::NotPrefixFree));
        // L = 2, one symbol of length 1 (w = 1, value 0): longest != L.
        t[0] = 2;
        t[1] = 0b1000_0000;
        t[33] = 0;
        assert_eq!(CodeTable::deserialize(&t), Err(VleError::TableMalformed));
        // ... with length 2 and non-zero padding.
        t[33] = 0b1100_0000;
        assert_eq!(CodeTable::deserialize(&t), Err(VleError::TableMalformed));
        t[33] = 0b1000_0000;
        assert_eq!(
            CodeTable::deserialize(&t).map(|(t, n)| (t.code_len(0), n)),
            Ok((2, 34))
        );
    }

    proptest! {
        #[test]
        fn round_trip(counts in proptest::collection::vec(0u64..1000, SYMBOLS), max_len in 8u32..=24) {
            let mut h = [0u64; SYMBOLS];
            for (s, &c) in counts.iter().enumerate() {
                h[s] = if c % 3 == 0 { 0 } else { c >> (s % 11) };
            }
            let t = CodeTable::from_histogram(&h, max_len).unwrap();
            let mut buf = [0xAAu8; MAX_TABLE_BYTES + 4];
            let n = t.serialize(&mut buf).unwrap();
            prop_assert!(n <= MAX_TABLE_BYTES);
            let (back, used) = CodeTable::deserialize(&buf).unwrap();
            prop_assert_eq!(used, n);
            prop_assert_eq!(back, t);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok((t, n)) = CodeTable::deserialize(&bytes) {
                prop_assert!(n <= bytes.len());
                prop_assert!(t.max_len() <= MAX_CODE_LEN);
            }
        }
    }
}
