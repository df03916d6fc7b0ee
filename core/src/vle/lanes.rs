//! The lane-parallel form of [`super::encode`]: what `shaders/vle_encode.comp`
//! computes, step for step, with sequential loops in place of invocations.
//!
//! Following GVLE (seed 002 §3.2-3.3), adapted to any subgroup size and to
//! blocks of several sub-blocks ([`Geometry`]):
//!
//! * a workgroup of [`Geometry::workgroup_size`] invocations encodes one
//!   block of [`Geometry::block_symbols`] symbols at a time, taking block
//!   indices from an atomic ticket. A block is
//!   [`Geometry::groups_per_thread`] sub-blocks of
//!   [`Geometry::sub_block_symbols`]; in sub-block `g` invocation `t` owns
//!   the `t`-th [`THREAD_SYMBOLS`] consecutive symbols (so the loads of a
//!   sub-block are coalesced);
//! * each invocation sums its codeword lengths per sub-block; one workgroup
//!   scan of all sub-blocks at once gives every invocation's offset inside
//!   its sub-block-code and every sub-block's offset inside the block-code;
//!   the inter-block scan ([`super::lookback`]) gives the block-code's bit
//!   position `P` in the stream, once per block;
//! * each sub-block-code is assembled in a shared buffer of
//!   [`Geometry::sub_block_words`] 32-bit words, pre-shifted by its stream
//!   position mod 32. Every invocation packs its codewords into a 32-bit
//!   accumulator and plain-stores each word it completes (its first word
//!   holds zeros where the previous invocation's bits go); after a barrier
//!   it ORs its incomplete last word into the word that the next
//!   invocation's first store created. This is race-free because every
//!   codeword has at least one bit, so every invocation with 32 symbols
//!   writes at least 32 bits and completes a word. The last invocation with
//!   symbols stores its last word before the barrier instead;
//! * the shared buffer is copied to the output with plain stores, except
//!   the first and last words, which neighbouring sub-blocks share: those are
//!   ORed into the zeroed output with atomics.
//!
//! Output words hold stream bits MSB-first (bit 31 of word 0 is the first
//! bit): `word.to_be_bytes()` gives the byte stream of [`super::encode`].

use super::encode::{chunk_count, packed_codes};
use super::lookback::{BlockScan, ScanMemory, Step};
use super::{check_chunk_symbols, CodeTable, VleError, MAX_CODE_LEN, SYMBOLS};

/// Symbols per invocation and sub-block (GVLE's thread-input: one 32-byte load).
pub const THREAD_SYMBOLS: usize = 32;
/// Most sub-blocks per block (the shader's register arrays hold this many).
pub const MAX_GROUPS_PER_THREAD: usize = 8;
/// Smallest and largest workgroup size (powers of two).
pub const WORKGROUP_SIZES: core::ops::RangeInclusive<usize> = 32..=1024;

/// How the encoder cuts the input: the shader's specialization constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Invocations per workgroup: a power of two in [`WORKGROUP_SIZES`]
    /// (and, on a device, a multiple of its subgroup size).
    pub workgroup_size: usize,
    /// Sub-blocks per block, i.e. 32-symbol groups per invocation and block
    /// (1..=[`MAX_GROUPS_PER_THREAD`]).
    pub groups_per_thread: usize,
}

impl Default for Geometry {
    fn default() -> Self {
        Geometry {
            workgroup_size: 128,
            groups_per_thread: 4,
        }
    }
}

impl Geometry {
    /// Checks the ranges above.
    pub fn check(&self) -> Result<(), VleError> {
        if !self.workgroup_size.is_power_of_two()
            || !WORKGROUP_SIZES.contains(&self.workgroup_size)
            || !(1..=MAX_GROUPS_PER_THREAD).contains(&self.groups_per_thread)
        {
            return Err(VleError::BadGeometry {
                workgroup_size: self.workgroup_size,
                groups_per_thread: self.groups_per_thread,
            });
        }
        Ok(())
    }

    /// Symbols per sub-block (one round of the workgroup).
    pub fn sub_block_symbols(&self) -> usize {
        THREAD_SYMBOLS * self.workgroup_size
    }

    /// Symbols per block (one ticket, one look-back).
    pub fn block_symbols(&self) -> usize {
        self.sub_block_symbols() * self.groups_per_thread
    }

    /// Words of the shared sub-block-code buffer: the longest sub-block-code
    /// plus one word for the pre-shift.
    pub fn sub_block_words(&self) -> usize {
        self.sub_block_symbols() * MAX_CODE_LEN as usize / 32 + 1
    }
}

/// Bits of one invocation's thread-code; an error names a symbol without codeword.
fn thread_bits(packed: &[u32; SYMBOLS], symbols: &[u8]) -> Result<u32, VleError> {
    let mut bits = 0;
    for &s in symbols {
        let len = packed[s as usize] & 0xff;
        if len == 0 {
            return Err(VleError::SymbolWithoutCode(s));
        }
        bits += len;
    }
    Ok(bits)
}

/// Phase 1 of one invocation: packs `symbols` from bit `start` of `buf`,
/// plain-storing every completed word. Returns the incomplete last word
/// `(index, bits)` if any, which the caller stores (last invocation) or ORs
/// after the barrier (every other invocation).
fn pack_thread(
    packed: &[u32; SYMBOLS],
    symbols: &[u8],
    start: u32,
    buf: &mut [u32],
) -> Option<(usize, u32)> {
    let mut word = (start / 32) as usize;
    let mut fill = start % 32;
    let mut acc = 0u32;
    for &s in symbols {
        let e = packed[s as usize];
        let (code, len) = (e >> 8, e & 0xff);
        let free = 32 - fill;
        if len < free {
            // 1 <= free - len <= 31.
            acc |= code << (free - len);
            fill += len;
        } else {
            // The codeword completes the word; `rem` (0..=23) bits spill over.
            let rem = len - free;
            acc |= code >> rem;
            buf[word] = acc;
            word += 1;
            acc = if rem == 0 { 0 } else { code << (32 - rem) };
            fill = rem;
        }
    }
    (fill > 0).then_some((word, acc))
}

/// Assembles the sub-block-code of `symbols` (at most
/// `THREAD_SYMBOLS * thread_offsets.len()`) in `buf` starting at bit `lead`
/// (0..32), the way one workgroup round does, and returns its length in
/// bits. `thread_offsets` (one per invocation) receives each invocation's
/// start bit relative to the sub-block-code (the workgroup exclusive scan).
///
/// Phase 1 runs the invocations in reverse order, phase 2 in forward order:
/// the result does not depend on the order, which is what makes it race-free.
pub fn assemble_sub_block(
    table: &CodeTable,
    symbols: &[u8],
    lead: u32,
    buf: &mut [u32],
    thread_offsets: &mut [u32],
) -> Result<u32, VleError> {
    let packed = packed_codes(table);
    let mut total = 0u32;
    for (t, off) in thread_offsets.iter_mut().enumerate() {
        *off = total;
        let lo = (t * THREAD_SYMBOLS).min(symbols.len());
        let hi = ((t + 1) * THREAD_SYMBOLS).min(symbols.len());
        total += thread_bits(&packed, &symbols[lo..hi])?;
    }
    let threads = symbols.len().div_ceil(THREAD_SYMBOLS);
    let mut leftovers = [None; *WORKGROUP_SIZES.end()];
    for t in (0..threads).rev() {
        let part = &symbols[t * THREAD_SYMBOLS..((t + 1) * THREAD_SYMBOLS).min(symbols.len())];
        let left = pack_thread(&packed, part, lead + thread_offsets[t], buf);
        if t + 1 == threads {
            if let Some((w, bits)) = left {
                buf[w] = bits;
            }
        } else {
            leftovers[t] = left;
        }
    }
    // -- barrier --
    for (w, bits) in leftovers.iter().take(threads).flatten() {
        buf[*w] |= bits;
    }
    Ok(total)
}

/// The lane-parallel encoder: equal to [`super::encode`], with the stream
/// written as MSB-first 32-bit words into `out` (zeroed by the caller, at
/// least `bits.div_ceil(32)` words) and block positions from the look-back
/// scan over `scan` memory (zero-initialised, one element per block of
/// `geometry`) in windows of `window` blocks. `shared` must hold
/// [`Geometry::sub_block_words`] words. Returns the total number of bits.
#[allow(clippy::too_many_arguments)]
pub fn encode_lanes(
    symbols: &[u8],
    table: &CodeTable,
    chunk_symbols: usize,
    geometry: Geometry,
    window: usize,
    out: &mut [u32],
    index: &mut [u64],
    scan: &mut impl ScanMemory,
    shared: &mut [u32],
) -> Result<u64, VleError> {
    check_chunk_symbols(chunk_symbols)?;
    geometry.check()?;
    let needed = chunk_count(symbols.len(), chunk_symbols);
    if index.len() != needed {
        return Err(VleError::IndexLength {
            needed,
            given: index.len(),
        });
    }
    if shared.len() < geometry.sub_block_words() {
        return Err(VleError::OutputTooSmall);
    }
    let packed = packed_codes(table);
    let wg = geometry.workgroup_size;
    let sub_symbols = geometry.sub_block_symbols();
    let mut total = 0u64;
    for (b, block) in symbols.chunks(geometry.block_symbols()).enumerate() {
        // Length pass: every sub-block's length, whose exclusive prefix is its
        // offset in the block-code; then the scan (in block order, so it
        // never waits).
        let mut sub_offsets = [0u64; MAX_GROUPS_PER_THREAD];
        let mut len = 0u64;
        for (g, sub) in block.chunks(sub_symbols).enumerate() {
            sub_offsets[g] = len;
            for part in sub.chunks(THREAD_SYMBOLS) {
                len += thread_bits(&packed, part)? as u64;
            }
        }
        let mut block_scan = BlockScan::new(b, len, window);
        let p = loop {
            match block_scan.step(scan) {
                Step::Done(p) => break p,
                Step::Progress => {}
                Step::Blocked => unreachable!("the blocks before this one have finished"),
            }
        };
        for (g, sub) in block.chunks(sub_symbols).enumerate() {
            let at = p + sub_offsets[g];
            let mut offsets = [0u32; *WORKGROUP_SIZES.end()];
            let offsets = &mut offsets[..wg];
            let bits = assemble_sub_block(table, sub, (at % 32) as u32, shared, offsets)?;
            // Chunk starts fall on invocation boundaries (chunk_symbols % 32 == 0).
            let sub_first = b * geometry.block_symbols() + g * sub_symbols;
            for (t, &off) in offsets.iter().enumerate() {
                let first = sub_first + t * THREAD_SYMBOLS;
                if first < symbols.len() && first.is_multiple_of(chunk_symbols) {
                    index[first / chunk_symbols] = at + off as u64;
                }
            }
            // Coalesced copy; the first and last words are shared with the
            // neighbouring sub-blocks and ORed.
            let first_word = (at / 32) as usize;
            let words = ((at % 32) + bits as u64).div_ceil(32) as usize;
            let dst = out
                .get_mut(first_word..first_word + words)
                .ok_or(VleError::OutputTooSmall)?;
            for (i, (d, &s)) in dst.iter_mut().zip(shared.iter()).enumerate() {
                if i == 0 || i + 1 == words {
                    *d |= s;
                } else {
                    *d = s;
                }
            }
        }
        total = p + len;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vle::lookback::{Cells32, Cells64};
    use crate::vle::{encode, histogram};
    use proptest::prelude::*;
    use std::format;
    use std::vec;
    use std::vec::Vec;

    /// Geometries the tests run: the default, the smallest, odd mixes and the largest.
    const GEOMETRIES: [(usize, usize); 5] = [(128, 4), (32, 1), (64, 3), (256, 8), (1024, 2)];

    fn check(data: &[u8], max_len: u32, chunk: usize) {
        for (wg, groups) in GEOMETRIES {
            let geometry = Geometry {
                workgroup_size: wg,
                groups_per_thread: groups,
            };
            for window in [1, 4, 32] {
                check_geometry(data, max_len, chunk, geometry, window);
            }
        }
    }

    fn check_geometry(data: &[u8], max_len: u32, chunk: usize, geometry: Geometry, window: usize) {
        let mut h = [0u64; SYMBOLS];
        histogram(data, &mut h);
        let t = CodeTable::from_histogram(&h, max_len).unwrap();
        let bits = t.encoded_bits(&h).unwrap();
        let mut want = vec![0u8; bits.div_ceil(8) as usize];
        let mut want_index = vec![0u64; chunk_count(data.len(), chunk)];
        encode(data, &t, chunk, &mut want, &mut want_index).unwrap();

        let blocks = data.len().div_ceil(geometry.block_symbols());
        let mut shared = vec![0u32; geometry.sub_block_words()];
        for wide in [true, false] {
            let mut out = vec![0u32; bits.div_ceil(32) as usize];
            let mut index = vec![0u64; want_index.len()];
            let mut c64 = vec![0u64; blocks];
            let mut aggregates = vec![0u32; blocks];
            let mut prefixes = vec![0u32; 2 * blocks];
            let got = if wide {
                let mut mem = Cells64(&mut c64);
                encode_lanes(
                    data,
                    &t,
                    chunk,
                    geometry,
                    window,
                    &mut out,
                    &mut index,
                    &mut mem,
                    &mut shared,
                )
            } else {
                let mut mem = Cells32 {
                    aggregates: &mut aggregates,
                    prefixes: &mut prefixes,
                };
                encode_lanes(
                    data,
                    &t,
                    chunk,
                    geometry,
                    window,
                    &mut out,
                    &mut index,
                    &mut mem,
                    &mut shared,
                )
            };
            let label = format!("{geometry:?}, window {window}, wide {wide}");
            assert_eq!(got, Ok(bits), "{label}");
            let bytes: Vec<u8> = out.iter().flat_map(|w| w.to_be_bytes()).collect();
            assert_eq!(&bytes[..want.len()], &want[..], "{label}");
            assert!(bytes[want.len()..].iter().all(|&b| b == 0), "{label}");
            assert_eq!(index, want_index, "{label}");
        }
    }

    #[test]
    fn geometry_limits() {
        assert_eq!(Geometry::default().check(), Ok(()));
        assert_eq!(Geometry::default().block_symbols(), 16384);
        assert_eq!(Geometry::default().sub_block_words(), 3073);
        for (wg, groups) in [(16, 1), (96, 1), (2048, 1), (128, 0), (128, 9)] {
            let g = Geometry {
                workgroup_size: wg,
                groups_per_thread: groups,
            };
            assert!(g.check().is_err(), "{g:?}");
        }
    }

    #[test]
    fn equals_sequential_on_edge_sizes() {
        for n in [
            0usize,
            1,
            31,
            32,
            33,
            4095,
            4096,
            4097,
            16383,
            16384,
            16385,
            3 * 16384 + 4096 * 2 + 100,
        ] {
            let data: Vec<u8> = (0..n).map(|i| (i * 7 % 13) as u8).collect();
            check(&data, 16, 32);
            check(&data, 16, 4096);
        }
        check(&[9u8; 10_000], 16, 64); // one symbol: 1 bit each
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn equals_sequential(
            len in 0usize..40_000,
            seed in any::<u64>(),
            skew in 0u32..8,
            max_len in 8u32..=24,
            chunk_words in 1usize..300,
        ) {
            let mut x = seed | 1;
            let data: Vec<u8> = (0..len).map(|_| {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                ((x >> 40) as u8) >> skew.min(7) | ((x & 0xff == 0) as u8) << 7
            }).collect();
            check(&data, max_len, chunk_words * 32);
        }
    }
}
