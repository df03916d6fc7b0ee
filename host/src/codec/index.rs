//! The codeblock index (docs/format.md, section 5): for every codeblock in
//! file order its top bitplane, its bitplane shift (when the header says
//! blocks carry one) and the number of codewords each quality layer adds.
//! Bit-packed with Exp-Golomb codes (MSB first, [`BitWriter`]/[`BitReader`]
//! of wavelane-core), so a block a layer leaves out costs one bit.

use bitvec::prelude::*;
use rayon::prelude::*;
use wavelane_core::bits::{BitError, BitReader, BitWriter};
use wavelane_core::bpc::MAX_BITPLANE;

use super::codeblocks::BlockGeometry;
use super::format::FormatError;

/// Per-codeblock coding results as the file records them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockIndex {
    /// Quality layers.
    pub layers: usize,
    /// Top bitplane `M` of each block (`None`: all zero, no data).
    pub tops: Vec<Option<u8>>,
    /// Bitplanes dropped below each block's coded indices (0 unless early
    /// termination was on).
    pub shifts: Vec<u8>,
    /// Codewords block `i` adds in layer `l`, at `i * layers + l`.
    pub counts: Vec<u32>,
}

/// Bits of `ue(v)`.
pub const fn ue_bits(v: u32) -> u64 {
    let x = v as u64 + 1;
    2 * (63 - x.leading_zeros() as u64) + 1
}

/// Bits of `se(v)`.
pub const fn se_bits(v: i32) -> u64 {
    let mapped = if v > 0 {
        v as u64 * 2 - 1
    } else {
        v.unsigned_abs() as u64 * 2
    };
    let x = mapped + 1;
    2 * (63 - x.leading_zeros() as u64) + 1
}

/// Index entries packed per task (`BlockIndex::pack`).
const PACK_CHUNK: usize = 1024;

fn top_code(top: Option<u8>) -> i32 {
    top.map_or(0, |m| m as i32 + 1)
}

impl BlockIndex {
    /// The first and last block with codewords in one segment of a file
    /// (the blocks of resolution `resolution`, layer `layer`), where
    /// `resolution_of(i)` is block `i`'s resolution: what a damaged or
    /// missing segment costs, as `verify` and the partial decoders report
    /// it. `(0, 0)` when no block has codewords there.
    pub fn segment_codeblocks(
        &self,
        resolution_of: impl Fn(usize) -> usize,
        resolution: usize,
        layer: usize,
    ) -> (usize, usize) {
        let has_data = |i: usize| {
            resolution_of(i) == resolution
                && self
                    .counts
                    .get(i * self.layers + layer)
                    .is_some_and(|&n| n > 0)
        };
        let blocks = self.tops.len();
        let first = (0..blocks).find(|&i| has_data(i)).unwrap_or(0);
        let last = (0..blocks).rfind(|&i| has_data(i)).unwrap_or(first);
        (first, last)
    }

    /// An index of `blocks` empty blocks.
    pub fn new(blocks: usize, layers: usize) -> Self {
        BlockIndex {
            layers,
            tops: vec![None; blocks],
            shifts: vec![0; blocks],
            counts: vec![0; blocks * layers],
        }
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.tops.len()
    }

    /// Codewords of block `i` in layers `0..layers`.
    pub fn codewords_through(&self, i: usize, layers: usize) -> u64 {
        let l = layers.min(self.layers);
        self.counts[i * self.layers..i * self.layers + l]
            .iter()
            .map(|&c| c as u64)
            .sum()
    }

    /// The layer counts of block `i`.
    pub fn layer_counts(&self, i: usize) -> &[u32] {
        &self.counts[i * self.layers..(i + 1) * self.layers]
    }

    /// Bits block `i`'s entry takes, given its predecessor's top bitplane.
    pub fn entry_bits(&self, i: usize, shifts: bool) -> u64 {
        let prev = if i == 0 {
            0
        } else {
            top_code(self.tops[i - 1])
        };
        let code = top_code(self.tops[i]);
        let mut bits = se_bits(code - prev);
        if code != 0 {
            if shifts {
                bits += ue_bits(self.shifts[i] as u32);
            }
            bits += self
                .layer_counts(i)
                .iter()
                .map(|&c| ue_bits(c))
                .sum::<u64>();
        }
        bits
    }

    /// Bytes of the packed index.
    pub fn packed_len(&self, shifts: bool) -> usize {
        let bits: u64 = (0..self.blocks()).map(|i| self.entry_bits(i, shifts)).sum();
        bits.div_ceil(8) as usize
    }

    /// Packs the index; `shifts` says whether shift values are written.
    pub fn pack(&self, shifts: bool) -> Result<Vec<u8>, FormatError> {
        self.pack_in_chunks(shifts, PACK_CHUNK)
    }

    /// [`Self::pack`] with the entries packed `chunk` blocks at a time on
    /// all cores, then joined bit by bit: an entry's top bitplane is coded
    /// against its predecessor's, which each chunk reads from the index
    /// itself, so the bits are those of one pass over every block (an 8K
    /// image has tens of thousands of entries).
    fn pack_in_chunks(&self, shifts: bool, chunk: usize) -> Result<Vec<u8>, FormatError> {
        let err = |e: BitError| FormatError::Unrepresentable(format!("index: {e}"));
        let n = self.blocks();
        let chunk = chunk.max(1);
        let parts = (0..n.div_ceil(chunk))
            .into_par_iter()
            .map(|c| {
                let blocks = c * chunk..((c + 1) * chunk).min(n);
                let bits: u64 = blocks.clone().map(|i| self.entry_bits(i, shifts)).sum();
                let mut buf = vec![0u8; bits.div_ceil(8) as usize];
                let mut w = BitWriter::new(&mut buf);
                let mut prev = match blocks.start {
                    0 => 0,
                    first => top_code(self.tops[first - 1]),
                };
                for i in blocks {
                    let code = top_code(self.tops[i]);
                    w.write_se(code - prev).map_err(err)?;
                    prev = code;
                    if code == 0 {
                        continue;
                    }
                    if shifts {
                        w.write_ue(self.shifts[i] as u32).map_err(err)?;
                    }
                    for &c in self.layer_counts(i) {
                        w.write_ue(c).map_err(err)?;
                    }
                }
                Ok((buf, bits as usize))
            })
            .collect::<Result<Vec<_>, FormatError>>()?;
        // The chunks' bits, added: `packed_len` without a second pass.
        let bits: usize = parts.iter().map(|(_, bits)| bits).sum();
        let mut out = vec![0u8; bits.div_ceil(8)];
        let dst = out.view_bits_mut::<Msb0>();
        let mut at = 0;
        for (buf, bits) in &parts {
            dst[at..at + bits].copy_from_bitslice(&buf.view_bits::<Msb0>()[..*bits]);
            at += bits;
        }
        // The padding to the byte boundary is left zero.
        Ok(out)
    }

    /// Parses a packed index for `blocks` (file order), checking every
    /// value: top bitplanes at most 27, shifts keeping `M + shift <= 27`,
    /// and each block's total codewords within the most its size and `M`
    /// can produce. The padding after the last entry must be zero bits and
    /// shorter than a byte.
    pub fn parse(
        bytes: &[u8],
        blocks: &[BlockGeometry],
        layers: usize,
        shifts: bool,
    ) -> Result<Self, FormatError> {
        let bad = |e: BitError| FormatError::Index(format!("{e}"));
        let mut r = BitReader::new(bytes);
        let mut index = BlockIndex::new(blocks.len(), layers);
        let mut prev: i64 = 0;
        for (i, block) in blocks.iter().enumerate() {
            let code = prev + r.read_se().map_err(bad)? as i64;
            if !(0..=MAX_BITPLANE as i64 + 1).contains(&code) {
                return Err(FormatError::Index(format!(
                    "block {i}: top bitplane code {code} outside 0..=28"
                )));
            }
            prev = code;
            if code == 0 {
                continue;
            }
            let top = (code - 1) as u8;
            index.tops[i] = Some(top);
            if shifts {
                let s = r.read_ue().map_err(bad)?;
                if (top as u32).saturating_add(s) > MAX_BITPLANE as u32 {
                    return Err(FormatError::Index(format!(
                        "block {i}: shift {s} with top bitplane {top} exceeds 27"
                    )));
                }
                index.shifts[i] = s as u8;
            }
            let max = block.max_codewords(Some(top)) as u64;
            let mut total = 0u64;
            for l in 0..layers {
                let c = r.read_ue().map_err(bad)?;
                total += c as u64;
                index.counts[i * layers + l] = c;
            }
            if total > max {
                return Err(FormatError::Index(format!(
                    "block {i}: {total} codewords, more than the {max} a {}x{} block with top bitplane {top} can have",
                    block.rect.width, block.rect.height
                )));
            }
        }
        let left = r.remaining_bits();
        if left >= 8 || (left > 0 && r.read_bits(left as u32).map_err(bad)? != 0) {
            return Err(FormatError::Index(format!(
                "{left} bits left after the last block (must be < 8 zero bits)"
            )));
        }
        Ok(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::codeblocks::codeblocks;

    #[test]
    fn pack_parse_round_trip_and_sizes() {
        let blocks = codeblocks(300, 200, 3, 4, 32);
        let mut index = BlockIndex::new(blocks.len(), 3);
        for i in 0..blocks.len() {
            if i % 5 == 3 {
                continue;
            }
            index.tops[i] = Some((i % 12) as u8);
            index.shifts[i] = (i % 3) as u8;
            for l in 0..3 {
                index.counts[i * 3 + l] = ((i * 7 + l * 13) % 40) as u32;
            }
        }
        for shifts in [false, true] {
            let mut expected = index.clone();
            if !shifts {
                expected.shifts.iter_mut().for_each(|s| *s = 0);
            }
            let packed = index.pack(shifts).unwrap();
            assert_eq!(packed.len(), index.packed_len(shifts));
            // Packed in chunks of any size, the bytes are the same (each
            // chunk codes its first top against the block before it).
            for chunk in [1, 2, 7, 64, blocks.len()] {
                assert_eq!(
                    index.pack_in_chunks(shifts, chunk).unwrap(),
                    packed,
                    "chunk {chunk}"
                );
            }
            assert_eq!(
                BlockIndex::parse(&packed, &blocks, 3, shifts).unwrap(),
                expected
            );
            // Any truncation of the index is an error, never a panic.
            for cut in 0..packed.len() {
                assert!(BlockIndex::parse(&packed[..cut], &blocks, 3, shifts).is_err());
            }
        }
    }

    #[test]
    fn exp_golomb_sizes() {
        assert_eq!(ue_bits(0), 1);
        assert_eq!(ue_bits(1), 3);
        assert_eq!(ue_bits(6), 5);
        assert_eq!(ue_bits(7), 7);
        assert_eq!(se_bits(0), 1);
        assert_eq!(se_bits(1), 3);
        assert_eq!(se_bits(-1), 3);
        assert_eq!(se_bits(-2), 5);
    }
}
