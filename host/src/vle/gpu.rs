//! VLE on a Vulkan device: histogram (`vle_histogram`, `vle_histogram_reduce`), GVLE encoder
//! (`vle_encode` with 64-bit atomics, `vle_encode32` without) and a
//! per-chunk decoder (`vle_decode.comp`).
//!
//! Inputs larger than the device's storage-buffer limit are cut into
//! batches of whole chunks. A batch's stream starts at bit `base_bit`
//! (0..32) of its first output word, the position of its first bit in the
//! whole stream modulo 32; the host ORs the word it shares with the previous
//! batch. The chunk index comes from the encoder itself: the invocation that
//! owns a chunk's first symbol writes the chunk's bit position.

use std::sync::Arc;

use vulkano::buffer::Subbuffer;
use wavelane_core::vle::{
    chunk_count, lanes::BLOCK_SYMBOLS, lookback::SEGMENT_BLOCKS, CodeTable, DecodeTable, SYMBOLS,
};

use super::{Encoded, VleCodecError, VleFile, VleOptions};
use crate::backend::gpu::{Dispatch, Gpu, Timing};
use crate::shaders;

/// Persistent encode workgroups at most: 8 workgroups of 128 per SM of an
/// H100/H200 (132 SMs), a little more than an SM holds (7, by registers):
/// more workgroups ran no faster, fewer ran slower (docs/history/vle.md).
pub const MAX_ENCODE_WORKGROUPS: u32 = 1056;
/// Lookup bits of the GPU decoder (its shared table holds 2^11 entries).
pub const GPU_LUT_BITS: u32 = 11;
/// llvmpipe (lavapipe) ends every loop of a shader invocation once the
/// invocation has run 65535 loop iterations in all. On such CPU devices the
/// encoder's waits get this budget (see `shaders/vle/encode.glsl`)
/// and each workgroup encodes one block, so the budget goes to waiting.
pub const CPU_DEVICE_LOOP_BUDGET: u32 = 60_000;
/// `constant_id` of the encoder's `VLE_LOOP_BUDGET` specialization constant
/// (vle/encode.glsl): 1 where the waits spend a loop budget (CPU
/// devices), 0 where each block's waits are bounded on their own (GPUs).
const ENCODE_LOOP_BUDGET_ID: u32 = 0;
/// Blocks per encode dispatch on such CPU devices. Their loop budget is not
/// per workgroup alone: on lavapipe (Mesa 22.3, LLVM 15) an encode of 977
/// blocks in one dispatch ran out with one llvmpipe thread
/// (`LP_NUM_THREADS=1`), of 1953 with two, of 2930 with four, and always
/// again on retry, while the same inputs in dispatches of 256, 512 or 576
/// blocks encoded correctly on one thread. So the host cuts the input into
/// batches of at most this many blocks there (2.36 MB of input; the test
/// input of 538 blocks that crosses five look-back segments stays one
/// dispatch); hardware GPUs take batches as large as a binding allows.
pub const CPU_DEVICE_BATCH_BLOCKS: u32 = 576;
/// Longest codeword for which the 64-bit-scan encoder packs codewords in
/// pairs (`shaders/vle/encode.glsl`): a pair then fits the 32 bits one
/// accumulator step shifts in. Every byte code the default limit of 16
/// builds qualifies.
pub const PAIR_MAX_LEN: u32 = 16;
/// How often an encode whose waits ran out of budget is retried (CPU devices).
const SPIN_RETRIES: usize = 3;
const CONTROL_PREFIX: u64 = 8;
const ERR_NO_CODE: u32 = 1;
const ERR_SPIN: u32 = 2;
const ERR_BOUNDS: u32 = 4;
const ERR_INVALID_CODE: u32 = 8;

/// Which inter-block scan the encoder uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ScanKind {
    /// GVLE's scan over 64-bit atomics (needs `shaderBufferInt64Atomics`).
    Atomic64,
    /// The 32-bit-atomic fallback.
    Atomic32,
}

/// GPU time per stage, in nanoseconds, summed over batches.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct GpuTimes {
    /// Zeroing the encoder's output, scan and control buffers.
    pub clear_ns: f64,
    /// Both histogram passes.
    pub histogram_ns: f64,
    /// The encoder.
    pub encode_ns: f64,
    /// The decoder.
    pub decode_ns: f64,
}

/// A byte input on the device, in batches of whole chunks.
#[derive(Debug, Clone)]
pub struct DeviceInput {
    len: usize,
    /// (first symbol, symbols, words) of each batch; words are padded to 32 bytes.
    batches: Vec<(usize, usize, Subbuffer<[u32]>)>,
}

impl DeviceInput {
    /// Input length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for an empty input.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// VLE kernels on one device.
#[derive(Debug, Clone)]
pub struct GpuVle {
    gpu: Arc<Gpu>,
    scan: ScanKind,
    workgroups: u32,
    loop_budget: u32,
    buffer_limit: u64,
}

impl GpuVle {
    /// Uses GVLE's 64-bit scan where the device has 64-bit buffer atomics,
    /// else the 32-bit fallback.
    pub fn new(gpu: Arc<Gpu>) -> Self {
        let scan = if gpu.info().int64_atomics {
            ScanKind::Atomic64
        } else {
            ScanKind::Atomic32
        };
        let buffer_limit = (gpu.info().max_storage_buffer_range as u64).min(1 << 31);
        let cpu_device = gpu.info().device_type == "Cpu";
        GpuVle {
            gpu,
            scan,
            workgroups: if cpu_device {
                u32::MAX
            } else {
                MAX_ENCODE_WORKGROUPS
            },
            loop_budget: if cpu_device {
                CPU_DEVICE_LOOP_BUDGET
            } else {
                u32::MAX
            },
            buffer_limit,
        }
    }

    /// Forces a scan kind; an error if the device lacks 64-bit atomics for [`ScanKind::Atomic64`].
    pub fn with_scan(mut self, scan: ScanKind) -> Result<Self, VleCodecError> {
        if scan == ScanKind::Atomic64 && !self.gpu.info().int64_atomics {
            return Err(VleCodecError::GpuEncode(
                "the device has no 64-bit buffer atomics".into(),
            ));
        }
        self.scan = scan;
        Ok(self)
    }

    /// Sets the number of persistent encode workgroups (at least 1; the
    /// default is [`MAX_ENCODE_WORKGROUPS`] on GPUs and one per block on CPU
    /// devices).
    pub fn with_workgroups(mut self, workgroups: u32) -> Self {
        self.workgroups = workgroups.max(1);
        self
    }

    /// Sets the encoder's loop budget per workgroup lifetime (`None`: none,
    /// each block's waits bounded on their own, as on GPUs; the default on
    /// CPU devices is [`CPU_DEVICE_LOOP_BUDGET`], whose loops llvmpipe cuts
    /// at 65535 iterations). A budget also caps the blocks per dispatch and
    /// the decoder's chunk length, as on CPU devices. Tests use `None` to
    /// run the GPUs' encoder pipeline on lavapipe with small inputs.
    pub fn with_loop_budget(mut self, budget: Option<u32>) -> Self {
        self.loop_budget = budget.unwrap_or(u32::MAX);
        self
    }

    /// Lowers the per-binding size used for batching (tests use it to
    /// exercise multi-batch inputs on small data); never above the device limit.
    pub fn with_buffer_limit(mut self, bytes: u64) -> Self {
        self.buffer_limit = self.buffer_limit.min(bytes.max(4096));
        self
    }

    /// The device.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// The scan kind in use.
    pub fn scan(&self) -> ScanKind {
        self.scan
    }

    /// Largest binding in bytes we use: the device limit, at most 2^31.
    fn buffer_limit(&self) -> u64 {
        self.buffer_limit
    }

    /// Symbols per encode batch: whole chunks whose input and worst-case
    /// output (24-bit codes) both fit one binding.
    fn batch_symbols(&self, chunk_symbols: usize) -> Result<usize, VleCodecError> {
        let limit = self.buffer_limit() as usize - 64;
        let by_output = limit / 3; // 24 bits per symbol = 3 bytes
        let mut chunks = by_output.min(limit) / chunk_symbols;
        if self.loop_budget != u32::MAX {
            // A CPU device: at most CPU_DEVICE_BATCH_BLOCKS blocks per dispatch.
            let cap = CPU_DEVICE_BATCH_BLOCKS as usize * BLOCK_SYMBOLS;
            chunks = chunks.min((cap / chunk_symbols).max(1));
        }
        if chunks == 0 {
            return Err(VleCodecError::GpuEncode(format!(
                "a chunk of {chunk_symbols} symbols exceeds the device buffer limit"
            )));
        }
        Ok(chunks * chunk_symbols)
    }

    /// Uploads `data` in batches for [`GpuVle::histogram`] and [`GpuVle::encode`].
    pub fn upload(&self, data: &[u8], chunk_symbols: usize) -> Result<DeviceInput, VleCodecError> {
        wavelane_core::vle::check_chunk_symbols(chunk_symbols)?;
        let batch = self.batch_symbols(chunk_symbols)?;
        let mut batches = Vec::new();
        for (b, part) in data.chunks(batch).enumerate() {
            // Whole thread-inputs (32 bytes), zero-padded.
            let words = self
                .gpu
                .upload_bytes(part, part.len().div_ceil(32) as u64 * 8)?;
            batches.push((b * batch, part.len(), words));
        }
        Ok(DeviceInput {
            len: data.len(),
            batches,
        })
    }

    /// Byte histogram on the device.
    pub fn histogram(&self, input: &DeviceInput) -> Result<([u64; SYMBOLS], f64), VleCodecError> {
        let mut hist = [0u64; SYMBOLS];
        let mut ns = 0.0;
        for (_, n, words) in &input.batches {
            let vecs = n.div_ceil(16) as u32;
            let groups = vecs.div_ceil(256 * 16).clamp(1, 1024);
            let per_group = vecs.div_ceil(groups).max(1);
            let partials = self.gpu.uninit::<u32>(groups as u64 * 256)?;
            let out = self.gpu.uninit::<u32>(2 * SYMBOLS as u64)?;
            let timing = self.gpu.run(&[
                Dispatch::new(&shaders::VLE_HISTOGRAM, [groups, 1, 1])
                    .buffer(words)
                    .buffer(&partials)
                    .push(&[*n as u32, per_group]),
                Dispatch::new(&shaders::VLE_HISTOGRAM_REDUCE, [1, 1, 1])
                    .buffer(&partials)
                    .buffer(&out)
                    .push(&[groups]),
            ])?;
            ns += timing.total_ns();
            let words = self.gpu.download(&out)?;
            for (s, h) in hist.iter_mut().enumerate() {
                *h += words[2 * s] as u64 | (words[2 * s + 1] as u64) << 32;
            }
        }
        Ok((hist, ns))
    }

    /// Encodes a device input with `table`; byte-identical to [`super::cpu::encode`].
    pub fn encode(
        &self,
        input: &DeviceInput,
        table: &CodeTable,
        chunk_symbols: usize,
    ) -> Result<(Encoded, GpuTimes), VleCodecError> {
        self.encode_sized(input, table, chunk_symbols, None)
    }

    /// [`GpuVle::encode`] of an input whose histogram `hist` is known (from
    /// [`GpuVle::histogram`]): a one-batch input's output buffer is then
    /// sized and cleared for the stream's exact length instead of `max_len`
    /// bits a symbol (text under a 16-bit limit: a quarter of the bytes to
    /// clear). A histogram that does not match the input makes the encoder
    /// report an output past its buffer, never a wrong stream.
    pub fn encode_counted(
        &self,
        input: &DeviceInput,
        table: &CodeTable,
        chunk_symbols: usize,
        hist: &[u64; SYMBOLS],
    ) -> Result<(Encoded, GpuTimes), VleCodecError> {
        let bits = match input.batches.len() {
            1 => Some(table.encoded_bits(hist)?),
            _ => None, // each batch's own count is not known
        };
        self.encode_sized(input, table, chunk_symbols, bits)
    }

    /// The encoder; `data_bits`, when known, is the stream's length (one batch).
    fn encode_sized(
        &self,
        input: &DeviceInput,
        table: &CodeTable,
        chunk_symbols: usize,
        data_bits: Option<u64>,
    ) -> Result<(Encoded, GpuTimes), VleCodecError> {
        wavelane_core::vle::check_chunk_symbols(chunk_symbols)?;
        let mut codes = [0u32; SYMBOLS];
        for (s, c) in codes.iter_mut().enumerate() {
            *c = table.code(s as u8) << 8 | table.code_len(s as u8);
        }
        let codes = self.gpu.upload(&codes)?;
        let mut times = GpuTimes::default();
        let mut offsets = Vec::with_capacity(chunk_count(input.len, chunk_symbols));
        let mut stream: Vec<u8> = Vec::new();
        let mut bit = 0u64; // stream position of the current batch
        for (_, n, words) in &input.batches {
            let base_bit = (bit % 32) as u32;
            // The batch's word 0 is the word the previous batch ended in:
            // its bytes are ORed into the stream, the rest appended.
            let at = (bit / 32) as usize * 4;
            // Bits this batch may write: its exact length where known (one
            // batch), else `max_len` bits a symbol.
            let batch_bits = data_bits.unwrap_or(*n as u64 * table.max_len() as u64);
            let (local_index, end, timing) = self.encode_batch(
                words,
                *n,
                &codes,
                table.max_len(),
                batch_bits,
                chunk_symbols,
                base_bit,
                |offset, bytes| {
                    let start = at + offset as usize;
                    if stream.len() < start {
                        stream.resize(start, 0);
                    }
                    let overlap = stream.len().saturating_sub(start).min(bytes.len());
                    for (d, s) in stream[start..start + overlap].iter_mut().zip(bytes) {
                        *d |= s;
                    }
                    stream.extend_from_slice(&bytes[overlap..]);
                },
            )?;
            // The encoder is the last dispatch; the ones before it clear buffers.
            if let Some((encode, clears)) = timing.dispatch_ns.split_last() {
                times.clear_ns += clears.iter().sum::<f64>();
                times.encode_ns += encode;
            }
            let word_base = bit / 32 * 32;
            offsets.extend(local_index.iter().map(|&o| word_base + o));
            bit = word_base + end;
        }
        stream.truncate(bit.div_ceil(8) as usize);
        let chunk_bits = offsets
            .iter()
            .zip(offsets.iter().skip(1).chain(std::iter::once(&bit)))
            .map(|(a, b)| {
                b.checked_sub(*a)
                    .and_then(|d| u32::try_from(d).ok())
                    .ok_or_else(|| VleCodecError::GpuEncode("chunk positions out of order".into()))
            })
            .collect::<Result<Vec<u32>, _>>()?;
        let encoded = Encoded {
            table: table.clone(),
            chunk_symbols,
            chunk_bits,
            data_bits: bit,
            data: stream,
        };
        Ok((encoded, times))
    }

    /// One batch: hands its stream bytes to `sink(offset, bytes)` in order
    /// and returns its chunk positions and its end (both relative to its
    /// first word, base bit included), and the timing.
    #[allow(clippy::too_many_arguments)]
    fn encode_batch(
        &self,
        words: &Subbuffer<[u32]>,
        n: usize,
        codes: &Subbuffer<[u32]>,
        max_len: u32,
        max_bits: u64,
        chunk_symbols: usize,
        base_bit: u32,
        sink: impl FnMut(u64, &[u8]),
    ) -> Result<(Vec<u64>, u64, Timing), VleCodecError> {
        let blocks = n.div_ceil(BLOCK_SYMBOLS) as u32;
        let chunks = chunk_count(n, chunk_symbols) as u32;
        let capacity = (max_bits + 31 + 32).div_ceil(32).max(1);
        let out = self.gpu.uninit::<u32>(capacity)?;
        let control_words = CONTROL_PREFIX + 2 * (blocks as u64).div_ceil(SEGMENT_BLOCKS as u64);
        let control = self.gpu.uninit::<u32>(control_words)?;
        let index = self.gpu.uninit::<u32>(2 * chunks as u64)?;
        let (shader, cells, cell_words) = match self.scan {
            ScanKind::Atomic64 => {
                let c = self.gpu.uninit::<u64>(blocks as u64)?;
                // Two codewords per packing step when a pair fits 32 bits.
                let shader = if max_len <= PAIR_MAX_LEN {
                    &shaders::VLE_ENCODE_PAIRS
                } else {
                    &shaders::VLE_ENCODE
                };
                (shader, c.into_bytes(), 2 * blocks as u64)
            }
            ScanKind::Atomic32 => {
                let c = self.gpu.uninit::<u32>(blocks as u64)?;
                (&shaders::VLE_ENCODE32, c.into_bytes(), blocks as u64)
            }
        };
        let cells = cells.reinterpret::<[u32]>();
        let clear = |buf: &Subbuffer<[u32]>, words: u64| {
            let groups = (words.div_ceil(256) as u32).clamp(1, 4096);
            Dispatch::new(&shaders::VLE_CLEAR, [groups, 1, 1])
                .buffer(buf)
                .push(&[words as u32])
        };
        let groups = blocks.clamp(1, self.workgroups);
        let enc = Dispatch::new(shader, [groups, 1, 1])
            .buffer(words)
            .buffer(codes)
            .buffer(&out)
            .buffer(&cells)
            .buffer(&control)
            .buffer(&index)
            .constant(
                ENCODE_LOOP_BUDGET_ID,
                u32::from(self.loop_budget != u32::MAX),
            )
            .push(&[
                n as u32,
                blocks,
                chunk_symbols as u32,
                base_bit,
                capacity as u32,
                chunks,
                control_words as u32,
                self.loop_budget,
            ]);
        let mut attempt = 0;
        let (timing, ctrl) = loop {
            let timing = self.gpu.run(&[
                clear(&out, capacity),
                clear(&cells, cell_words),
                clear(&control, control_words),
                enc.clone(),
            ])?;
            let ctrl = self.gpu.download(&control.clone().slice(0..4))?;
            attempt += 1;
            if ctrl[1] == ERR_SPIN && attempt < SPIN_RETRIES {
                continue; // a CPU device ran out of loop budget while waiting
            }
            break (timing, ctrl);
        };
        let flags = ctrl[1];
        if flags != 0 {
            let what = [
                (ERR_NO_CODE, "a symbol has no codeword"),
                (ERR_SPIN, "a look-back wait ran out of its loop budget"),
                (ERR_BOUNDS, "output past the buffer"),
            ]
            .iter()
            .filter(|(bit, _)| flags & bit != 0)
            .map(|(_, s)| *s)
            .collect::<Vec<_>>()
            .join(", ");
            return Err(VleCodecError::GpuEncode(what));
        }
        let end = if n == 0 {
            base_bit as u64
        } else {
            ctrl[2] as u64 | (ctrl[3] as u64) << 32
        };
        let used = end.div_ceil(32).clamp(1, capacity);
        self.gpu
            .read_bytes(&out.clone().slice(0..used).into_bytes(), sink)?;
        let index = if chunks > 0 {
            let raw = self.gpu.download(&index)?;
            raw.chunks_exact(2)
                .map(|p| p[0] as u64 | (p[1] as u64) << 32)
                .collect()
        } else {
            Vec::new()
        };
        Ok((index, end, timing))
    }

    /// The whole encoder on the device: upload, histogram, code (on the
    /// host: 256 symbols), encode.
    pub fn compress(
        &self,
        data: &[u8],
        opts: &VleOptions,
    ) -> Result<(Encoded, GpuTimes), VleCodecError> {
        let input = self.upload(data, opts.chunk_symbols)?;
        let (hist, hist_ns) = self.histogram(&input)?;
        let table = CodeTable::from_histogram(&hist, opts.max_len)?;
        let (encoded, mut times) =
            self.encode_counted(&input, &table, opts.chunk_symbols, &hist)?;
        times.histogram_ns = hist_ns;
        Ok((encoded, times))
    }

    /// Decodes a parsed file on the device (one invocation per chunk).
    pub fn decode(&self, file: &VleFile<'_>) -> Result<(Vec<u8>, GpuTimes), VleCodecError> {
        let chunk_symbols = file.chunk_symbols as usize;
        let n = file.original_len as usize;
        let mut out = vec![0u8; n];
        let mut times = GpuTimes::default();
        if n == 0 {
            return Ok((out, times));
        }
        if self.loop_budget != u32::MAX && chunk_symbols / 4 >= CPU_DEVICE_LOOP_BUDGET as usize {
            return Err(VleCodecError::GpuChunk {
                chunk: 0,
                what: "chunks this long exceed the loop limit of a CPU Vulkan device; decode with --backend cpu",
            });
        }
        let decoder = DecodeTable::<{ 1 << GPU_LUT_BITS }>::new(&file.table)?;
        let mut tables: Vec<u32> = decoder.lut().iter().map(|&e| e as u32).collect();
        tables.extend(decoder.first_codes());
        tables.extend(decoder.counts().iter().map(|&c| c as u32));
        tables.extend(decoder.offsets().iter().map(|&o| o as u32));
        tables.extend(decoder.limits());
        tables.extend(decoder.sorted_symbols().iter().map(|&s| s as u32));
        let tables = self.gpu.upload(&tables)?;

        let mut offsets = file.chunk_offsets();
        offsets.push(file.data_bits);
        // Batches of whole chunks whose data and output fit one binding and
        // whose bit positions fit 32 bits.
        let limit = self.buffer_limit().min(1 << 29) as usize - 64;
        let per_batch = (limit / 3 / chunk_symbols).max(1); // 3 bytes of data per symbol at most
        let chunks = offsets.len() - 1;
        for c0 in (0..chunks).step_by(per_batch) {
            let c1 = (c0 + per_batch).min(chunks);
            let w0 = (offsets[c0] / 32) as usize;
            let w1 = offsets[c1].div_ceil(32) as usize;
            let bytes = &file.data[w0 * 4..(w1 * 4).min(file.data.len())];
            let data = self.gpu.upload_bytes(bytes, (w1 - w0).max(1) as u64)?;
            let local: Vec<u32> = offsets[c0..=c1]
                .iter()
                .map(|&o| (o - w0 as u64 * 32) as u32)
                .collect();
            let local = self.gpu.upload(&local)?;
            let first = c0 * chunk_symbols;
            let symbols = (c1 * chunk_symbols).min(n) - first;
            let dst = self.gpu.uninit::<u32>(symbols.div_ceil(4) as u64)?;
            let control = self.gpu.upload(&[0u32, u32::MAX])?;
            // The shader keeps its prefetch loads alive with a store under
            // `n_chunks == u32::MAX`, which a batch (at most 2^29 / 3 / 32
            // chunks) never meets.
            debug_assert!(c1 - c0 < u32::MAX as usize);
            let timing = self.gpu.run(&[Dispatch::new(
                &shaders::VLE_DECODE,
                [((c1 - c0) as u32).div_ceil(64), 1, 1],
            )
            .buffer(&data)
            .buffer(&tables)
            .buffer(&local)
            .buffer(&dst)
            .buffer(&control)
            .push(&[
                (c1 - c0) as u32,
                chunk_symbols as u32,
                symbols as u32,
                GPU_LUT_BITS,
                decoder.max_len(),
            ])])?;
            times.decode_ns += timing.total_ns();
            let ctrl = self.gpu.download(&control)?;
            if ctrl[0] != 0 {
                let what = if ctrl[0] & ERR_INVALID_CODE != 0 {
                    "bits match no codeword"
                } else {
                    "codewords do not end at the chunk end"
                };
                return Err(VleCodecError::GpuChunk {
                    chunk: c0 + ctrl[1] as usize,
                    what,
                });
            }
            let decoded = &mut out[first..first + symbols];
            self.gpu.read_bytes(&dst.into_bytes(), |offset, bytes| {
                // The last word may hold padding past the symbols.
                let at = (offset as usize).min(decoded.len());
                let len = bytes.len().min(decoded.len() - at);
                decoded[at..at + len].copy_from_slice(&bytes[..len]);
            })?;
        }
        Ok((out, times))
    }
}
