//! VLE: canonical length-limited Huffman coding of any byte stream, on all
//! CPU cores or on the GPU (the GVLE design, docs/vle.md), in the `.wlv`
//! container of [`format`](mod@format).
//!
//! ```
//! use wavelane::backend::Backend;
//! use wavelane::vle::{compress, decompress, VleOptions};
//!
//! let text = b"it was the best of times, it was the worst of times".repeat(100);
//! let packed = compress(&text, &Backend::Cpu, &VleOptions::default()).unwrap();
//! assert!(packed.len() < text.len());
//! assert_eq!(decompress(&packed, &Backend::Cpu).unwrap(), text);
//! ```
//!
//! Both backends produce the same bytes: the CPU path runs
//! [`wavelane_core::vle`] per chunk group ([`cpu`]); the GPU path runs the
//! histogram, the encoder and the decoder as compute shaders (`gpu`), which
//! mirror the core's lane-parallel model ([`wavelane_core::vle::lanes`]).
//! The code table is built on the host from the (GPU or CPU) histogram: it
//! is 256 symbols of package-merge, microseconds of work.

pub mod cpu;
pub mod format;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod partial;
pub mod sample;

use wavelane_core::vle::{self as core_vle, CodeTable, VleError};

use crate::backend::Backend;
#[cfg(feature = "gpu")]
use crate::backend::GpuError;
pub use format::VleFile;
#[cfg(feature = "gpu")]
pub use gpu::{GpuTimes, GpuVle, ScanKind, CPU_DEVICE_BATCH_BLOCKS, PAIR_MAX_LEN};

/// Default symbols per chunk: 4096 keeps the chunk index at 0.1% of the
/// input and gives the GPU decoder one invocation per 4 KiB.
pub const DEFAULT_CHUNK_SYMBOLS: usize = 4096;

/// Encoder settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct VleOptions {
    /// Longest codeword, 1..=24 (codes for 256 symbols need at least 8).
    pub max_len: u32,
    /// Symbols per independently decodable chunk (a multiple of 32).
    pub chunk_symbols: usize,
}

impl Default for VleOptions {
    fn default() -> Self {
        VleOptions {
            max_len: core_vle::DEFAULT_MAX_LEN,
            chunk_symbols: DEFAULT_CHUNK_SYMBOLS,
        }
    }
}

/// Errors of VLE compression and decompression.
#[derive(Debug, thiserror::Error)]
pub enum VleCodecError {
    /// The input does not start with the VLE magic.
    #[error("not a wavelane VLE file (bad magic)")]
    NotVle,
    /// A format version this build does not read.
    #[error("unsupported VLE format version {0}")]
    UnsupportedVersion(u8),
    /// The file ends inside the named part.
    #[error("VLE file truncated in the {0}")]
    Truncated(&'static str),
    /// Fields contradict each other.
    #[error("malformed VLE file: {0}")]
    Malformed(&'static str),
    /// The header, code table, chunk index or chunk CRCs of a version 2
    /// file do not match their CRC: nothing in the file can be located.
    #[error("the VLE file's header or chunk index is damaged (index CRC mismatch)")]
    IndexCrc,
    /// Chunks whose coded bits do not match their CRC (version 2 files).
    #[error("damaged chunks (CRC mismatch): {}", list_chunks(.0))]
    DamagedChunks(Vec<usize>),
    /// `--partial` on a version 1 file, which has no chunk CRCs.
    #[error(
        "a version 1 VLE file has no chunk CRCs, so no part of a damaged one can be vouched for"
    )]
    NoChunkCrcs,
    /// A chunk length outside what its symbol count allows.
    #[error("chunk index entry {chunk} is impossible for the code table")]
    BadChunkIndex {
        /// The chunk.
        chunk: usize,
    },
    /// Code construction, table or option errors from the core.
    #[error(transparent)]
    Core(#[from] VleError),
    /// A chunk's data does not decode.
    #[error("chunk {chunk} does not decode")]
    Chunk {
        /// The chunk.
        chunk: usize,
        /// Why.
        #[source]
        source: VleError,
    },
    /// The GPU decoder rejected a chunk.
    #[cfg(feature = "gpu")]
    #[error("chunk {chunk} does not decode on the GPU ({what})")]
    GpuChunk {
        /// The lowest failing chunk.
        chunk: usize,
        /// What the shader reported.
        what: &'static str,
    },
    /// The GPU encoder reported a failure.
    #[cfg(feature = "gpu")]
    #[error("GPU encoder failed: {0}")]
    GpuEncode(String),
    /// The decoded bytes do not have the checksum the file records.
    #[error(
        "checksum mismatch: the file records {expected:#010x}, the decoded data has {actual:#010x}"
    )]
    Checksum {
        /// CRC-32 in the file.
        expected: u32,
        /// CRC-32 of the decoded bytes.
        actual: u32,
    },
    /// The Vulkan backend failed.
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Gpu(#[from] GpuError),
}

/// An encoded stream and what describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded {
    /// The code used.
    pub table: CodeTable,
    /// Symbols per chunk.
    pub chunk_symbols: usize,
    /// Bit length of each chunk.
    pub chunk_bits: Vec<u32>,
    /// Total bits.
    pub data_bits: u64,
    /// The stream, `data_bits.div_ceil(8)` bytes, zero-padded.
    pub data: Vec<u8>,
}

impl Encoded {
    /// Bit offset of each chunk in the stream.
    pub fn chunk_offsets(&self) -> Vec<u64> {
        format::chunk_offsets(&self.chunk_bits)
    }

    /// The file for this stream of an input of `original_len` bytes with checksum `crc32`.
    pub fn file(&self, original_len: u64, crc32: u32) -> VleFile<'_> {
        VleFile {
            version: format::VERSION,
            original_len,
            chunk_symbols: self.chunk_symbols as u32,
            crc32,
            data_bits: self.data_bits,
            table: self.table.clone(),
            chunk_bits: self.chunk_bits.clone(),
            chunk_crcs: format::chunk_crcs(&self.data, &self.chunk_bits),
            data: &self.data,
        }
    }
}

fn check_options(opts: &VleOptions) -> Result<(), VleCodecError> {
    if !(1..=core_vle::MAX_CODE_LEN).contains(&opts.max_len) {
        return Err(VleError::MaxLenOutOfRange(opts.max_len).into());
    }
    core_vle::check_chunk_symbols(opts.chunk_symbols)?;
    Ok(())
}

/// Histogram, code construction and encoding of `data` on `backend`; also
/// returns the CRC-32 of `data` (computed on the CPU alongside).
pub fn encode(
    data: &[u8],
    backend: &Backend,
    opts: &VleOptions,
) -> Result<(Encoded, u32), VleCodecError> {
    check_options(opts)?;
    let (crc, encoded) = rayon::join(
        || cpu::crc32(data),
        || match backend {
            Backend::Cpu => {
                let table = CodeTable::from_histogram(&cpu::histogram(data), opts.max_len)?;
                cpu::encode(data, &table, opts.chunk_symbols)
            }
            #[cfg(feature = "gpu")]
            Backend::Gpu(g) => GpuVle::new(g.clone())
                .compress(data, opts)
                .map(|(enc, _)| enc),
        },
    );
    Ok((encoded?, crc))
}

/// Compresses `data` into a `.wlv` file.
pub fn compress(
    data: &[u8],
    backend: &Backend,
    opts: &VleOptions,
) -> Result<Vec<u8>, VleCodecError> {
    let (encoded, crc) = encode(data, backend, opts)?;
    Ok(encoded.file(data.len() as u64, crc).to_bytes())
}

/// Decodes a parsed file on `backend` (without the checksum test).
pub fn decode(file: &VleFile<'_>, backend: &Backend) -> Result<Vec<u8>, VleCodecError> {
    match backend {
        Backend::Cpu => {
            let mut out = vec![0u8; file.original_len as usize];
            cpu::decode(
                &file.table,
                file.data,
                file.data_bits,
                &file.chunk_offsets(),
                file.chunk_symbols as usize,
                &mut out,
            )?;
            Ok(out)
        }
        #[cfg(feature = "gpu")]
        Backend::Gpu(g) => GpuVle::new(g.clone()).decode(file).map(|(out, _)| out),
    }
}

/// Decompresses a `.wlv` file, checking the CRC-32 of the result (and,
/// in a version 2 file, each chunk's CRC first, so that damage is named by
/// chunk rather than found as a wrong checksum or an undecodable code).
pub fn decompress(file: &[u8], backend: &Backend) -> Result<Vec<u8>, VleCodecError> {
    let parsed = VleFile::parse(file)?;
    let damaged = partial::damaged_chunks(&parsed);
    if !damaged.is_empty() {
        return Err(VleCodecError::DamagedChunks(damaged));
    }
    let out = decode(&parsed, backend)?;
    let actual = cpu::crc32(&out);
    if actual != parsed.crc32 {
        return Err(VleCodecError::Checksum {
            expected: parsed.crc32,
            actual,
        });
    }
    Ok(out)
}

/// `0, 3, 4` for up to 8 chunks, then the first 8 and a count.
fn list_chunks(chunks: &[usize]) -> String {
    let mut s: Vec<String> = chunks.iter().take(8).map(|c| c.to_string()).collect();
    if chunks.len() > 8 {
        s.push(format!("and {} more", chunks.len() - 8));
    }
    s.join(", ")
}
