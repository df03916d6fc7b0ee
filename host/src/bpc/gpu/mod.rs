//! BPC-PaCo on a Vulkan device: many codeblocks per dispatch, one team of
//! 32 lanes (a workgroup) per codeblock, byte-identical to the core coders.
//!
//! Encoding is two submissions:
//! 1. `bpc_measure` finds `M` and a codeword capacity per codeblock (core
//!    [`codeword_bound`](wavelane_core::bpc::codeword_bound), so the encoder
//!    can never overflow), and the scan turns capacities into scratch offsets;
//!    `bpc_order` sorts the codeblocks by decreasing `M` (the coding order:
//!    heaviest first, so that no heavy codeblock starts last). The host
//!    reads back the total to size the scratch buffer.
//! 2. `bpc_encode` codes every codeblock into its scratch region, the scan
//!    turns codeword counts into stream offsets, and `bpc_pack` gathers the
//!    codewords into one packed stream.
//!
//! With the rate-control records ([`records`]: [`encode_with_records`],
//! [`encode_with_cuts`]) the encode dispatch is the records build,
//! `bpc_encode_records`, which also writes every pass's record and the
//! decrease at every codeword cut, and `bpc_pack_cuts` packs the cuts
//! beside the codewords ([`encode`]'s own build is untouched).
//!
//! Decoding is one dispatch of `bpc_decode` over the packed stream.
//!
//! The coefficients need not come from the host: the encoder reads a
//! `Source`, a host batch it uploads or a device buffer with descriptors
//! into it, and `decode_into` writes into a device buffer the caller
//! keeps. The codec's GPU route uses both on its resident index planes
//! (`codec::stages::resident`), so nothing plane-sized crosses the bus
//! between quantization and the coder, or between the decoder and
//! dequantization.

use wavelane_core::bpc::{
    DecodeError, DecodeLimits, Decoded, Mode, ProbabilityTables, GROUPS, TABLE_BITPLANES,
};

pub mod counts;
mod encode;
pub mod records;

pub(crate) use counts::count_on_device;
pub use counts::count_selected;
pub use encode::encode;
pub(crate) use encode::{
    encode_keeping, encode_on_device, gather_prefixes, DeviceRecords, DeviceWords, RecordsAsked,
};
pub(crate) use records::encode_with;
pub use records::{encode_with_cuts, encode_with_records, records_fit, records_unsupported};

use vulkano::buffer::Subbuffer;
use wavelane_core::bpc::{GeometryError, MAX_HEIGHT};

use super::{BlockDesc, BpcError, CodeblockBatch, EncodedBatch};
use crate::backend::gpu::{Dispatch, Gpu, GpuError, Timing};
use crate::shaders::{self, Shader};

/// Largest workgroup count the BPC shaders are dispatched with; more
/// codeblocks are looped over inside the shaders.
const MAX_GROUPS: u32 = 65535;
/// Buckets of the encoder's codeblock order (`shaders/bpc/order.glsl`).
const ORDER_BUCKETS: u64 = 29;
/// Invocations per workgroup of `bpc_order.comp`.
const ORDER_WORKGROUP: u32 = 256;
/// Codeword count marking an empty codeblock in the shaders.
const EMPTY: u32 = 0xFF;

/// Flattens tables for the shaders: per group and bitplane 27 values
/// (`sig[9]`, `sign[4]`, `ref`, `cp_sig[9]`, `cp_sign[4]`), as `shaders/bpc/bpc.glsl`.
pub fn flatten_tables(tables: &ProbabilityTables) -> Vec<u32> {
    let mut out = Vec::with_capacity(GROUPS * TABLE_BITPLANES * 27);
    for g in tables.groups() {
        for j in 0..TABLE_BITPLANES {
            out.extend(g.sig[j].iter().map(|&p| p as u32));
            out.extend(g.sign[j].iter().map(|&p| p as u32));
            out.push(g.refine[j] as u32);
            out.extend(g.cp_sig[j].iter().map(|&p| p as u32));
            out.extend(g.cp_sign[j].iter().map(|&p| p as u32));
        }
    }
    out
}

/// Where the coder reads the codeblocks' coefficients: a host batch, which
/// it uploads, or a buffer already on the device (the codec's index planes,
/// `codec::planes::DevicePlanes`), which it binds as it is, with
/// descriptors (offset, stride, size) into it.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    /// Coefficients on the host.
    Host(&'a CodeblockBatch),
    /// Coefficients in a device buffer; each descriptor's offset and
    /// stride count elements of `coefficients`.
    Device {
        /// Every codeblock's coefficients.
        coefficients: &'a Subbuffer<[i32]>,
        /// One descriptor per codeblock.
        blocks: &'a [BlockDesc],
    },
}

impl Source<'_> {
    /// The descriptors.
    pub fn blocks(&self) -> &[BlockDesc] {
        match self {
            Source::Host(batch) => &batch.blocks,
            Source::Device { blocks, .. } => blocks,
        }
    }

    /// Codeblocks.
    pub fn len(&self) -> usize {
        self.blocks().len()
    }

    /// The coefficients in a device buffer: uploaded from the host batch,
    /// or the device buffer itself.
    fn coefficients_on(&self, gpu: &Gpu) -> Result<Subbuffer<[i32]>, GpuError> {
        match self {
            Source::Host(batch) => gpu.upload(&batch.coefficients),
            Source::Device { coefficients, .. } => Ok((*coefficients).clone()),
        }
    }

    /// Coefficients the descriptors index into.
    fn coefficients_len(&self) -> u64 {
        match self {
            Source::Host(batch) => batch.coefficients.len() as u64,
            Source::Device { coefficients, .. } => coefficients.len(),
        }
    }

    /// The shaders' descriptors, each checked against the coefficients as
    /// [`CodeblockBatch::validate`] checks a host batch (the shaders check
    /// them again and refuse a block outside their buffer).
    fn descriptors(&self) -> Result<Vec<u32>, BpcError> {
        match self {
            Source::Host(batch) => batch.validate()?,
            Source::Device { blocks, .. } => {
                let len = self.coefficients_len();
                for (block, d) in blocks.iter().enumerate() {
                    check_desc(block, d, len)?;
                }
            }
        }
        pack_descriptors(self.blocks())
    }
}

/// [`CodeblockBatch::validate`]'s checks of one descriptor over `len`
/// coefficients that are not on the host.
fn check_desc(block: usize, d: &BlockDesc, len: u64) -> Result<(), BpcError> {
    if d.group >= GROUPS {
        return Err(BpcError::Group {
            block,
            group: d.group,
        });
    }
    let geometry = |source| BpcError::Geometry { block, source };
    if !(1..=64).contains(&d.width) || !(1..=MAX_HEIGHT).contains(&d.height) || d.stride < d.width {
        return Err(geometry(GeometryError::BadGeometry));
    }
    let end = (d.height as u64 - 1)
        .checked_mul(d.stride as u64)
        .and_then(|v| v.checked_add(d.offset as u64 + d.width as u64));
    match end {
        Some(end) if end <= len => Ok(()),
        _ => Err(geometry(GeometryError::SliceTooShort)),
    }
}

/// Checked descriptors as the shaders read them (uvec4 each).
fn pack_descriptors(blocks: &[BlockDesc]) -> Result<Vec<u32>, BpcError> {
    let fits = |v: usize, what: &str| {
        u32::try_from(v)
            .map_err(|_| BpcError::Gpu(GpuError::Limit(format!("{what} {v} does not fit 32 bits"))))
    };
    let mut out = Vec::with_capacity(blocks.len() * 4);
    for d in blocks {
        out.push(fits(d.offset, "coefficient offset")?);
        out.push(fits(d.stride, "stride")?);
        out.push(d.width as u32 | (d.height as u32) << 8 | (d.group as u32) << 20);
        out.push(0);
    }
    Ok(out)
}

fn check_range(gpu: &Gpu, what: &str, bytes: u64) -> Result<(), BpcError> {
    let max = gpu.info().max_storage_buffer_range as u64;
    if bytes > max {
        return Err(BpcError::Gpu(GpuError::Limit(format!(
            "{what} needs {bytes} bytes; the device binds at most {max} per buffer"
        ))));
    }
    Ok(())
}

/// Codeblock rows the `bpc_encode64` / `bpc_decode64` shaders hold.
const SHORT_ROWS: usize = 64;

/// The builds of one coding shader: for codeblocks of up to 256 rows, up to
/// 64 rows, and up to 64 rows coded in 2 passes.
struct Builds {
    tall: &'static Shader,
    short: &'static Shader,
    short_two_pass: &'static Shader,
}

const ENCODER: Builds = Builds {
    tall: &shaders::BPC_ENCODE,
    short: &shaders::BPC_ENCODE64,
    short_two_pass: &shaders::BPC_ENCODE64_2PASS,
};

const DECODER: Builds = Builds {
    tall: &shaders::BPC_DECODE,
    short: &shaders::BPC_DECODE64,
    short_two_pass: &shaders::BPC_DECODE64_2PASS,
};

/// The build of `builds` for `batch` and `tables`. The 64-row builds' state
/// maps take a quarter of the shared memory, so an SM holds more teams, and
/// a 2-pass build keeps no pending map and runs no cleanup pass; both are
/// faster (figures in docs/history/bpc-paco.md). Every build gives the same bytes; the shaders
/// themselves refuse a codeblock taller than theirs, and the 2-pass builds
/// are only ever given 2-pass tables (here).
fn build_for(builds: &Builds, blocks: &[BlockDesc], tables: &ProbabilityTables) -> &'static Shader {
    if !blocks.iter().all(|d| d.height <= SHORT_ROWS) {
        builds.tall
    } else if tables.mode() == Mode::TwoPass {
        builds.short_two_pass
    } else {
        builds.short
    }
}

fn groups_for(n: usize) -> u32 {
    (n as u32).clamp(1, MAX_GROUPS)
}

/// The GPU time of an encoding or decoding.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GpuTiming {
    /// Every dispatch of every submission, in order.
    pub dispatches: Timing,
}

impl GpuTiming {
    fn add(&mut self, t: Timing) {
        self.dispatches.dispatch_ns.extend(t.dispatch_ns);
    }

    /// Total GPU nanoseconds.
    pub fn total_ns(&self) -> f64 {
        self.dispatches.total_ns()
    }
}

fn three_pass(tables: &ProbabilityTables) -> u32 {
    (tables.mode() == Mode::ThreePass) as u32
}

/// Decodes `encoded` (laid out like `like`) on `gpu`; the same result as
/// [`super::cpu::decode`].
pub fn decode(
    gpu: &Gpu,
    like: &CodeblockBatch,
    encoded: &EncodedBatch,
    tables: &ProbabilityTables,
    limits: DecodeLimits,
) -> Result<(Vec<i32>, Vec<Decoded>, GpuTiming), BpcError> {
    encoded.validate()?;
    check_count(encoded, like.len())?;
    like.validate()?;
    if like.is_empty() {
        return Ok((
            vec![0; like.coefficients.len()],
            Vec::new(),
            GpuTiming::default(),
        ));
    }
    check_range(gpu, "the coefficients", like.coefficients.len() as u64 * 4)?;
    let out = gpu.zeroed::<i32>(like.coefficients.len() as u64)?;
    let (decoded, timing) = decode_into(gpu, &out, &like.blocks, encoded, tables, limits)?;
    let mut coefficients = gpu.download(&out)?;
    coefficients.truncate(like.coefficients.len());
    Ok((coefficients, decoded, timing))
}

/// The codewords as the decoders read them: two a 32-bit word, the first
/// in the low half. On a little-endian host that is the codewords' own
/// bytes, uploaded as they lie (a copy into a word array would be one more
/// pass over the stream on one thread); elsewhere the words are made.
fn upload_codewords(gpu: &Gpu, codewords: &[u16]) -> Result<Subbuffer<[u32]>, GpuError> {
    // At least one word: a device buffer is never empty.
    let words = codewords.len().div_ceil(2).max(1) as u64;
    if cfg!(target_endian = "little") {
        gpu.upload_bytes(bytemuck::cast_slice(codewords), words)
    } else {
        let packed: Vec<u32> = codewords
            .chunks(2)
            .map(|p| p[0] as u32 | (*p.get(1).unwrap_or(&0) as u32) << 16)
            .collect();
        gpu.upload(&packed)
    }
}

fn check_count(encoded: &EncodedBatch, blocks: usize) -> Result<(), BpcError> {
    if encoded.len() != blocks {
        return Err(BpcError::Mismatch(format!(
            "{} encoded codeblocks for {blocks} codeblock descriptors",
            encoded.len(),
        )));
    }
    Ok(())
}

/// Decodes `encoded` on `gpu` into the device buffer `out`, codeblock `i`
/// into the region `blocks[i]` describes (offset and stride in elements
/// of `out`), and leaves the coefficients there: the codec's decoder
/// dequantizes them in place (`codec::stages::device`). Elements of `out`
/// outside every block are not written. Returns each block's summary, as
/// [`decode`].
pub(crate) fn decode_into(
    gpu: &Gpu,
    out: &Subbuffer<[i32]>,
    blocks: &[BlockDesc],
    encoded: &EncodedBatch,
    tables: &ProbabilityTables,
    limits: DecodeLimits,
) -> Result<(Vec<Decoded>, GpuTiming), BpcError> {
    encoded.validate()?;
    check_count(encoded, blocks.len())?;
    let desc = Source::Device {
        coefficients: out,
        blocks,
    }
    .descriptors()?;
    let n = blocks.len();
    if n == 0 {
        return Ok((Vec::new(), GpuTiming::default()));
    }
    check_range(gpu, "the coefficients", out.size())?;
    check_range(gpu, "the codewords", encoded.codewords.len() as u64 * 2)?;
    u32::try_from(encoded.codewords.len())
        .map_err(|_| BpcError::Gpu(GpuError::Limit("more than 2^32 codewords".into())))?;
    let mut streams = Vec::with_capacity(n * 4);
    for i in 0..n {
        let (top, words) = encoded.block(i);
        let available = words.len().min(limits.max_codewords);
        streams.extend([
            encoded.offsets[i] as u32,
            available as u32,
            top.map_or(EMPTY, |m| m as u32),
            limits.max_passes.min(u32::MAX as usize) as u32,
        ]);
    }
    let packed = upload_codewords(gpu, &encoded.codewords)?;
    let block_buf = gpu.upload(&desc)?;
    let table_buf = gpu.upload(&flatten_tables(tables))?;
    let stream_buf = gpu.upload(&streams)?;
    let summary = gpu.uninit::<u32>(4 * n as u64)?;
    let t =
        gpu.run(&[
            Dispatch::new(build_for(&DECODER, blocks, tables), [groups_for(n), 1, 1])
                .zeroing(&summary)
                .buffer(&packed)
                .buffer(&block_buf)
                .buffer(&table_buf)
                .buffer(&stream_buf)
                .buffer(out)
                .buffer(&summary)
                .push(&[n as u32, three_pass(tables)]),
        ])?;
    let summary = gpu.download(&summary)?;
    let mut decoded = Vec::with_capacity(n);
    for (block, s) in summary.chunks_exact(4).enumerate() {
        let err = |source| BpcError::Decode { block, source };
        let given = streams[4 * block + 1] as usize;
        let d = Decoded {
            codewords_used: s[0] as usize,
            passes_completed: s[1] as usize,
            complete: s[2] == 1,
        };
        match s[2] {
            0 | 1 => decoded.push(d),
            2 => {
                return Err(err(DecodeError::BadTopBitplane(
                    streams[4 * block + 2] as u8,
                )))
            }
            3 => {
                return Err(err(DecodeError::TrailingCodewords {
                    used: d.codewords_used,
                    given,
                }))
            }
            other => {
                return Err(BpcError::Mismatch(format!(
                    "GPU decoder outcome {other} for codeblock {block}"
                )))
            }
        }
    }
    let mut timing = GpuTiming::default();
    timing.add(t);
    Ok((decoded, timing))
}
