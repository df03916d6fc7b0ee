//! The lane-parallel form of [`super::encode`]: what `shaders/vle_encode.comp`
//! computes, step for step, with sequential loops in place of invocations.
//!
//! Following GVLE (seed 002 §3.2-3.3), adapted to any subgroup size:
//!
//! * a workgroup of [`WORKGROUP_SIZE`] invocations encodes one block-input of
//!   [`BLOCK_SYMBOLS`] symbols at a time, taking block indices from an atomic
//!   ticket; each invocation owns [`THREAD_SYMBOLS`] consecutive symbols;
//! * each invocation sums its codeword lengths; a workgroup exclusive scan
//!   gives its offset inside the block-code, and the inter-block scan
//!   ([`super::lookback`]) the block-code's bit position `P` in the stream;
//! * the block-code is assembled in a shared buffer of [`BLOCK_WORDS`]
//!   32-bit words, pre-shifted by `P mod 32`. Every invocation packs its
//!   codewords into a 32-bit accumulator and plain-stores each word it
//!   completes (its first word holds zeros where the previous invocation's
//!   bits go); after a barrier it ORs its incomplete last word into the word
//!   that the next invocation's first store created. This is race-free
//!   because every codeword has at least one bit, so every invocation with
//!   32 symbols writes at least 32 bits and completes a word. The last
//!   invocation with symbols stores its last word before the barrier instead;
//! * the shared buffer is copied to the output with plain stores, except
//!   the first and last words, which neighbouring blocks share: those are
//!   ORed into the zeroed output with atomics.
//!
//! Output words hold stream bits MSB-first (bit 31 of word 0 is the first
//! bit): `word.to_be_bytes()` gives the byte stream of [`super::encode`].

use super::encode::{chunk_count, packed_codes};
use super::lookback::{BlockScan, ScanMemory, Step};
use super::{check_chunk_symbols, CodeTable, VleError, MAX_CODE_LEN, SYMBOLS};

/// Symbols per invocation (GVLE's thread-input: one 32-byte load).
pub const THREAD_SYMBOLS: usize = 32;
/// Invocations per workgroup.
pub const WORKGROUP_SIZE: usize = 128;
/// Symbols per block-input (one workgroup iteration).
pub const BLOCK_SYMBOLS: usize = THREAD_SYMBOLS * WORKGROUP_SIZE;
/// Words of the shared block-code buffer: the longest block-code plus one
/// word for the pre-shift.
pub const BLOCK_WORDS: usize = BLOCK_SYMBOLS * MAX_CODE_LEN as usize / 32 + 1;

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

/// Assembles the block-code of `symbols` (at most [`BLOCK_SYMBOLS`]) in
/// `buf` starting at bit `lead` (0..32), the way one workgroup does, and
/// returns its length in bits. `thread_offsets` receives each invocation's
/// start bit relative to the block-code (the workgroup exclusive scan).
///
/// Phase 1 runs the invocations in reverse order, phase 2 in forward order:
/// the result does not depend on the order, which is what makes it race-free.
pub fn assemble_block(
    table: &CodeTable,
    symbols: &[u8],
    lead: u32,
    buf: &mut [u32],
    thread_offsets: &mut [u32; WORKGROUP_SIZE],
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
    let mut leftovers = [None; WORKGROUP_SIZE];
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
/// least `bits.div_ceil(32)` words) and block positions from the GVLE scan
/// over `scan` memory (zero-initialised, one element per block). `shared`
/// must hold [`BLOCK_WORDS`] words. Returns the total number of bits.
pub fn encode_lanes(
    symbols: &[u8],
    table: &CodeTable,
    chunk_symbols: usize,
    out: &mut [u32],
    index: &mut [u64],
    scan: &mut impl ScanMemory,
    shared: &mut [u32],
) -> Result<u64, VleError> {
    check_chunk_symbols(chunk_symbols)?;
    let needed = chunk_count(symbols.len(), chunk_symbols);
    if index.len() != needed {
        return Err(VleError::IndexLength {
            needed,
            given: index.len(),
        });
    }
    if shared.len() < BLOCK_WORDS {
        return Err(VleError::OutputTooSmall);
    }
    let packed = packed_codes(table);
    let mut total = 0u64;
    let blocks = symbols.len().div_ceil(BLOCK_SYMBOLS);
    for (b, block) in symbols.chunks(BLOCK_SYMBOLS).enumerate() {
        // Length pass, then the scan (in block order, so it never waits).
        let mut len = 0u64;
        for part in block.chunks(THREAD_SYMBOLS) {
            len += thread_bits(&packed, part)? as u64;
        }
        let mut block_scan = BlockScan::new(b, blocks, len);
        let p = loop {
            match block_scan.step(scan) {
                Step::Done(p) => break p,
                Step::Progress => {}
                Step::Blocked => unreachable!("the blocks before this one have finished"),
            }
        };
        let mut offsets = [0u32; WORKGROUP_SIZE];
        let bits = assemble_block(table, block, (p % 32) as u32, shared, &mut offsets)?;
        // Chunk starts fall on invocation boundaries (chunk_symbols % 32 == 0).
        for (t, &off) in offsets.iter().enumerate() {
            let first = b * BLOCK_SYMBOLS + t * THREAD_SYMBOLS;
            if first < symbols.len() && first.is_multiple_of(chunk_symbols) {
                index[first / chunk_symbols] = p + off as u64;
            }
        }
        // Coalesced copy; the first and last words are shared with the
        // neighbouring blocks and ORed.
        let first_word = (p / 32) as usize;
        let words = ((p % 32) + bits as u64).div_ceil(32) as usize;
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
        total = p + bits as u64;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vle::lookback::{Cells32, Cells64};
    use crate::vle::{encode, histogram};
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

    fn check(data: &[u8], max_len: u32, chunk: usize) {
        let mut h = [0u64; SYMBOLS];
        histogram(data, &mut h);
        let t = CodeTable::from_histogram(&h, max_len).unwrap();
        let bits = t.encoded_bits(&h).unwrap();
        let mut want = vec![0u8; bits.div_ceil(8) as usize];
        let mut want_index = vec![0u64; chunk_count(data.len(), chunk)];
        encode(data, &t, chunk, &mut want, &mut want_index).unwrap();

        let blocks = data.len().div_ceil(BLOCK_SYMBOLS);
        let mut shared = vec![0u32; BLOCK_WORDS];
        for wide in [true, false] {
            let mut out = vec![0u32; bits.div_ceil(32) as usize];
            let mut index = vec![0u64; want_index.len()];
            let mut c64 = vec![0u64; blocks];
            let mut c32 = vec![0u32; blocks];
            let mut prefix = vec![0u32; 2 * blocks.div_ceil(32)];
            let got = if wide {
                encode_lanes(
                    data,
                    &t,
                    chunk,
                    &mut out,
                    &mut index,
                    &mut Cells64(&mut c64),
                    &mut shared,
                )
            } else {
                let mut mem = Cells32 {
                    cells: &mut c32,
                    prefix: &mut prefix,
                };
                encode_lanes(data, &t, chunk, &mut out, &mut index, &mut mem, &mut shared)
            };
            assert_eq!(got, Ok(bits));
            let bytes: Vec<u8> = out.iter().flat_map(|w| w.to_be_bytes()).collect();
            assert_eq!(&bytes[..want.len()], &want[..]);
            assert!(bytes[want.len()..].iter().all(|&b| b == 0));
            assert_eq!(index, want_index);
        }
    }

    #[test]
    fn equals_sequential_on_edge_sizes() {
        for n in [0usize, 1, 31, 32, 33, 4095, 4096, 4097, 3 * 4096 + 100] {
            let data: Vec<u8> = (0..n).map(|i| (i * 7 % 13) as u8).collect();
            check(&data, 16, 32);
            check(&data, 16, 4096);
        }
        check(&[9u8; 10_000], 16, 64); // one symbol: 1 bit each
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
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
