//! MSB-first packing of codewords, cut into chunks with a chunk index.
//!
//! Codewords are packed by [`BitPacker`], a word-oriented writer: a 64-bit
//! accumulator that stores four bytes at a time. [`crate::bits::BitWriter`]
//! writes each call through a `bitvec` bit-slice store (shifts and masks per
//! byte touched), which is right for headers but costs several times more
//! per codeword than one shift-or into a register; the packer is what lets a
//! core encode above a gigabyte per second. The bit order is the same
//! (first bit = bit 7 of byte 0), so both produce identical bytes.

use super::{check_chunk_symbols, CodeTable, VleError, SYMBOLS};

/// Number of chunks of `chunk_symbols` symbols (the last one may be short)
/// that `len` symbols make.
pub fn chunk_count(len: usize, chunk_symbols: usize) -> usize {
    len.div_ceil(chunk_symbols.max(1))
}

/// Each symbol's codeword and length in one word: `code << 8 | len`
/// (codewords have at most 24 bits), so the hot loop does one load per symbol.
pub(crate) fn packed_codes(table: &CodeTable) -> [u32; SYMBOLS] {
    let mut packed = [0u32; SYMBOLS];
    for (s, p) in packed.iter_mut().enumerate() {
        *p = table.code(s as u8) << 8 | table.code_len(s as u8);
    }
    packed
}

/// How a span written by [`BitPacker`] ends: the complete bytes it wrote and
/// the bits of its last, incomplete byte, which it did not write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct SpanEnd {
    /// Complete bytes written from the start of the output slice.
    pub bytes: usize,
    /// The incomplete last byte, bits MSB-aligned, the rest zero.
    pub tail: u8,
    /// Number of valid bits in `tail` (0..=7).
    pub tail_bits: u32,
}

impl SpanEnd {
    /// Bit position just past the span, from the start of the output slice.
    pub fn end_bit(&self) -> u64 {
        self.bytes as u64 * 8 + self.tail_bits as u64
    }
}

/// Word-oriented MSB-first bit packer over a caller slice.
///
/// It may start `lead_bits` (0..=7) into the first byte: it then writes
/// zeros over those leading bits, which belong to whoever wrote the stream
/// before this span and are ORed in afterwards. This is how spans encoded in
/// parallel are stitched together.
#[derive(Debug)]
pub struct BitPacker<'a> {
    out: &'a mut [u8],
    next_byte: usize,
    acc: u64,
    pending: u32,
}

impl<'a> BitPacker<'a> {
    /// A packer whose first bit goes to bit `7 - lead_bits` of `out[0]`.
    pub fn new(out: &'a mut [u8], lead_bits: u32) -> Self {
        BitPacker {
            out,
            next_byte: 0,
            acc: 0,
            pending: lead_bits % 8,
        }
    }

    /// Bit position of the next bit, from bit 7 of `out[0]`.
    pub fn bit_position(&self) -> u64 {
        self.next_byte as u64 * 8 + self.pending as u64
    }

    /// Appends the `len` (0..=24) low bits of `code`, which must have no bits
    /// above `len` set.
    #[inline]
    pub fn put(&mut self, code: u32, len: u32) -> Result<(), VleError> {
        debug_assert!(len <= 24 && (code as u64) >> len == 0);
        // pending < 32 and len <= 24, so the shift is in 8..=64.
        let shift = 64 - self.pending - len;
        self.acc |= (code as u64).checked_shl(shift).unwrap_or(0);
        self.pending += len;
        if self.pending >= 32 {
            let word = (self.acc >> 32) as u32;
            let dst = self
                .out
                .get_mut(self.next_byte..self.next_byte + 4)
                .ok_or(VleError::OutputTooSmall)?;
            dst.copy_from_slice(&word.to_be_bytes());
            self.next_byte += 4;
            self.acc <<= 32;
            self.pending -= 32;
        }
        Ok(())
    }

    /// Writes the remaining complete bytes; returns where the span ends. The
    /// incomplete last byte is returned, not written.
    pub fn finish(mut self) -> Result<SpanEnd, VleError> {
        while self.pending >= 8 {
            let b = self
                .out
                .get_mut(self.next_byte)
                .ok_or(VleError::OutputTooSmall)?;
            *b = (self.acc >> 56) as u8;
            self.next_byte += 1;
            self.acc <<= 8;
            self.pending -= 8;
        }
        Ok(SpanEnd {
            bytes: self.next_byte,
            tail: (self.acc >> 56) as u8,
            tail_bits: self.pending,
        })
    }
}

/// Exact number of bits `symbols` encode to with `table`.
pub fn span_bits(symbols: &[u8], table: &CodeTable) -> Result<u64, VleError> {
    let lens = table.lengths();
    let mut bits = 0u64;
    for &s in symbols {
        let l = lens[s as usize];
        if l == 0 {
            return Err(VleError::SymbolWithoutCode(s));
        }
        bits += l as u64;
    }
    Ok(bits)
}

/// Encodes `symbols` into `out` starting `lead_bits` (0..=7) into `out[0]`
/// (those leading bits are written as zeros); the incomplete last byte is
/// returned in the [`SpanEnd`], not written. Spans encoded this way and
/// stitched by ORing each span's `tail` into the next span's first byte give
/// exactly the bytes of [`encode`].
pub fn encode_span(
    symbols: &[u8],
    table: &CodeTable,
    out: &mut [u8],
    lead_bits: u32,
) -> Result<SpanEnd, VleError> {
    let packed = packed_codes(table);
    let mut packer = BitPacker::new(out, lead_bits);
    for &s in symbols {
        let e = packed[s as usize];
        if e & 0xff == 0 {
            return Err(VleError::SymbolWithoutCode(s));
        }
        packer.put(e >> 8, e & 0xff)?;
    }
    packer.finish()
}

/// Encodes `symbols` with `table` into `out`, MSB-first, as one stream of
/// chunks of `chunk_symbols` symbols each (the last may be shorter). Writes
/// the bit offset of each chunk's first codeword to `index` (which must have
/// exactly [`chunk_count`] entries) and returns the total number of bits.
/// The last byte is zero-padded. `out` needs `bits.div_ceil(8)` bytes, where
/// `bits` is [`CodeTable::encoded_bits`] of the input's histogram.
pub fn encode(
    symbols: &[u8],
    table: &CodeTable,
    chunk_symbols: usize,
    out: &mut [u8],
    index: &mut [u64],
) -> Result<u64, VleError> {
    check_chunk_symbols(chunk_symbols)?;
    let needed = chunk_count(symbols.len(), chunk_symbols);
    if index.len() != needed {
        return Err(VleError::IndexLength {
            needed,
            given: index.len(),
        });
    }
    let packed = packed_codes(table);
    let mut packer = BitPacker::new(out, 0);
    for (chunk, entry) in symbols.chunks(chunk_symbols).zip(index.iter_mut()) {
        *entry = packer.bit_position();
        for &s in chunk {
            let e = packed[s as usize];
            if e & 0xff == 0 {
                return Err(VleError::SymbolWithoutCode(s));
            }
            packer.put(e >> 8, e & 0xff)?;
        }
    }
    let end = packer.finish()?;
    if end.tail_bits > 0 {
        *out.get_mut(end.bytes).ok_or(VleError::OutputTooSmall)? = end.tail;
    }
    Ok(end.end_bit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bits::BitWriter;
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

    fn table_for(data: &[u8], max_len: u32) -> CodeTable {
        let mut h = [0u64; SYMBOLS];
        crate::vle::histogram(data, &mut h);
        CodeTable::from_histogram(&h, max_len).unwrap()
    }

    /// The same stream written with the project's bit-slice writer.
    fn reference(data: &[u8], t: &CodeTable) -> (Vec<u8>, u64) {
        let mut buf = vec![0u8; data.len() * 3 + 8];
        let mut w = BitWriter::new(&mut buf);
        for &s in data {
            w.write_bits(t.code(s), t.code_len(s)).unwrap();
        }
        let bits = w.bit_position() as u64;
        buf.truncate(bits.div_ceil(8) as usize);
        (buf, bits)
    }

    #[test]
    fn packer_matches_bitwriter_and_index_is_right() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * i % 251 % 23) as u8).collect();
        let t = table_for(&data, 12);
        let (want, bits) = reference(&data, &t);
        let mut out = vec![0u8; want.len()];
        let mut index = vec![0u64; chunk_count(data.len(), 64)];
        assert_eq!(encode(&data, &t, 64, &mut out, &mut index), Ok(bits));
        assert_eq!(out, want);
        for (c, &off) in index.iter().enumerate() {
            assert_eq!(off, span_bits(&data[..c * 64], &t).unwrap());
        }
    }

    #[test]
    fn errors() {
        let t = table_for(b"abc", 16);
        let mut out = [0u8; 4];
        let mut index = [0u64; 1];
        assert_eq!(
            encode(b"abd", &t, 32, &mut out, &mut index),
            Err(VleError::SymbolWithoutCode(b'd'))
        );
        assert_eq!(
            encode(b"abc", &t, 33, &mut out, &mut index),
            Err(VleError::BadChunkSize(33))
        );
        assert_eq!(
            encode(b"abc", &t, 32, &mut out, &mut []),
            Err(VleError::IndexLength {
                needed: 1,
                given: 0
            })
        );
        let long = [b'a'; 100];
        assert_eq!(
            encode(&long, &t, 128, &mut out, &mut index),
            Err(VleError::OutputTooSmall)
        );
        assert_eq!(encode(b"", &t, 32, &mut out, &mut []), Ok(0));
    }

    proptest! {
        #[test]
        fn spans_stitch_to_the_whole_stream(
            data in proptest::collection::vec(0u8..40, 0..3000),
            cuts in proptest::collection::vec(0usize..3000, 0..6),
            max_len in 6u32..=24,
        ) {
            let t = table_for(&data, max_len);
            let (want, bits) = reference(&data, &t);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
            cuts.push(0);
            cuts.push(data.len());
            cuts.sort_unstable();
            let mut out = vec![0u8; want.len() + 1];
            let mut pos = 0u64;
            for w in cuts.windows(2) {
                let span = &data[w[0]..w[1]];
                let start = (pos / 8) as usize;
                let lead = (pos % 8) as u32;
                // The packer overwrites the lead bits with zeros: keep them.
                let keep = out[start];
                let end = encode_span(span, &t, &mut out[start..], lead).unwrap();
                if end.bytes > 0 || lead > 0 {
                    out[start] |= keep;
                }
                if end.tail_bits > 0 {
                    out[start + end.bytes] |= end.tail;
                }
                pos = start as u64 * 8 + end.end_bit();
            }
            prop_assert_eq!(pos, bits);
            prop_assert_eq!(&out[..want.len()], &want[..]);
        }
    }
}
