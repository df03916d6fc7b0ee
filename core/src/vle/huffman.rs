//! Histograms, optimal length-limited code lengths (package-merge) and
//! canonical codewords.
//!
//! Code lengths come from the package-merge algorithm (Larmore & Hirschberg),
//! which gives the lengths of minimum total size among all prefix codes whose
//! longest codeword is at most `max_len` bits. It runs on fixed arrays: one
//! list of at most `2n - 2` weights per level (only two alive at a time) and
//! one bit per list item and level recording whether it is a package.
//!
//! Codewords are canonical: sorted by (length, symbol), each codeword is the
//! previous one plus one, shifted left when the length grows. The lengths
//! alone therefore describe the code, which is all a table needs to store.

use super::{VleError, MAX_CODE_LEN, SYMBOLS};

/// Adds the byte counts of `data` to `hist`.
///
/// Counts go through four interleaved 32-bit tables (fewer store-to-load
/// stalls on runs of one byte), flushed into `hist` every 2^30 bytes.
pub fn histogram(data: &[u8], hist: &mut [u64; SYMBOLS]) {
    const FLUSH: usize = 1 << 30;
    for part in data.chunks(FLUSH) {
        let mut sub = [[0u32; SYMBOLS]; 4];
        let mut quads = part.chunks_exact(4);
        for q in &mut quads {
            sub[0][q[0] as usize] += 1;
            sub[1][q[1] as usize] += 1;
            sub[2][q[2] as usize] += 1;
            sub[3][q[3] as usize] += 1;
        }
        for &b in quads.remainder() {
            sub[0][b as usize] += 1;
        }
        for (s, h) in hist.iter_mut().enumerate() {
            *h += sub.iter().map(|t| t[s] as u64).sum::<u64>();
        }
    }
}

/// Most list items per package-merge level: `2n - 2` for `n = 256` symbols, rounded up.
const LIST_CAP: usize = 2 * SYMBOLS;
/// Words of the per-level package flag bitset.
const FLAG_WORDS: usize = LIST_CAP / 64;

/// Optimal code lengths for `hist` with no codeword longer than `max_len`.
///
/// Symbols with a zero count get length 0 (no codeword). A single used symbol
/// gets length 1, so that every used symbol has a codeword of at least one
/// bit (the GPU packer relies on it). The result is deterministic: ties
/// between equal weights are broken by symbol value.
pub fn code_lengths(hist: &[u64; SYMBOLS], max_len: u32) -> Result<[u8; SYMBOLS], VleError> {
    if !(1..=MAX_CODE_LEN).contains(&max_len) {
        return Err(VleError::MaxLenOutOfRange(max_len));
    }
    let mut lens = [0u8; SYMBOLS];
    // Used symbols sorted by (weight, symbol).
    let mut leaves = [(0u64, 0u8); SYMBOLS];
    let mut n = 0usize;
    for (s, &w) in hist.iter().enumerate() {
        if w > 0 {
            leaves[n] = (w, s as u8);
            n += 1;
        }
    }
    let leaves = &mut leaves[..n];
    leaves.sort_unstable();
    match n {
        0 => return Ok(lens),
        1 => {
            lens[leaves[0].1 as usize] = 1;
            return Ok(lens);
        }
        _ => {}
    }
    if (n as u64) > (1u64 << max_len) {
        return Err(VleError::LengthLimitTooSmall {
            used: n as u32,
            max_len,
        });
    }

    // Build the lists from the deepest level (max_len) up to level 1. Only
    // the first `keep` items of any list can ever be selected.
    let keep = 2 * n - 2;
    let levels = max_len as usize;
    let mut is_package = [[0u64; FLAG_WORDS]; MAX_CODE_LEN as usize];
    let mut prev = [0u64; LIST_CAP];
    let mut prev_len = n.min(keep);
    for (p, leaf) in prev.iter_mut().zip(leaves.iter()).take(prev_len) {
        *p = leaf.0;
    }
    for level in (0..levels - 1).rev() {
        let mut cur = [0u64; LIST_CAP];
        let packages = prev_len / 2;
        let (mut li, mut pi, mut len) = (0usize, 0usize, 0usize);
        while len < keep && (li < n || pi < packages) {
            let package = if pi < packages {
                Some(prev[2 * pi].saturating_add(prev[2 * pi + 1]))
            } else {
                None
            };
            match package {
                Some(w) if li >= n || w < leaves[li].0 => {
                    cur[len] = w;
                    is_package[level][len / 64] |= 1 << (len % 64);
                    pi += 1;
                }
                _ => {
                    cur[len] = leaves[li].0;
                    li += 1;
                }
            }
            len += 1;
        }
        prev = cur;
        prev_len = len;
    }
    debug_assert!(prev_len == keep, "feasibility was checked above");

    // Select the first `keep` items of level 1; each selected leaf adds one
    // bit to its symbol's length, each selected package selects two items of
    // the level below.
    let mut select = keep;
    for flags in is_package.iter().take(levels) {
        let packages = (0..select)
            .filter(|&i| flags[i / 64] >> (i % 64) & 1 == 1)
            .count();
        for leaf in leaves.iter().take(select - packages) {
            lens[leaf.1 as usize] += 1;
        }
        select = 2 * packages;
    }
    Ok(lens)
}

/// A canonical prefix code over the 256 byte values: a codeword length
/// (0 = no codeword) and a codeword, right-aligned, per symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CodeTable {
    lens: [u8; SYMBOLS],
    codes: [u32; SYMBOLS],
    max_len: u8,
    used: u16,
}

impl CodeTable {
    /// The canonical code for `lens`, after checking that every length is at
    /// most [`MAX_CODE_LEN`] and that the lengths satisfy the Kraft
    /// inequality (so the canonical code is prefix-free).
    pub fn from_lengths(lens: &[u8; SYMBOLS]) -> Result<Self, VleError> {
        let mut count = [0u32; MAX_CODE_LEN as usize + 1];
        let mut kraft = 0u64;
        for &l in lens.iter() {
            if l as u32 > MAX_CODE_LEN {
                return Err(VleError::CodeLengthTooLong(l));
            }
            if l > 0 {
                count[l as usize] += 1;
                kraft += 1u64 << (MAX_CODE_LEN - l as u32);
            }
        }
        if kraft > 1u64 << MAX_CODE_LEN {
            return Err(VleError::NotPrefixFree);
        }
        // First codeword of each length, then hand them out in symbol order.
        let mut next = [0u32; MAX_CODE_LEN as usize + 2];
        for l in 2..=MAX_CODE_LEN as usize {
            next[l] = (next[l - 1] + count[l - 1]) << 1;
        }
        let mut codes = [0u32; SYMBOLS];
        for (s, &l) in lens.iter().enumerate() {
            if l > 0 {
                codes[s] = next[l as usize];
                next[l as usize] += 1;
            }
        }
        Ok(CodeTable {
            lens: *lens,
            codes,
            max_len: lens.iter().copied().max().unwrap_or(0),
            used: lens.iter().filter(|&&l| l > 0).count() as u16,
        })
    }

    /// The optimal canonical code for `hist` with codewords of at most `max_len` bits.
    pub fn from_histogram(hist: &[u64; SYMBOLS], max_len: u32) -> Result<Self, VleError> {
        CodeTable::from_lengths(&code_lengths(hist, max_len)?)
    }

    /// Codeword length of `symbol` in bits (0: no codeword).
    pub fn code_len(&self, symbol: u8) -> u32 {
        self.lens[symbol as usize] as u32
    }

    /// Codeword of `symbol`, right-aligned in `code_len(symbol)` bits.
    pub fn code(&self, symbol: u8) -> u32 {
        self.codes[symbol as usize]
    }

    /// All codeword lengths, indexed by symbol.
    pub fn lengths(&self) -> &[u8; SYMBOLS] {
        &self.lens
    }

    /// All codewords, indexed by symbol.
    pub fn codes(&self) -> &[u32; SYMBOLS] {
        &self.codes
    }

    /// Length of the longest codeword (0 for an empty table).
    pub fn max_len(&self) -> u32 {
        self.max_len as u32
    }

    /// Number of symbols with a codeword.
    pub fn used_symbols(&self) -> u32 {
        self.used as u32
    }

    /// True when no symbol has a codeword.
    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    /// Exact number of bits the symbols counted in `hist` encode to; an error
    /// names the first counted symbol without a codeword.
    pub fn encoded_bits(&self, hist: &[u64; SYMBOLS]) -> Result<u64, VleError> {
        let mut bits = 0u64;
        for (s, &count) in hist.iter().enumerate() {
            if count > 0 {
                if self.lens[s] == 0 {
                    return Err(VleError::SymbolWithoutCode(s as u8));
                }
                bits = bits.saturating_add(count.saturating_mul(self.lens[s] as u64));
            }
        }
        Ok(bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn kraft(lens: &[u8; SYMBOLS]) -> f64 {
        lens.iter()
            .filter(|&&l| l > 0)
            .map(|&l| (0.5f64).powi(l as i32))
            .sum()
    }

    /// Plain Huffman (no length limit) by repeated merging of the two
    /// lightest trees: (total cost, deepest codeword). Reference for optimality.
    fn huffman_cost(hist: &[u64; SYMBOLS]) -> (u64, usize) {
        // Each tree: (weight, depths of its leaves).
        let mut trees: std::vec::Vec<(u64, std::vec::Vec<usize>)> = hist
            .iter()
            .filter(|&&c| c > 0)
            .map(|&c| (c, std::vec![0]))
            .collect();
        let mut cost = 0;
        while trees.len() > 1 {
            trees.sort_unstable_by_key(|t| core::cmp::Reverse(t.0));
            let (wa, da) = trees.pop().unwrap();
            let (wb, db) = trees.pop().unwrap();
            cost += wa + wb;
            let depths = da.iter().chain(&db).map(|d| d + 1).collect();
            trees.push((wa + wb, depths));
        }
        (cost, trees[0].1.iter().copied().max().unwrap_or(0))
    }

    fn cost(hist: &[u64; SYMBOLS], lens: &[u8; SYMBOLS]) -> u64 {
        hist.iter().zip(lens).map(|(&c, &l)| c * l as u64).sum()
    }

    #[test]
    fn known_small_code() {
        // Weights 1, 1, 2, 4: Huffman lengths 3, 3, 2, 1.
        let mut h = [0u64; SYMBOLS];
        h[b'a' as usize] = 4;
        h[b'b' as usize] = 2;
        h[b'c' as usize] = 1;
        h[b'd' as usize] = 1;
        let t = CodeTable::from_histogram(&h, 16).unwrap();
        assert_eq!(
            [b'a', b'b', b'c', b'd'].map(|s| (t.code_len(s), t.code(s))),
            [(1, 0b0), (2, 0b10), (3, 0b110), (3, 0b111)]
        );
        // Limit 2: all four get 2 bits.
        let t = CodeTable::from_histogram(&h, 2).unwrap();
        assert_eq!([b'a', b'b', b'c', b'd'].map(|s| t.code_len(s)), [2; 4]);
        assert_eq!(
            CodeTable::from_histogram(&h, 1),
            Err(VleError::LengthLimitTooSmall {
                used: 4,
                max_len: 1
            })
        );
    }

    #[test]
    fn empty_and_single_symbol() {
        let h = [0u64; SYMBOLS];
        let t = CodeTable::from_histogram(&h, 16).unwrap();
        assert!(t.is_empty());
        assert_eq!(t.max_len(), 0);
        let mut h = [0u64; SYMBOLS];
        h[7] = 1000;
        let t = CodeTable::from_histogram(&h, 16).unwrap();
        assert_eq!((t.code_len(7), t.code(7), t.used_symbols()), (1, 0, 1));
        assert_eq!(t.encoded_bits(&h), Ok(1000));
    }

    #[test]
    fn bad_inputs_are_errors() {
        let h = [1u64; SYMBOLS];
        assert_eq!(code_lengths(&h, 0), Err(VleError::MaxLenOutOfRange(0)));
        assert_eq!(code_lengths(&h, 25), Err(VleError::MaxLenOutOfRange(25)));
        assert!(code_lengths(&h, 8).is_ok());
        assert!(code_lengths(&h, 7).is_err());
        let mut lens = [1u8; SYMBOLS];
        assert_eq!(CodeTable::from_lengths(&lens), Err(VleError::NotPrefixFree));
        lens = [0; SYMBOLS];
        lens[0] = 25;
        assert_eq!(
            CodeTable::from_lengths(&lens),
            Err(VleError::CodeLengthTooLong(25))
        );
        let t = CodeTable::from_histogram(&[0; SYMBOLS], 16).unwrap();
        let mut h = [0u64; SYMBOLS];
        h[3] = 1;
        assert_eq!(t.encoded_bits(&h), Err(VleError::SymbolWithoutCode(3)));
    }

    #[test]
    fn fibonacci_weights_hit_the_limit() {
        // Fibonacci weights make unrestricted Huffman as deep as possible.
        let mut h = [0u64; SYMBOLS];
        let (mut a, mut b) = (1u64, 1u64);
        for w in h.iter_mut().take(40) {
            *w = a;
            (a, b) = (b, a + b);
        }
        for max_len in [6u32, 8, 12, 16, 24] {
            let lens = code_lengths(&h, max_len).unwrap();
            assert_eq!(*lens.iter().max().unwrap() as u32, max_len);
            assert!((kraft(&lens) - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn histogram_counts() {
        let mut h = [0u64; SYMBOLS];
        histogram(b"hello, world", &mut h);
        assert_eq!(
            (h[b'l' as usize], h[b'o' as usize], h[b'h' as usize]),
            (3, 2, 1)
        );
        assert_eq!(h.iter().sum::<u64>(), 12);
    }

    proptest! {
        #[test]
        fn lengths_are_complete_limited_and_optimal(
            counts in proptest::collection::vec(0u64..100_000, SYMBOLS),
            sparse in 0u32..4,
            max_len in 8u32..=24,
        ) {
            let mut h = [0u64; SYMBOLS];
            for (s, &c) in counts.iter().enumerate() {
                // Make some histograms sparse and very skewed.
                h[s] = match sparse {
                    0 => c,
                    1 => if s % 7 == 0 { c } else { 0 },
                    2 => c >> (s % 17),
                    _ => if s < 3 { c + 1 } else { 0 },
                };
            }
            let lens = code_lengths(&h, max_len).unwrap();
            let used = h.iter().filter(|&&c| c > 0).count();
            for s in 0..SYMBOLS {
                prop_assert_eq!(lens[s] > 0, h[s] > 0);
                prop_assert!(lens[s] as u32 <= max_len);
            }
            if used >= 2 {
                prop_assert!((kraft(&lens) - 1.0).abs() < 1e-12);
                // Never better than unrestricted Huffman; equal when the
                // limit does not bind.
                let c = cost(&h, &lens);
                let (huff, depth) = huffman_cost(&h);
                prop_assert!(c >= huff);
                if depth <= max_len as usize {
                    prop_assert_eq!(c, huff);
                }
            }
            let t = CodeTable::from_lengths(&lens).unwrap();
            // Canonical codes are prefix-free: no codeword is a prefix of another.
            for a in 0..SYMBOLS {
                for b in 0..SYMBOLS {
                    let (la, lb) = (t.lens[a] as u32, t.lens[b] as u32);
                    if a != b && la > 0 && lb >= la {
                        prop_assert_ne!(t.codes[b] >> (lb - la), t.codes[a]);
                    }
                }
            }
        }
    }
}
