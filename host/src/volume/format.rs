//! The volume container (`.wl` volume files, docs/format.md "Volume
//! files"): its own magic, so that no image reader mistakes it for an
//! image, then a main header with the depth and per-axis levels, the
//! codeblock index of the image format ([`BlockIndex`]), one CRC-32 per
//! non-empty data segment and the header's CRC-32; then the data
//! segments, one per (resolution, layer) as in the image format.
//!
//! Every field is validated on read (typed [`FormatError`]s, never a
//! panic), and sizes are checked before anything is allocated: the voxel
//! count against the reader's budget, the codeblock count against the
//! index's bits (every block takes at least one).

use wavelane_core::bpc::Mode;
use wavelane_core::dwt::volume::{check_levels, total_levels, volume_subbands};
use wavelane_core::dwt::Wavelet;

use super::geometry::{block_count, volume_blocks, VolumeBlock};
use super::io::nifti;
use super::types::SampleType;
use crate::codec::format::{
    check_field, wavelet_code, wavelet_from_code, FormatError, MAX_CODEBLOCK_HEIGHT,
    MAX_FRACTION_BITS, MAX_LAYERS,
};
use crate::codec::header::{Cursor, QuantStep, Tables};
use crate::codec::index::{se_bits, BlockIndex};

/// The first 8 bytes of a volume file (the image magic's pattern: a
/// non-ASCII byte, the name, CR LF).
pub const VOLUME_MAGIC: [u8; 8] = *b"\x89WLVOL\r\n";
/// The container version this crate writes and reads.
pub const VOLUME_VERSION: u16 = 1;
/// Largest width, height or depth.
pub const MAX_VOLUME_DIMENSION: u32 = 65_535;
/// Most decomposition levels per axis.
pub const MAX_AXIS_LEVELS: u8 = 16;
/// Bytes of the fixed part of the header (magic through the subband count).
pub const FIXED_BYTES: usize = 41;

/// Everything a decoder needs besides the codeblock index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolumeHeader {
    /// `[width, height, depth]`, each 1..=65535.
    pub dims: [u32; 3],
    /// The sample type.
    pub sample: SampleType,
    /// 5/3 (lossless) or fixed-point 9/7; the float 9/7 is not offered
    /// (its files could differ between backends).
    pub wavelet: Wavelet,
    /// Decomposition levels `[x, y, z]`.
    pub levels: [u8; 3],
    /// Codeblock rows, 1..=256 (columns: 64).
    pub codeblock_height: u16,
    /// The probability tables: a preset with its rows moved.
    pub tables: Tables,
    /// Fractional bits carried through the transform (0 for the 5/3).
    pub fraction_bits: u8,
    /// Quality layers, 1..=32.
    pub layers: u8,
    /// One quantization step per subband, `volume_subbands` order.
    pub steps: Vec<QuantStep>,
    /// The kept NIfTI-1 header (348 bytes), if any.
    pub nifti_header: Option<Vec<u8>>,
}

fn sample_code(t: SampleType) -> u8 {
    match t {
        SampleType::U8 => 0,
        SampleType::I8 => 1,
        SampleType::U16 => 2,
        SampleType::I16 => 3,
    }
}

fn sample_from_code(c: u8) -> Option<SampleType> {
    [
        SampleType::U8,
        SampleType::I8,
        SampleType::U16,
        SampleType::I16,
    ]
    .get(c as usize)
    .copied()
}

impl VolumeHeader {
    /// `[width, height, depth]` as sizes.
    pub fn dims_usize(&self) -> [usize; 3] {
        self.dims.map(|d| d as usize)
    }

    /// Levels as the transform takes them.
    pub fn levels_u32(&self) -> [u32; 3] {
        self.levels.map(|l| l as u32)
    }

    /// Resolutions: the low band and one per level.
    pub fn resolutions(&self) -> usize {
        total_levels(self.levels_u32()) as usize + 1
    }

    /// Number of voxels.
    pub fn voxels(&self) -> u64 {
        self.dims.iter().map(|&d| d as u64).product()
    }

    /// The coding mode.
    pub fn mode(&self) -> Mode {
        self.tables.mode()
    }

    /// Checks every field against the limits (docs/format.md).
    pub fn validate(&self) -> Result<(), FormatError> {
        for (field, d) in [
            ("width", self.dims[0]),
            ("height", self.dims[1]),
            ("depth", self.dims[2]),
        ] {
            check_field(
                field,
                d as u64,
                (1..=MAX_VOLUME_DIMENSION).contains(&d),
                "1..=65535",
            )?;
        }
        check_field(
            "wavelet",
            wavelet_code(self.wavelet) as u64,
            self.wavelet != Wavelet::Cdf97,
            "0 (5/3) or 2 (fixed-point 9/7)",
        )?;
        for (field, l) in [
            ("levels x", self.levels[0]),
            ("levels y", self.levels[1]),
            ("levels z", self.levels[2]),
        ] {
            check_field(field, l as u64, l <= MAX_AXIS_LEVELS, "0..=16")?;
        }
        check_field(
            "levels",
            total_levels(self.levels_u32()) as u64,
            check_levels(self.dims_usize(), self.levels_u32()).is_ok(),
            "at most ceil(log2(largest dimension)) per axis",
        )?;
        let h = self.codeblock_height;
        check_field(
            "codeblock height",
            h as u64,
            (1..=MAX_CODEBLOCK_HEIGHT).contains(&h),
            "1..=256",
        )?;
        let f = self.fraction_bits;
        check_field(
            "fractional bits",
            f as u64,
            f <= MAX_FRACTION_BITS && (f == 0 || self.wavelet != Wavelet::Cdf53),
            "0..=8, 0 with the 5/3",
        )?;
        check_field(
            "layers",
            self.layers as u64,
            (1..=MAX_LAYERS).contains(&self.layers),
            "1..=32",
        )?;
        let bands = volume_subbands(self.dims_usize(), self.levels_u32())
            .map_err(|_| FormatError::BadField {
                field: "levels",
                value: total_levels(self.levels_u32()) as u64,
                rule: "valid for the dimensions",
            })?
            .count();
        check_field(
            "subband count",
            self.steps.len() as u64,
            self.steps.len() == bands,
            "one step per subband of the decomposition",
        )?;
        if let Some(n) = &self.nifti_header {
            check_field(
                "NIfTI header length",
                n.len() as u64,
                n.len() == nifti::HEADER_LEN,
                "0 or 348",
            )?;
        }
        match &self.tables {
            Tables::Preset { .. } => Ok(()),
            _ => Err(FormatError::Unrepresentable(
                "volume files carry preset tables only".into(),
            )),
        }
    }

    /// Appends the header fields (through the NIfTI header; the index,
    /// CRCs and header CRC follow). `header_len` is the total header
    /// length to record.
    pub fn write_fields(&self, out: &mut Vec<u8>, header_len: u32) -> Result<(), FormatError> {
        self.validate()?;
        out.extend_from_slice(&VOLUME_MAGIC);
        out.extend_from_slice(&VOLUME_VERSION.to_le_bytes());
        out.extend_from_slice(&header_len.to_le_bytes());
        for d in self.dims {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.push(sample_code(self.sample));
        out.push(wavelet_code(self.wavelet));
        out.extend_from_slice(&self.levels);
        out.extend_from_slice(&self.codeblock_height.to_le_bytes());
        out.push(self.mode().passes());
        out.push(self.tables.base_preset().unwrap_or(0));
        out.push(self.tables.row_offset() as u8);
        out.push(self.fraction_bits);
        out.push(self.layers);
        out.push(0); // flags
        out.extend_from_slice(&(self.steps.len() as u16).to_le_bytes());
        for s in &self.steps {
            out.extend_from_slice(&s.0.to_le_bytes());
        }
        let nifti = self.nifti_header.as_deref().unwrap_or(&[]);
        out.extend_from_slice(&(nifti.len() as u16).to_le_bytes());
        out.extend_from_slice(nifti);
        Ok(())
    }

    /// Bytes of [`Self::write_fields`].
    pub fn fields_len(&self) -> usize {
        FIXED_BYTES + 2 * self.steps.len() + 2 + self.nifti_header.as_ref().map_or(0, |n| n.len())
    }

    /// Index bits besides the layer counts: the top bitplanes' codes.
    pub fn top_bits(tops: &[Option<u8>]) -> u64 {
        let mut prev = 0i32;
        tops.iter()
            .map(|t| {
                let code = t.map_or(0, |m| m as i32 + 1);
                let bits = se_bits(code - prev);
                prev = code;
                bits
            })
            .sum()
    }
}

/// One data segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Resolution (0 = the low band).
    pub resolution: usize,
    /// Quality layer.
    pub layer: usize,
    /// Offset in the file.
    pub offset: usize,
    /// Bytes.
    pub len: usize,
    /// Its CRC-32 (empty segments have none).
    pub crc: Option<u32>,
}

/// A parsed volume file.
#[derive(Debug, Clone)]
pub struct VolumeContainer<'a> {
    /// The header.
    pub header: VolumeHeader,
    /// Every codeblock, in file order.
    pub blocks: Vec<VolumeBlock>,
    /// The codeblock index.
    pub index: BlockIndex,
    /// Segments in file order (resolution-major, then layer).
    pub segments: Vec<Segment>,
    /// Bytes of the main header (through its CRC).
    pub header_len: usize,
    /// Bytes the header and index promise: the whole file's length.
    pub full_len: u64,
    /// The file's bytes (a prefix of them where [`Self::parse_prefix`]
    /// read a cut file).
    pub bytes: &'a [u8],
}

/// Whether `bytes` starts like a volume file.
pub fn is_volume(bytes: &[u8]) -> bool {
    bytes.starts_with(&VOLUME_MAGIC)
}

impl<'a> VolumeContainer<'a> {
    /// Parses and validates a whole volume file with a budget of
    /// `max_voxels` voxels. The segment CRCs are checked by
    /// [`Self::check_segment`], so that a decoder checks only what it reads.
    pub fn parse(bytes: &'a [u8], max_voxels: u64) -> Result<Self, FormatError> {
        Self::parse_inner(bytes, max_voxels, false)
    }

    /// Parses a file that may have lost its end: the header and index must
    /// be whole and valid, but the data may stop anywhere. The segments
    /// past the end are then reported missing by [`Self::check_segment`]
    /// (`decode --partial` and `verify`; docs/format.md, "Damaged files").
    pub fn parse_prefix(bytes: &'a [u8], max_voxels: u64) -> Result<Self, FormatError> {
        Self::parse_inner(bytes, max_voxels, true)
    }

    /// Whether every byte the index promises is there.
    pub fn is_complete(&self) -> bool {
        self.bytes.len() as u64 >= self.full_len
    }

    fn parse_inner(bytes: &'a [u8], max_voxels: u64, prefix: bool) -> Result<Self, FormatError> {
        let mut c = Cursor::new(bytes, "volume header");
        if c.array::<8>()? != VOLUME_MAGIC {
            return Err(FormatError::BadMagic);
        }
        let version = c.u16()?;
        check_field("version", version as u64, version == VOLUME_VERSION, "1")?;
        let header_len = c.u32()? as usize;
        if header_len > bytes.len() {
            return Err(FormatError::Truncated {
                what: "volume header",
                needed: header_len as u64,
                available: bytes.len() as u64,
            });
        }
        let head = &bytes[..header_len];
        check_field(
            "header length",
            header_len as u64,
            header_len >= FIXED_BYTES + 10,
            ">= 51",
        )?;
        let stored = u32::from_le_bytes(head[header_len - 4..].try_into().expect("4 bytes"));
        let computed = crc32fast::hash(&head[..header_len - 4]);
        if stored != computed {
            return Err(FormatError::HeaderCrc { stored, computed });
        }
        let mut c = Cursor::new(&head[..header_len - 4], "volume header");
        c.take(14)?;
        let dims = [c.u32()?, c.u32()?, c.u32()?];
        let [sc, wc] = c.array::<2>()?;
        let sample = sample_from_code(sc).ok_or(FormatError::BadField {
            field: "sample type",
            value: sc as u64,
            rule: "0..=3 (u8, i8, u16, i16)",
        })?;
        let wavelet = wavelet_from_code(wc).ok_or(FormatError::BadField {
            field: "wavelet",
            value: wc as u64,
            rule: "0 or 2",
        })?;
        let levels = c.array::<3>()?;
        let codeblock_height = c.u16()?;
        let [passes, preset, offset, fraction_bits, layers, flags] = c.array::<6>()?;
        check_field("flags", flags as u64, flags == 0, "0")?;
        let mode = Mode::from_passes(passes).ok_or(FormatError::BadField {
            field: "passes",
            value: passes as u64,
            rule: "2 or 3",
        })?;
        let tables = Tables::preset(preset, mode, offset as i8).ok_or(FormatError::BadField {
            field: "tables",
            value: preset as u64,
            rule: "preset 0, 3 or 4 with a row offset in -14..=14",
        })?;
        let n = c.u16()? as usize;
        let steps: Vec<QuantStep> = c
            .take(2 * n)?
            .chunks_exact(2)
            .map(|p| QuantStep(u16::from_le_bytes([p[0], p[1]])))
            .collect();
        let m = c.u16()? as usize;
        let nifti_header = match m {
            0 => None,
            _ => Some(c.take(m)?.to_vec()),
        };
        let header = VolumeHeader {
            dims,
            sample,
            wavelet,
            levels,
            codeblock_height,
            tables,
            fraction_bits,
            layers,
            steps,
            nifti_header,
        };
        header.validate()?;
        if header.voxels() > max_voxels {
            return Err(FormatError::TooLarge {
                samples: header.voxels(),
                limit: max_voxels,
            });
        }
        let index_len = c.u32()? as usize;
        let index_bytes = c.take(index_len)?;
        let (d, l) = (header.dims_usize(), header.levels_u32());
        let cbh = codeblock_height as usize;
        let count =
            block_count(d, l, cbh).map_err(|_| FormatError::Index("bad geometry".into()))?;
        if count > 8 * index_len as u64 {
            return Err(FormatError::Index(format!(
                "{count} codeblocks cannot fit an index of {index_len} bytes"
            )));
        }
        let blocks =
            volume_blocks(d, l, cbh).map_err(|_| FormatError::Index("bad geometry".into()))?;
        let geometry: Vec<_> = blocks.iter().map(|b| b.geometry).collect();
        let index = BlockIndex::parse(index_bytes, &geometry, layers as usize, false)?;
        drop(geometry);
        // Segment lengths from the index, then one CRC per non-empty one.
        let layers = layers as usize;
        let mut lens = vec![0u64; header.resolutions() * layers];
        for (i, b) in blocks.iter().enumerate() {
            for (layer, &k) in index.layer_counts(i).iter().enumerate() {
                lens[b.geometry.resolution as usize * layers + layer] += 2 * k as u64;
            }
        }
        let mut segments = Vec::with_capacity(lens.len());
        let mut pos = header_len as u64;
        for (k, &len) in lens.iter().enumerate() {
            let crc = match len {
                0 => None,
                _ => Some(c.u32()?),
            };
            segments.push(Segment {
                resolution: k / layers,
                layer: k % layers,
                offset: pos as usize,
                len: len as usize,
                crc,
            });
            pos += len;
        }
        if c.pos != header_len - 4 {
            return Err(FormatError::BadField {
                field: "header length",
                value: header_len as u64,
                rule: "must end right after the segment CRCs and the header CRC",
            });
        }
        if pos > bytes.len() as u64 && !prefix {
            return Err(FormatError::Truncated {
                what: "volume data",
                needed: pos,
                available: bytes.len() as u64,
            });
        }
        if pos < bytes.len() as u64 {
            return Err(FormatError::TrailingData(bytes.len() as u64 - pos));
        }
        Ok(VolumeContainer {
            header,
            blocks,
            index,
            segments,
            header_len,
            full_len: pos,
            bytes,
        })
    }

    /// Checks that segment `k` is there (`Truncated` where a cut file
    /// lost some of it) and that its CRC-32 matches (`SegmentCrc`).
    pub fn check_segment(&self, k: usize) -> Result<(), FormatError> {
        let s = self.segments[k];
        let end = (s.offset + s.len) as u64;
        // An empty segment holds nothing to lose, wherever a cut falls.
        if s.len > 0 && end > self.bytes.len() as u64 {
            return Err(FormatError::Truncated {
                what: "volume data segment",
                needed: end,
                available: self.bytes.len() as u64,
            });
        }
        if let Some(stored) = s.crc {
            let computed = crc32fast::hash(&self.bytes[s.offset..s.offset + s.len]);
            if computed != stored {
                return Err(FormatError::SegmentCrc {
                    resolution: s.resolution,
                    layer: s.layer,
                    stored,
                    computed,
                });
            }
        }
        Ok(())
    }

    /// The first and last codeblock (file order) with codewords in segment
    /// `k`: a segment CRC cannot tell which of them holds a changed byte.
    pub fn segment_codeblocks(&self, k: usize) -> (usize, usize) {
        let s = self.segments[k];
        self.index.segment_codeblocks(
            |i| self.blocks[i].geometry.resolution as usize,
            s.resolution,
            s.layer,
        )
    }

    /// Where each block's codewords of each layer start: byte offsets at
    /// `i * layers + l`.
    pub fn block_offsets(&self) -> Vec<usize> {
        let layers = self.header.layers as usize;
        let mut next: Vec<usize> = self.segments.iter().map(|s| s.offset).collect();
        let mut out = vec![0usize; self.blocks.len() * layers];
        for (i, b) in self.blocks.iter().enumerate() {
            for l in 0..layers {
                let seg = b.geometry.resolution as usize * layers + l;
                out[i * layers + l] = next[seg];
                next[seg] += 2 * self.index.counts[i * layers + l] as usize;
            }
        }
        out
    }
}
