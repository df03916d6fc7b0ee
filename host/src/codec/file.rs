//! The whole `.wl` file: main header (fixed part, steps, tables, codeblock
//! index, segment CRC table, header CRC), then the data segments in
//! resolution-major order (docs/format.md). [`write_file`] assembles one,
//! [`Container::parse`] checks one and tells where every codeblock's
//! codewords are.

use rayon::prelude::*;

use super::codeblocks::{codeblock_count, codeblocks, BlockGeometry};
use super::format::*;
use super::header::{Cursor, Header};
use super::index::BlockIndex;

/// How strictly to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Most samples (width x height x components) to accept.
    pub max_samples: u64,
    /// Check the header and segment CRC-32s (turned off only to exercise
    /// the deeper validation in robustness tests).
    pub check_crc: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_samples: DEFAULT_MAX_SAMPLES,
            check_crc: true,
        }
    }
}

/// One data segment: the codewords layer `layer` adds to every codeblock of
/// resolution `resolution`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Resolution (0 = LL).
    pub resolution: usize,
    /// Quality layer.
    pub layer: usize,
    /// Offset of its first byte in the file.
    pub offset: u64,
    /// Bytes (twice its codewords).
    pub len: u64,
    /// Its CRC-32 (0 for an empty segment, which has no table entry).
    pub crc: u32,
}

/// A parsed file: the header, the index, and where everything lies.
#[derive(Debug, Clone)]
pub struct Container<'a> {
    /// The format version the file declares (one this reader knows).
    pub version: u16,
    /// Coding parameters.
    pub header: Header,
    /// Per-block top bitplanes, shifts and layer counts.
    pub index: BlockIndex,
    /// Codeblocks in file order.
    pub blocks: Vec<BlockGeometry>,
    /// Segments in file order (resolution-major, then layer).
    pub segments: Vec<Segment>,
    /// Offset of each block's codewords inside each segment:
    /// `block_offsets[i * layers + l]` bytes from the start of the file.
    pub block_offsets: Vec<u64>,
    /// Bytes of the main header (the data starts there).
    pub header_len: usize,
    /// The file's bytes (possibly a truncated prefix).
    pub bytes: &'a [u8],
    /// Bytes the complete file has.
    pub full_len: u64,
}

fn segment_lengths(header: &Header, index: &BlockIndex, blocks: &[BlockGeometry]) -> Vec<u64> {
    let layers = header.layers as usize;
    let mut lens = vec![0u64; (header.levels as usize + 1) * layers];
    for (i, b) in blocks.iter().enumerate() {
        for (l, &c) in index.layer_counts(i).iter().enumerate() {
            lens[b.resolution as usize * layers + l] += 2 * c as u64;
        }
    }
    lens
}

/// Where every block's codewords of every layer lie: entry `i * layers +
/// l` is the offset of block `i`'s layer-`l` codewords, the blocks of a
/// segment in index order, the segments one after another from `start`
/// with the lengths `lens` ([`segment_lengths`]). The writer places the
/// bytes by it and the parser finds them by it.
fn block_offsets(
    index: &BlockIndex,
    blocks: &[BlockGeometry],
    lens: &[u64],
    start: u64,
) -> Vec<u64> {
    let layers = index.layers;
    let mut cursor = Vec::with_capacity(lens.len());
    let mut at = start;
    for &len in lens {
        cursor.push(at);
        at += len;
    }
    let mut offsets = vec![0u64; blocks.len() * layers];
    for (i, b) in blocks.iter().enumerate() {
        for (l, &c) in index.layer_counts(i).iter().enumerate() {
            let k = b.resolution as usize * layers + l;
            offsets[i * layers + l] = cursor[k];
            cursor[k] += 2 * c as u64;
        }
    }
    offsets
}

/// Bytes of the main header for this header and index: what [`write_file`]
/// will put before the data. Rate control uses the same pieces
/// incrementally.
pub fn main_header_len(header: &Header, index: &BlockIndex, nonempty_segments: usize) -> usize {
    let mut fixed = Vec::new();
    // Writing the fixed part cannot fail for a header the encoder built.
    let _ = header.write(&mut fixed);
    fixed.len() + 4 + index.packed_len(header.block_shifts) + 4 * nonempty_segments + 4
}

/// Bytes of a segment checksummed by one thread while writing or
/// checking a file.
const CRC_PIECE: usize = 1 << 20;

/// The CRC-32 of `bytes` from pieces checksummed on all cores, combined in
/// order (the same value as one pass).
fn crc32_on_all_cores(bytes: &[u8]) -> u32 {
    let pieces: Vec<crc32fast::Hasher> = bytes
        .par_chunks(CRC_PIECE)
        .map(|piece| {
            let mut h = crc32fast::Hasher::new();
            h.update(piece);
            h
        })
        .collect();
    let mut crc = crc32fast::Hasher::new();
    for piece in &pieces {
        crc.combine(piece);
    }
    crc.finalize()
}

/// Assembles a file. `codewords[i]` holds at least the codewords the index
/// gives block `i` over all layers.
pub fn write_file(
    header: &Header,
    index: &BlockIndex,
    codewords: &[&[u16]],
) -> Result<Vec<u8>, FormatError> {
    let blocks = codeblocks(
        header.width as usize,
        header.height as usize,
        header.components as usize,
        header.levels as u32,
        header.codeblock_height as usize,
    );
    if blocks.len() != index.blocks()
        || codewords.len() != blocks.len()
        || index.layers != header.layers as usize
    {
        return Err(FormatError::Unrepresentable(format!(
            "{} blocks in the image, {} in the index, {} codeword lists",
            blocks.len(),
            index.blocks(),
            codewords.len()
        )));
    }
    let layers = index.layers;
    let lens = segment_lengths(header, index, &blocks);
    let data_len = lens.iter().sum::<u64>() as usize;
    let nonempty = lens.iter().filter(|&&n| n > 0).count();
    let offsets = block_offsets(index, &blocks, &lens, 0);
    let packed = index.pack(header.block_shifts)?;
    let mut out = Vec::with_capacity(64 + packed.len() + 4 * nonempty + 4 + data_len);
    header.write(&mut out)?;
    out.extend_from_slice(&(packed.len() as u32).to_le_bytes());
    out.extend_from_slice(&packed);
    let crc_at = out.len();
    out.resize(crc_at + 4 * nonempty, 0);
    let header_len = out.len() + 4;
    out[10..14].copy_from_slice(&(header_len as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);

    // Every block's part of every layer has its place in the data before
    // any byte is written, so the parts are filled on all cores, each on
    // its own slice (taken in the order of their offsets; a block's
    // codewords in layer `l` start after those of its earlier layers).
    let data_at = out.len();
    // Zeroed on all cores: the data is most of the file, in fresh pages
    // that a single-threaded `resize` would fault in and clear one by
    // one (a lossless 8K file: 15 MB; docs/perf/codec.md, "Host work
    // between the kernels").
    out.par_extend(rayon::iter::repeat_n(0u8, data_len));
    let mut order: Vec<(u64, usize)> = offsets.iter().copied().zip(0..).collect();
    order.sort_unstable();
    let segments: Vec<(usize, usize, usize)> = order
        .into_iter()
        .map(|(_, j)| {
            let (i, l) = (j / layers, j % layers);
            let counts = index.layer_counts(i);
            let start: usize = counts[..l].iter().map(|&c| c as usize).sum();
            (i, start, 2 * counts[l] as usize)
        })
        .collect();
    let parts = crate::memory::split_into_parts(
        &mut out[data_at..],
        segments.iter().map(|&(_, _, len)| len),
    );
    parts
        .into_par_iter()
        .zip(&segments)
        .try_for_each(|(part, &(i, start, _))| {
            let words = codewords[i]
                .get(start..start + part.len() / 2)
                .ok_or_else(|| {
                    FormatError::Unrepresentable(format!(
                        "block {i} has fewer codewords than its index says"
                    ))
                })?;
            for (d, w) in part.chunks_exact_mut(2).zip(words) {
                d.copy_from_slice(&w.to_be_bytes());
            }
            Ok::<(), FormatError>(())
        })?;
    // Each segment's CRC from pieces checksummed on all cores, combined
    // in order.
    let mut crcs = Vec::with_capacity(nonempty);
    let mut at = data_at;
    for &len in &lens {
        let segment = &out[at..at + len as usize];
        at += len as usize;
        if segment.is_empty() {
            continue;
        }
        crcs.push(crc32_on_all_cores(segment));
    }
    for (k, crc) in crcs.iter().enumerate() {
        out[crc_at + 4 * k..crc_at + 4 * k + 4].copy_from_slice(&crc.to_le_bytes());
    }
    let crc = crc32fast::hash(&out[..header_len - 4]);
    out[header_len - 4..header_len].copy_from_slice(&crc.to_le_bytes());
    Ok(out)
}

impl<'a> Container<'a> {
    /// Parses and checks the main header of `bytes` (which may be any
    /// prefix of a file that holds the whole main header) and locates the
    /// data. Segment CRCs are checked by [`Container::check_segment`].
    pub fn parse(bytes: &'a [u8], options: ReadOptions) -> Result<Self, FormatError> {
        let (header, header_len, mut pos) = Header::parse(bytes)?;
        let samples = header.samples();
        if samples > options.max_samples {
            return Err(FormatError::TooLarge {
                samples,
                limit: options.max_samples,
            });
        }
        let header_len = header_len as usize;
        let min_len = pos + 4 + 4;
        check_field(
            "header_length",
            header_len as u64,
            header_len >= min_len,
            "shorter than the header's own fields",
        )?;
        if header_len > bytes.len() {
            return Err(FormatError::Truncated {
                what: "main header",
                needed: header_len as u64,
                available: bytes.len() as u64,
            });
        }
        if options.check_crc {
            let stored = u32::from_le_bytes(
                bytes[header_len - 4..header_len]
                    .try_into()
                    .expect("4 bytes"),
            );
            let computed = crc32fast::hash(&bytes[..header_len - 4]);
            if stored != computed {
                return Err(FormatError::HeaderCrc { stored, computed });
            }
        }
        let head = &bytes[..header_len - 4];
        let mut r = Cursor::new(head, "main header");
        r.pos = pos;
        let index_len = r.u32()? as usize;
        let packed = r.take(index_len)?;
        pos = r.pos;
        let (w, h, c) = (
            header.width as usize,
            header.height as usize,
            header.components as usize,
        );
        let (levels, cbh) = (header.levels as u32, header.codeblock_height as usize);
        // Bounded by the sample budget: a block holds at least one sample.
        let count = codeblock_count(w, h, c, levels, cbh);
        if count > samples {
            return Err(FormatError::Index("more codeblocks than samples".into()));
        }
        let blocks = codeblocks(w, h, c, levels, cbh);
        let layers = header.layers as usize;
        let index = BlockIndex::parse(packed, &blocks, layers, header.block_shifts)?;

        let lens = segment_lengths(&header, &index, &blocks);
        let nonempty = lens.iter().filter(|&&l| l > 0).count();
        check_field(
            "header_length",
            header_len as u64,
            header_len == pos + 4 * nonempty + 4,
            "must end right after the segment CRC table and the header CRC",
        )?;
        let mut r = Cursor::new(head, "segment CRC table");
        r.pos = pos;
        let mut segments = Vec::with_capacity(lens.len());
        let mut offset = header_len as u64;
        for (k, &len) in lens.iter().enumerate() {
            let crc = if len > 0 { r.u32()? } else { 0 };
            segments.push(Segment {
                resolution: k / layers,
                layer: k % layers,
                offset,
                len,
                crc,
            });
            offset += len;
        }
        let full_len = offset;
        if bytes.len() as u64 > full_len {
            return Err(FormatError::TrailingData(bytes.len() as u64 - full_len));
        }
        // Where each block's codewords start inside its segments.
        let block_offsets = block_offsets(&index, &blocks, &lens, header_len as u64);
        Ok(Container {
            // Header::parse read and checked these two bytes.
            version: u16::from_le_bytes([bytes[8], bytes[9]]),
            header,
            index,
            blocks,
            segments,
            block_offsets,
            header_len,
            bytes,
            full_len,
        })
    }

    /// True when the bytes hold the whole file.
    pub fn is_complete(&self) -> bool {
        self.bytes.len() as u64 == self.full_len
    }

    /// Checks the CRC of segment `k` if all of it is present. Returns
    /// whether it was complete (a segment cut by truncation cannot be
    /// checked; its codewords are used as they are).
    pub fn check_segment(&self, k: usize) -> Result<bool, FormatError> {
        let s = self.segments[k];
        let end = s.offset + s.len;
        if end > self.bytes.len() as u64 {
            return Ok(false);
        }
        let computed = crc32_on_all_cores(&self.bytes[s.offset as usize..end as usize]);
        if computed != s.crc {
            return Err(FormatError::SegmentCrc {
                resolution: s.resolution,
                layer: s.layer,
                stored: s.crc,
                computed,
            });
        }
        Ok(true)
    }

    /// The codewords of block `i` in layers `0..layers` that are present in
    /// the bytes (a prefix of them when the file is truncated).
    pub fn block_codewords(&self, i: usize, layers: usize) -> Vec<u16> {
        let mut words = vec![0; self.block_codewords_len(i, layers)];
        self.block_codewords_into(i, layers, &mut words);
        words
    }

    /// How many codewords [`Self::block_codewords`] gives for block `i`
    /// through `layers` layers, without reading them.
    pub fn block_codewords_len(&self, i: usize, layers: usize) -> usize {
        let mut len = 0;
        self.block_segments(i, layers, |bytes| len += bytes.len() / 2);
        len
    }

    /// [`Self::block_codewords`] into `out`, which holds exactly
    /// [`Self::block_codewords_len`] codewords (what it has beyond them is
    /// left as it is): the decoder's batch is filled in place.
    pub fn block_codewords_into(&self, i: usize, layers: usize, out: &mut [u16]) {
        let mut at = 0;
        self.block_segments(i, layers, |bytes| {
            let n = (bytes.len() / 2).min(out.len() - at);
            for (d, p) in out[at..at + n].iter_mut().zip(bytes.chunks_exact(2)) {
                *d = u16::from_be_bytes([p[0], p[1]]);
            }
            at += n;
        });
    }

    /// The bytes of block `i`'s segments through `layers` layers, in
    /// order, each cut where the file ends, up to the first segment the
    /// file cuts short (later layers cannot follow a truncated one).
    fn block_segments(&self, i: usize, layers: usize, mut segment: impl FnMut(&[u8])) {
        let mut words = 0u64;
        for l in 0..layers.min(self.index.layers) {
            let n = self.index.counts[i * self.index.layers + l] as u64;
            let start = self.block_offsets[i * self.index.layers + l];
            let end = (start + 2 * n).min(self.bytes.len() as u64);
            if start < end {
                // Whole codewords only: a file cut inside one drops it.
                let whole = start + (end - start) / 2 * 2;
                segment(&self.bytes[start as usize..whole as usize]);
                words += (end - start) / 2;
            }
            if words < self.index.codewords_through(i, l + 1) {
                break; // truncated inside this layer: later layers cannot follow
            }
        }
    }
}
