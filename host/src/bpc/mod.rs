//! BPC-PaCo on the host: many codeblocks at once on all CPU cores
//! ([`cpu`], rayon over [`wavelane_core::bpc`]) or on a Vulkan device
//! (`gpu`, with the `gpu` feature; `shaders/bpc/`), with identical bytes; the raw codeblock
//! file formats of `wavelane bpc` ([`formats`]); probability tables as JSON
//! ([`lut_json`]) and the table trainer ([`train`]).
//!
//! A [`CodeblockBatch`] holds the coefficients of many codeblocks in one
//! `i32` array plus one [`BlockDesc`] per codeblock (where it lies, its size
//! and table group); an [`EncodedBatch`] holds every codeblock's `M` and its
//! codewords packed back to back, with offsets.

pub mod cpu;
pub mod cuts;
pub mod formats;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod lut_json;
pub mod train;

use wavelane_core::bpc::{
    Codeblock, CodeblockMut, DecodeError, EncodeError, GeometryError, GROUPS,
};

#[cfg(feature = "gpu")]
use crate::backend::GpuError;

pub use formats::{RefBlock, RefFile};

/// Errors of the host BPC-PaCo drivers.
#[derive(Debug, thiserror::Error)]
pub enum BpcError {
    /// A codeblock descriptor does not fit the coefficient array or the coder limits.
    #[error("codeblock {block}: {source}")]
    Geometry {
        /// Index of the codeblock.
        block: usize,
        /// What is wrong.
        #[source]
        source: GeometryError,
    },
    /// A descriptor's group is not a table group.
    #[error("codeblock {block}: table group {group} is not below {GROUPS}")]
    Group {
        /// Index of the codeblock.
        block: usize,
        /// The group.
        group: usize,
    },
    /// Encoding a codeblock failed.
    #[error("encoding codeblock {block}: {source}")]
    Encode {
        /// Index of the codeblock.
        block: usize,
        /// Core error.
        #[source]
        source: EncodeError,
    },
    /// Decoding a codeblock failed.
    #[error("decoding codeblock {block}: {source}")]
    Decode {
        /// Index of the codeblock.
        block: usize,
        /// Core error.
        #[source]
        source: DecodeError,
    },
    /// The batches given to a decoder do not match.
    #[error("{0}")]
    Mismatch(String),
    /// A file is malformed.
    #[error("{0}")]
    Format(String),
    /// A probability-table file is malformed.
    #[error("probability tables: {0}")]
    Tables(String),
    /// The GPU failed or reported a problem.
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// Where a codeblock lies in a batch's coefficient array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockDesc {
    /// Index of its top-left coefficient.
    pub offset: usize,
    /// Distance between its rows.
    pub stride: usize,
    /// Columns (1..=64).
    pub width: usize,
    /// Rows (1..=256).
    pub height: usize,
    /// Probability-table group ([`wavelane_core::bpc::group_index`]).
    pub group: usize,
}

/// Coefficients of many codeblocks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodeblockBatch {
    /// All coefficients; codeblocks may share the array (e.g. one subband
    /// image) or lie back to back.
    pub coefficients: Vec<i32>,
    /// One descriptor per codeblock.
    pub blocks: Vec<BlockDesc>,
}

impl CodeblockBatch {
    /// The codeblocks of a `BPCREF01` file, back to back (stride 64).
    pub fn from_ref(file: &RefFile) -> Self {
        let mut coefficients = Vec::with_capacity(file.blocks.len() * formats::REF_BLOCK_LEN);
        let mut blocks = Vec::with_capacity(file.blocks.len());
        for b in &file.blocks {
            blocks.push(BlockDesc {
                offset: coefficients.len(),
                stride: formats::REF_BLOCK_SIDE,
                width: formats::REF_BLOCK_SIDE,
                height: formats::REF_BLOCK_SIDE,
                group: b.group(),
            });
            coefficients.extend(b.coefficients.iter().map(|&c| c as i32));
        }
        CodeblockBatch {
            coefficients,
            blocks,
        }
    }

    /// One codeblock of `width`-sample rows stored densely (offset 0,
    /// stride `width`), as many rows as `coefficients` holds: the batch the
    /// unit tests of the trainer and the table fit code.
    #[cfg(test)]
    pub(crate) fn one(coefficients: Vec<i32>, width: usize, group: usize) -> Self {
        let height = coefficients.len() / width;
        CodeblockBatch {
            coefficients,
            blocks: vec![BlockDesc {
                offset: 0,
                stride: width,
                width,
                height,
                group,
            }],
        }
    }

    /// Number of codeblocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// True when there are no codeblocks.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Coefficients coded (the sum of the codeblock areas).
    pub fn coefficient_count(&self) -> usize {
        self.blocks.iter().map(|b| b.width * b.height).sum()
    }

    /// Codeblock `i` as a core view, checked.
    pub fn block(&self, i: usize) -> Result<Codeblock<'_>, BpcError> {
        let d = self.blocks[i];
        if d.group >= GROUPS {
            return Err(BpcError::Group {
                block: i,
                group: d.group,
            });
        }
        let data = self
            .coefficients
            .get(d.offset..)
            .ok_or(BpcError::Geometry {
                block: i,
                source: GeometryError::SliceTooShort,
            })?;
        Codeblock::new(data, d.stride, d.width, d.height)
            .map_err(|source| BpcError::Geometry { block: i, source })
    }

    /// Checks every descriptor.
    pub fn validate(&self) -> Result<(), BpcError> {
        (0..self.len()).try_for_each(|i| self.block(i).map(|_| ()))
    }

    /// A writable view of codeblock `i` of `out` laid out like this batch.
    pub(crate) fn block_mut<'a>(
        &self,
        i: usize,
        out: &'a mut [i32],
    ) -> Result<CodeblockMut<'a>, BpcError> {
        let d = self.blocks[i];
        let data = out.get_mut(d.offset..).ok_or(BpcError::Geometry {
            block: i,
            source: GeometryError::SliceTooShort,
        })?;
        CodeblockMut::new(data, d.stride, d.width, d.height)
            .map_err(|source| BpcError::Geometry { block: i, source })
    }
}

/// Encoded codeblocks: `M` of each and their codewords back to back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncodedBatch {
    /// `Some(M)` per codeblock, `None` for an empty one.
    pub tops: Vec<Option<u8>>,
    /// Codewords of codeblock `i` are `codewords[offsets[i]..offsets[i + 1]]`.
    pub offsets: Vec<usize>,
    /// All codewords.
    pub codewords: Vec<u16>,
}

impl EncodedBatch {
    /// Number of codeblocks.
    pub fn len(&self) -> usize {
        self.tops.len()
    }

    /// True when there are no codeblocks.
    pub fn is_empty(&self) -> bool {
        self.tops.is_empty()
    }

    /// `M` and codewords of codeblock `i`.
    pub fn block(&self, i: usize) -> (Option<u8>, &[u16]) {
        (
            self.tops[i],
            &self.codewords[self.offsets[i]..self.offsets[i + 1]],
        )
    }

    /// Checks that the offsets describe the codewords.
    pub fn validate(&self) -> Result<(), BpcError> {
        let ok = self.offsets.len() == self.tops.len() + 1
            && self.offsets.first() == Some(&0)
            && self.offsets.last() == Some(&self.codewords.len())
            && self.offsets.windows(2).all(|w| w[0] <= w[1]);
        if ok {
            Ok(())
        } else {
            Err(BpcError::Mismatch(
                "encoded batch offsets do not describe its codewords".into(),
            ))
        }
    }

    /// A 64-bit FNV-1a digest of `M` and the codewords of every codeblock,
    /// for snapshots of large encodings.
    pub fn digest(&self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut eat = |b: u8| {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        };
        for i in 0..self.len() {
            let (top, words) = self.block(i);
            eat(top.unwrap_or(formats::EMPTY_TOP));
            (words.len() as u32)
                .to_le_bytes()
                .into_iter()
                .for_each(&mut eat);
            words
                .iter()
                .flat_map(|w| w.to_be_bytes())
                .for_each(&mut eat);
        }
        h
    }
}
