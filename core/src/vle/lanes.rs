//! The lane-parallel form of [`super::encode()`]: what `shaders/vle/encode.glsl`
//! computes, step for step, with sequential loops in place of invocations.
//!
//! # The block loop
//!
//! Following GVLE's encoder (its §3.2-3.3; docs/vle.md), adapted to any
//! subgroup size:
//!
//! * a workgroup of [`WORKGROUP_SIZE`] invocations encodes one block-input of
//!   [`BLOCK_SYMBOLS`] symbols at a time, taking block indices from an atomic
//!   ticket; each invocation owns [`THREAD_SYMBOLS`] consecutive symbols;
//! * each invocation sums its codeword lengths; a workgroup exclusive scan
//!   gives its offset inside the block-code, and the inter-block scan
//!   ([`super::lookback`]) the block-code's bit position `P` in the stream;
//! * a block-code that fits the shared staging buffer of [`STAGE_WORDS`]
//!   32-bit words (with its pre-shift `P mod 32`: up to 8 bits a symbol,
//!   which every block of a byte stream's Huffman code meets except
//!   clusters of rarer-than-average symbols) is assembled there. Every invocation packs its
//!   codewords and plain-stores each word it completes (its first word
//!   holds zeros where the previous invocation's bits go); after a barrier
//!   it ORs its incomplete last word into the word that the next
//!   invocation's first store created. This is race-free because every
//!   codeword has at least one bit, so every invocation with 32 symbols
//!   writes at least 32 bits and completes a word. The last invocation with
//!   symbols stores its last word before the barrier instead. The buffer is
//!   then copied to the output with plain stores, except the first and last
//!   words, which neighbouring blocks share: those are ORed into the zeroed
//!   output with atomics;
//! * a longer block-code is packed straight into the output: the words an
//!   invocation owns alone are plain-stored, its first word (when it starts
//!   inside one) and its last (when it ends inside one) are ORed in. The
//!   staging buffer is small on purpose: shared memory per workgroup decides
//!   how many workgroups an SM holds, and that decides the encoder's speed
//!   (docs/history/vle.md).
//!
//! # Packing
//!
//! An invocation packs with a 64-bit accumulator whose low `n` bits are
//! pending (`n < 32` between codewords): each codeword is shifted in, and
//! once 32 or more bits are pending the oldest 32 are emitted.
//!
//! # Word order
//!
//! Output words hold stream bits MSB-first (bit 31 of word 0 is the first
//! bit): `word.to_be_bytes()` gives the byte stream of [`super::encode()`].

use super::encode::{chunk_count, packed_codes};
use super::lookback::{BlockScan, ScanMemory, Step};
use super::{check_chunk_symbols, CodeTable, VleError, SYMBOLS};

/// Symbols per invocation (GVLE's thread-input: one 32-byte load).
pub const THREAD_SYMBOLS: usize = 32;
/// Invocations per workgroup.
pub const WORKGROUP_SIZE: usize = 128;
/// Symbols per block-input (one workgroup iteration).
pub const BLOCK_SYMBOLS: usize = THREAD_SYMBOLS * WORKGROUP_SIZE;
/// Words of the shared staging buffer: block-codes of up to
/// `STAGE_WORDS * 32 - 31` bits (8 bits a symbol, so every block of
/// uniformly random bytes) are assembled there, longer ones written
/// straight to the output.
pub const STAGE_WORDS: usize = BLOCK_SYMBOLS * 8 / 32 + 1;

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

/// Packs one invocation's codewords starting at bit `start % 32` of word
/// `start / 32`, calling `emit(word, bits)` for every word it completes.
/// Returns the incomplete last word `(index, bits)` if any (left-aligned).
fn pack_thread(
    packed: &[u32; SYMBOLS],
    symbols: &[u8],
    start: u64,
    mut emit: impl FnMut(usize, u32),
) -> Option<(usize, u32)> {
    let mut word = (start / 32) as usize;
    // The low `n` bits of `acc` are pending; the zeros before the first
    // codeword stand for the previous invocation's bits in the first word.
    let mut n = (start % 32) as u32;
    let mut acc = 0u64;
    for &s in symbols {
        let e = packed[s as usize];
        let len = e & 0xff; // 1..=24
        acc = (acc << len) | (e >> 8) as u64;
        n += len;
        if n >= 32 {
            n -= 32;
            emit(word, (acc >> n) as u32);
            word += 1;
        }
    }
    (n > 0).then(|| (word, (acc << (32 - n)) as u32))
}

/// Invocation `t`'s symbols of a block-input.
fn thread_symbols(symbols: &[u8], t: usize) -> &[u8] {
    let lo = (t * THREAD_SYMBOLS).min(symbols.len());
    let hi = ((t + 1) * THREAD_SYMBOLS).min(symbols.len());
    &symbols[lo..hi]
}

/// The length pass of a block-input (at most [`BLOCK_SYMBOLS`] symbols):
/// each invocation's start bit relative to the block-code (the workgroup
/// exclusive scan) into `thread_offsets`; returns the block-code's length.
fn block_offsets(
    packed: &[u32; SYMBOLS],
    symbols: &[u8],
    thread_offsets: &mut [u32; WORKGROUP_SIZE],
) -> Result<u32, VleError> {
    let mut total = 0u32;
    for (t, off) in thread_offsets.iter_mut().enumerate() {
        *off = total;
        total += thread_bits(packed, thread_symbols(symbols, t))?;
    }
    Ok(total)
}

/// Assembles a block-code that fits the staging buffer `buf` (at least
/// [`STAGE_WORDS`] words) starting at bit `lead` (0..32), the way one
/// workgroup does. Phase 1 runs the invocations in reverse order, phase 2
/// in forward order: the result does not depend on the order, which is
/// what makes it race-free.
fn assemble_staged(
    packed: &[u32; SYMBOLS],
    symbols: &[u8],
    lead: u32,
    thread_offsets: &[u32; WORKGROUP_SIZE],
    buf: &mut [u32],
) {
    let threads = symbols.len().div_ceil(THREAD_SYMBOLS);
    let mut leftovers = [None; WORKGROUP_SIZE];
    for t in (0..threads).rev() {
        let start = (lead + thread_offsets[t]) as u64;
        let left = pack_thread(packed, thread_symbols(symbols, t), start, |w, bits| {
            buf[w] = bits
        });
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
}

/// Packs a block-code too long for the staging buffer straight into `out`,
/// from stream bit `p`: owned words are stored, each invocation's first
/// word (when it starts inside one) and last (when it ends inside one) ORed.
fn pack_direct(
    packed: &[u32; SYMBOLS],
    symbols: &[u8],
    p: u64,
    thread_offsets: &[u32; WORKGROUP_SIZE],
    out: &mut [u32],
) -> Result<(), VleError> {
    let threads = symbols.len().div_ceil(THREAD_SYMBOLS);
    let mut fits = true;
    // In reverse order, as in `assemble_staged`: a result that depended on
    // the order of the invocations' stores would differ from `encode`'s.
    for t in (0..threads).rev() {
        let start = p + thread_offsets[t] as u64;
        let head = (!start.is_multiple_of(32)).then_some((start / 32) as usize);
        let mut put = |w: usize, bits: u32, shared: bool| match out.get_mut(w) {
            Some(d) if shared => *d |= bits,
            Some(d) => *d = bits,
            None => fits = false,
        };
        let tail = pack_thread(packed, thread_symbols(symbols, t), start, |w, bits| {
            put(w, bits, Some(w) == head)
        });
        if let Some((w, bits)) = tail {
            put(w, bits, true);
        }
    }
    if fits {
        Ok(())
    } else {
        Err(VleError::OutputTooSmall)
    }
}

/// The lane-parallel encoder: equal to [`super::encode()`], with the stream
/// written as MSB-first 32-bit words into `out` (zeroed by the caller, at
/// least `bits.div_ceil(32)` words) and block positions from the GVLE scan
/// over `scan` memory (zero-initialised, one element per block). `shared`
/// must hold [`STAGE_WORDS`] words. Returns the total number of bits.
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
    if shared.len() < STAGE_WORDS {
        return Err(VleError::OutputTooSmall);
    }
    let packed = packed_codes(table);
    let mut total = 0u64;
    let blocks = symbols.len().div_ceil(BLOCK_SYMBOLS);
    for (b, block) in symbols.chunks(BLOCK_SYMBOLS).enumerate() {
        // Length pass, then the scan (in block order, so it never waits).
        let mut offsets = [0u32; WORKGROUP_SIZE];
        let bits = block_offsets(&packed, block, &mut offsets)?;
        let mut block_scan = BlockScan::new(b, blocks, bits as u64);
        let p = loop {
            match block_scan.step(scan) {
                Step::Done(p) => break p,
                Step::Progress => {}
                Step::Blocked => unreachable!("the blocks before this one have finished"),
            }
        };
        // Chunk starts fall on invocation boundaries (chunk_symbols % 32 == 0).
        for (t, &off) in offsets.iter().enumerate() {
            let first = b * BLOCK_SYMBOLS + t * THREAD_SYMBOLS;
            if first < symbols.len() && first.is_multiple_of(chunk_symbols) {
                index[first / chunk_symbols] = p + off as u64;
            }
        }
        let lead = (p % 32) as u32;
        if (lead + bits) as usize <= STAGE_WORDS * 32 {
            assemble_staged(&packed, block, lead, &offsets, shared);
            // Coalesced copy; the first and last words are shared with the
            // neighbouring blocks and ORed.
            let first_word = (p / 32) as usize;
            let words = (lead + bits).div_ceil(32) as usize;
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
        } else {
            pack_direct(&packed, block, p, &offsets, out)?;
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
        let mut shared = vec![0u32; STAGE_WORDS];
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

    #[test]
    fn long_block_codes_are_packed_directly() {
        // ~5000 rare symbols between runs of 16 common ones: the common
        // symbols take ~94% of the code space, so the rare ones get
        // codewords of ~12 bits and their blocks overflow the staging buffer.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut data: Vec<u8> = (0..40_000).map(|_| (next() % 16) as u8).collect();
        data.extend((0..5000).map(|_| 16 + (next() % 240) as u8));
        data.extend((0..40_000).map(|_| (next() % 16) as u8));
        for max_len in [12, 16, 24] {
            let mut h = [0u64; SYMBOLS];
            histogram(&data, &mut h);
            let t = CodeTable::from_histogram(&h, max_len).unwrap();
            let packed = packed_codes(&t);
            let mut offsets = [0u32; WORKGROUP_SIZE];
            let longest = data
                .chunks(BLOCK_SYMBOLS)
                .map(|b| block_offsets(&packed, b, &mut offsets).unwrap())
                .max()
                .unwrap();
            assert!(longest as usize > STAGE_WORDS * 32, "max_len {max_len}");
            check(&data, max_len, 64);
        }
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
