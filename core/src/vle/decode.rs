//! Table-driven decoding, chunk by chunk.
//!
//! A [`DecodeTable`] resolves every codeword of up to `log2(N)` bits with one
//! lookup of the next `log2(N)` bits; longer codewords (rare by construction:
//! they belong to the rarest symbols) fall back to the canonical limits: with
//! the next 24 bits `x`, the codeword length is the smallest `l` whose
//! left-justified limit `(first[l] + count[l]) << (24 - l)` exceeds `x`
//! (limits never decrease with `l`, so the GPU finds the same `l` by binary
//! search). Bits are read through a 64-bit window
//! refilled eight bytes at a time (the reason this does not use
//! [`crate::bits::BitReader`], whose per-call bit-slice loads are several
//! times slower per codeword); the window never reads outside the data slice
//! and pads with zeros past its end, and every decoded codeword is checked
//! to end within the data.

use super::encode::chunk_count;
use super::{check_chunk_symbols, CodeTable, VleError, MAX_CODE_LEN, SYMBOLS};

/// Lookup entries of the default decoder: 2^11 (4 KiB), enough that every
/// codeword of a typical text or image code resolves in one lookup.
pub const DEFAULT_LUT_SIZE: usize = 1 << 11;

const LENGTHS: usize = MAX_CODE_LEN as usize + 1;

/// Decoding tables for a [`CodeTable`], with a lookup of `N` entries
/// (`N` a power of two, 2..=65536) held in the struct itself.
#[derive(Debug, Clone)]
pub struct DecodeTable<const N: usize> {
    lut: [u16; N],
    lut_bits: u32,
    max_len: u32,
    first: [u32; LENGTHS],
    count: [u16; LENGTHS],
    offset: [u16; LENGTHS],
    limit: [u32; LENGTHS],
    sorted: [u8; SYMBOLS],
}

impl<const N: usize> DecodeTable<N> {
    /// Builds the decoder for `table`.
    pub fn new(table: &CodeTable) -> Result<Self, VleError> {
        if !N.is_power_of_two() || !(2..=1 << 16).contains(&N) {
            return Err(VleError::BadLookupSize(N));
        }
        let lut_bits = N.trailing_zeros();
        let mut d = DecodeTable {
            lut: [0; N],
            lut_bits,
            max_len: table.max_len(),
            first: [0; LENGTHS],
            count: [0; LENGTHS],
            offset: [0; LENGTHS],
            limit: [0; LENGTHS],
            sorted: [0; SYMBOLS],
        };
        // Symbols in canonical order (by length, then value) and where each
        // length starts in that order.
        for s in 0..SYMBOLS {
            let l = table.code_len(s as u8) as usize;
            if l > 0 {
                d.count[l] += 1;
            }
        }
        let mut at = 0u16;
        for l in 1..LENGTHS {
            d.offset[l] = at;
            at += d.count[l];
        }
        // First codeword of each length: canonical codes of length l start
        // where those of length l - 1 end, shifted by one bit.
        let mut next = 0u32;
        for l in 1..LENGTHS {
            d.first[l] = next;
            let end = next + d.count[l] as u32;
            d.limit[l] = end << (MAX_CODE_LEN as usize - l);
            next = end << 1;
        }
        let mut fill = d.offset;
        for s in 0..SYMBOLS {
            let l = table.code_len(s as u8);
            if l == 0 {
                continue;
            }
            let code = table.code(s as u8);
            debug_assert_eq!(
                code,
                d.first[l as usize] + (fill[l as usize] - d.offset[l as usize]) as u32
            );
            d.sorted[fill[l as usize] as usize] = s as u8;
            fill[l as usize] += 1;
            if l <= lut_bits {
                // Every lookup index that starts with this codeword.
                let span = 1usize << (lut_bits - l);
                let base = (code as usize) << (lut_bits - l);
                for e in &mut d.lut[base..base + span] {
                    *e = (l as u16) << 8 | s as u16;
                }
            }
        }
        Ok(d)
    }

    /// Index bits of the lookup (`log2(N)`).
    pub fn lut_bits(&self) -> u32 {
        self.lut_bits
    }

    /// Lookup entries: `len << 8 | symbol` for every index whose leading
    /// `len` bits are a codeword of at most `lut_bits` bits, else 0.
    pub fn lut(&self) -> &[u16; N] {
        &self.lut
    }

    /// Longest codeword.
    pub fn max_len(&self) -> u32 {
        self.max_len
    }

    /// First (smallest) codeword of each length; lengths index from 0.
    pub fn first_codes(&self) -> &[u32; LENGTHS] {
        &self.first
    }

    /// Number of codewords of each length.
    pub fn counts(&self) -> &[u16; LENGTHS] {
        &self.count
    }

    /// Position in [`DecodeTable::sorted_symbols`] of each length's first symbol.
    pub fn offsets(&self) -> &[u16; LENGTHS] {
        &self.offset
    }

    /// Left-justified end of each length's codewords in 24-bit code space:
    /// `(first + count) << (24 - len)`, non-decreasing in the length.
    pub fn limits(&self) -> &[u32; LENGTHS] {
        &self.limit
    }

    /// Symbols in canonical order (by codeword length, then value).
    pub fn sorted_symbols(&self) -> &[u8; SYMBOLS] {
        &self.sorted
    }

    /// The symbol and length of the codeword at the top of `window` (bits
    /// MSB-aligned), or `None` when no codeword matches.
    #[inline]
    fn lookup(&self, window: u64) -> Option<(u8, u32)> {
        let e = self.lut[(window >> (64 - self.lut_bits)) as usize];
        if e != 0 {
            return Some((e as u8, (e >> 8) as u32));
        }
        let x = (window >> (64 - MAX_CODE_LEN)) as u32;
        let l = (self.lut_bits + 1..=self.max_len).find(|&l| x < self.limit[l as usize])?;
        let d = (x >> (MAX_CODE_LEN - l)).wrapping_sub(self.first[l as usize]);
        if d >= self.count[l as usize] as u32 {
            return None;
        }
        Some((
            self.sorted[(self.offset[l as usize] as u32 + d) as usize],
            l,
        ))
    }
}

/// A 64-bit MSB-aligned window over a byte slice. Bits below `avail` are
/// either zero or the true next bits of the data (refills OR the same bits
/// in again), which lets a refill load eight bytes at once.
struct Window<'a> {
    data: &'a [u8],
    next: usize,
    buf: u64,
    avail: u32,
}

impl<'a> Window<'a> {
    /// A window at bit `bit`, which must be at most `data.len() * 8`.
    fn at(data: &'a [u8], bit: u64) -> Self {
        let mut w = Window {
            data,
            next: (bit / 8) as usize,
            buf: 0,
            avail: 0,
        };
        let skip = (bit % 8) as u32;
        w.refill();
        // At a partial byte the byte itself is there (bit < len * 8).
        w.buf <<= skip;
        w.avail -= skip;
        w
    }

    /// Bit position of the top of the window in the data.
    fn position(&self) -> u64 {
        self.next as u64 * 8 - self.avail as u64
    }

    /// Tops the window up to at least 56 valid bits, or to the end of the data.
    #[inline]
    fn refill(&mut self) {
        if let Some(bytes) = self.data.get(self.next..self.next + 8) {
            let word = u64::from_be_bytes(bytes.try_into().expect("8 bytes"));
            self.buf |= word >> self.avail;
            let take = (63 - self.avail) / 8;
            self.next += take as usize;
            self.avail += take * 8;
        } else {
            while self.avail <= 56 && self.next < self.data.len() {
                self.buf |= (self.data[self.next] as u64) << (56 - self.avail);
                self.next += 1;
                self.avail += 8;
            }
        }
    }
}

/// Decodes `out.len()` symbols from bits `start_bit..end_bit` of `data`; the
/// codewords must end exactly at `end_bit`.
pub fn decode_chunk<const N: usize>(
    table: &DecodeTable<N>,
    data: &[u8],
    start_bit: u64,
    end_bit: u64,
    out: &mut [u8],
) -> Result<(), VleError> {
    if start_bit > end_bit || end_bit > data.len() as u64 * 8 {
        return Err(VleError::BadIndex { chunk: 0 });
    }
    let mut w = Window::at(data, start_bit);
    for o in out.iter_mut() {
        if w.avail < MAX_CODE_LEN {
            w.refill();
        }
        let Some((sym, len)) = table.lookup(w.buf) else {
            return Err(VleError::InvalidCode { bit: w.position() });
        };
        if len > w.avail {
            // The codeword runs past the end of the data.
            return Err(VleError::InvalidCode { bit: w.position() });
        }
        *o = sym;
        w.buf <<= len;
        w.avail -= len;
    }
    let actual = w.position();
    if actual != end_bit {
        return Err(VleError::ChunkLengthMismatch {
            expected: end_bit,
            actual,
        });
    }
    Ok(())
}

/// Checks a chunk index against a stream of `data_bits` bits: one entry per
/// chunk, the first 0, non-decreasing, none past `data_bits`.
pub fn check_index(index: &[u64], chunks: usize, data_bits: u64) -> Result<(), VleError> {
    if index.len() != chunks {
        return Err(VleError::IndexLength {
            needed: chunks,
            given: index.len(),
        });
    }
    let mut prev = 0u64;
    for (c, &off) in index.iter().enumerate() {
        if (c == 0 && off != 0) || off < prev || off > data_bits {
            return Err(VleError::BadIndex { chunk: c });
        }
        prev = off;
    }
    Ok(())
}

/// Decodes a whole stream written by [`super::encode()`]: `out.len()` symbols
/// in chunks of `chunk_symbols`, chunk `c` at bit `index[c]`, the stream
/// `data_bits` bits long.
pub fn decode<const N: usize>(
    table: &DecodeTable<N>,
    data: &[u8],
    data_bits: u64,
    index: &[u64],
    chunk_symbols: usize,
    out: &mut [u8],
) -> Result<(), VleError> {
    check_chunk_symbols(chunk_symbols)?;
    if data_bits > data.len() as u64 * 8 {
        return Err(VleError::BadIndex { chunk: 0 });
    }
    check_index(index, chunk_count(out.len(), chunk_symbols), data_bits)?;
    for (c, chunk) in out.chunks_mut(chunk_symbols).enumerate() {
        let end = index.get(c + 1).copied().unwrap_or(data_bits);
        decode_chunk(table, data, index[c], end, chunk).map_err(|e| match e {
            VleError::BadIndex { .. } => VleError::BadIndex { chunk: c },
            other => other,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vle::{encode, histogram};
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

    fn setup(data: &[u8], max_len: u32, chunk: usize) -> (CodeTable, Vec<u8>, u64, Vec<u64>) {
        let mut h = [0u64; SYMBOLS];
        histogram(data, &mut h);
        let t = CodeTable::from_histogram(&h, max_len).unwrap();
        let bits = t.encoded_bits(&h).unwrap();
        let mut out = vec![0u8; bits.div_ceil(8) as usize];
        let mut index = vec![0u64; chunk_count(data.len(), chunk)];
        assert_eq!(encode(data, &t, chunk, &mut out, &mut index), Ok(bits));
        (t, out, bits, index)
    }

    fn skewed(n: usize, seed: u32) -> Vec<u8> {
        // Geometric-ish: many small values, rare large ones (long codes).
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x.trailing_zeros() * 9 + (x >> 28)) as u8
            })
            .collect()
    }

    #[test]
    fn round_trip_long_codes_every_lut_size() {
        let data = skewed(20_000, 7);
        let (t, packed, bits, index) = setup(&data, 24, 4096);
        assert!(t.max_len() > 11, "test needs codes longer than the lookup");
        let mut back = vec![0u8; data.len()];
        decode(
            &DecodeTable::<2>::new(&t).unwrap(),
            &packed,
            bits,
            &index,
            4096,
            &mut back,
        )
        .unwrap();
        assert_eq!(back, data);
        back.fill(0);
        decode(
            &DecodeTable::<{ 1 << 16 }>::new(&t).unwrap(),
            &packed,
            bits,
            &index,
            4096,
            &mut back,
        )
        .unwrap();
        assert_eq!(back, data);
        assert_eq!(
            DecodeTable::<3>::new(&t).err(),
            Some(VleError::BadLookupSize(3))
        );
    }

    #[test]
    fn corruption_is_detected() {
        let data = skewed(3000, 3);
        let (t, packed, bits, index) = setup(&data, 16, 1024);
        let d = DecodeTable::<DEFAULT_LUT_SIZE>::new(&t).unwrap();
        let mut back = vec![0u8; data.len()];
        // Wrong total length, bad index entries, truncated data.
        assert!(decode(&d, &packed, bits - 1, &index, 1024, &mut back).is_err());
        assert!(decode(&d, &packed, bits + 8, &index, 1024, &mut back).is_err());
        let mut bad = index.clone();
        bad[1] += 1;
        assert!(decode(&d, &packed, bits, &bad, 1024, &mut back).is_err());
        bad[1] = bad[2] + 1;
        assert_eq!(
            decode(&d, &packed, bits, &bad, 1024, &mut back),
            Err(VleError::BadIndex { chunk: 2 })
        );
        assert!(decode(
            &d,
            &packed[..packed.len() - 1],
            bits,
            &index,
            1024,
            &mut back
        )
        .is_err());
        assert!(decode(&d, &packed, bits, &index[..2], 1024, &mut back).is_err());
        // An incomplete code: a single-symbol table rejects a 1 bit.
        let (t1, _, _, _) = setup(&[5u8; 10], 16, 32);
        let d1 = DecodeTable::<16>::new(&t1).unwrap();
        let mut one = [0u8; 10];
        assert_eq!(
            decode_chunk(&d1, &[0x00, 0x40], 0, 10, &mut one),
            Err(VleError::InvalidCode { bit: 9 })
        );
        assert_eq!(decode_chunk(&d1, &[0x00, 0x00], 0, 10, &mut one), Ok(()));
        assert_eq!(one, [5u8; 10]);
    }

    proptest! {
        #[test]
        fn round_trip(
            len in 0usize..5000,
            seed in any::<u32>(),
            alphabet in 1u32..=256,
            max_len in 8u32..=24,
            chunk_words in 1usize..40,
        ) {
            let chunk = chunk_words * 32;
            let data: Vec<u8> = skewed(len, seed).iter().map(|&b| (b as u32 % alphabet) as u8).collect();
            let (t, packed, bits, index) = setup(&data, max_len, chunk);
            let d = DecodeTable::<DEFAULT_LUT_SIZE>::new(&t).unwrap();
            let mut back = vec![0u8; data.len()];
            decode(&d, &packed, bits, &index, chunk, &mut back).unwrap();
            prop_assert_eq!(back, data);
        }

        #[test]
        fn garbage_never_panics(
            data in proptest::collection::vec(any::<u8>(), 0..300),
            start in 0u64..2400,
            len in 0u64..2400,
            n in 0usize..400,
        ) {
            let t = CodeTable::from_histogram(&[3; SYMBOLS], 12).unwrap();
            let d = DecodeTable::<64>::new(&t).unwrap();
            let mut out = vec![0u8; n];
            let _ = decode_chunk(&d, &data, start, start + len, &mut out);
        }
    }
}
