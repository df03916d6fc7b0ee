//! `wavelane bench bpc`: BPC-PaCo throughput on square images of
//! quantized coefficients made by tiling a `BPCREF01` file's codeblocks (the
//! reference sample is 2048x2048), or synthetic Laplacian codeblocks when no
//! file is given.
//!
//! CPU: wall time of the core sequential encoder on one thread and of the
//! rayon backend. GPU: device time from timestamp queries (all dispatches
//! of an encode: measure, scans, encode, pack; and the decode dispatch),
//! with the input split into batches that fit the device's buffer limit.
//! [`BenchConfig::ops`] picks encoding, decoding or both.
//!
//! Every repeat is checked, outside its timing: every GPU encoding must
//! equal the CPU encoder's stream byte for byte (the equality promise of
//! docs/architecture.md; a shader that codes wrong is no faster for it),
//! and every decoding must give the coefficients back. A difference is an
//! error naming the first codeblock that differs. The decoders decode the
//! CPU encoder's stream, so decoding can be timed without a GPU encoding.
//!
//! Besides coefficients per second, each result counts the bytes the job
//! really needs, whatever the kernels move: the coefficients at their
//! width in (i32, 4 bytes) and the codewords out (2 bytes each) for an
//! encode, the reverse for a decode; and sets them against a copy of the
//! coefficients timed in the same run ([`super::copy_reference`]), both in
//! read + write bytes per second.

use std::time::Instant;

use serde::Serialize;

use super::{copy_reference, stats, Stats};
use wavelane_core::bpc::{self, CodingParams, Mode, ProbabilityTables, Scratch};

use crate::backend::{Backend, BackendKind};
#[cfg(feature = "gpu")]
use crate::bpc::gpu;
use crate::bpc::{cpu, BlockDesc, BpcError, CodeblockBatch, EncodedBatch};

/// One measurement.
#[derive(Debug, Clone, Serialize)]
pub struct BenchResult {
    /// Image side (the image is `size x size` coefficients).
    pub size: usize,
    /// 2 or 3.
    pub passes: u8,
    /// `cpu-1thread`, `cpu-rayon` or `gpu`.
    pub backend: String,
    /// `encode` or `decode`.
    pub op: String,
    /// Codeblocks coded.
    pub codeblocks: usize,
    /// Coefficients coded.
    pub coefficients: usize,
    /// Best time of the repeats, nanoseconds.
    pub ns: f64,
    /// Median time of the repeats, nanoseconds.
    pub median_ns: f64,
    /// (slowest - best) / best of the repeats.
    pub spread: f64,
    /// `ns / coefficients`.
    pub ns_per_coefficient: f64,
    /// Codeblocks per second.
    pub codeblocks_per_s: f64,
    /// Coefficients per second.
    pub coefficients_per_s: f64,
    /// Bits per coefficient of the encoding.
    pub bits_per_coefficient: f64,
    /// The bytes the job needs: 4 per coefficient and 2 per codeword.
    pub job_bytes: u64,
    /// `job_bytes` / best time, in 10^9 bytes per second.
    pub job_gb_per_s: f64,
    /// The copy of the coefficients, read + write bytes per second, 10^9.
    pub copy_gb_per_s: f64,
    /// job / copy bandwidth.
    pub job_fraction_of_copy: f64,
    /// GPU only: each dispatch's time in the best repeat, nanoseconds, in
    /// submission order (encode: measure, scans, encode, pack per batch;
    /// decode: one per batch). Empty for the CPU and where the queue has no
    /// timestamps.
    pub dispatch_ns: Vec<f64>,
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Codeblocks to tile (64x64 each); synthetic when `None`.
    pub source: Option<CodeblockBatch>,
    /// Image sides to measure (multiples of 64).
    pub sizes: Vec<usize>,
    /// Modes to measure.
    pub modes: Vec<Mode>,
    /// Repeats per measurement (the best is reported).
    pub repeats: usize,
    /// Also time the core encoder on one thread (slow at large sizes; only
    /// when encoding is timed).
    pub single_thread: bool,
    /// What to time, in any order (both are always measured encode first).
    pub ops: Vec<BenchOp>,
}

/// An operation the benchmark can time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchOp {
    /// Encoding (on a GPU: measure, scans, encode and pack dispatches).
    Encode,
    /// Decoding the CPU encoder's stream, all codewords.
    Decode,
}

/// Synthetic 64x64 codeblocks: Laplacian coefficients whose scale grows
/// with the level (roughly like a natural image's 9/7 subbands), 1024 of
/// them arranged as a 5-level 2048x2048 decomposition.
pub fn synthetic_source() -> CodeblockBatch {
    // splitmix64: deterministic and dependency-free.
    let mut state = 0x5eed_b9c0u64;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut batch = CodeblockBatch::default();
    // Codeblocks per group for a 2048x2048 image of 5 levels.
    let mut plan = vec![(bpc::LL_GROUP, 400.0)];
    for level in (0..5u8).rev() {
        let count = 1usize << (2 * (4 - level as usize));
        for o in 0..3 {
            plan.extend(std::iter::repeat_n(
                (3 * level as usize + o, 3.0 * 2f64.powi(level as i32)),
                count,
            ));
        }
    }
    for (group, scale) in plan {
        let offset = batch.coefficients.len();
        for _ in 0..64 * 64 {
            let bits = next();
            let u = ((bits >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            let mag = (-u.ln() * scale) as i32;
            batch
                .coefficients
                .push(if bits & 1 == 1 { -mag } else { mag });
        }
        batch.blocks.push(BlockDesc {
            offset,
            stride: 64,
            width: 64,
            height: 64,
            group,
        });
    }
    batch
}

/// `source`'s 64x64 codeblocks repeated to fill `size x size`.
fn tiled(source: &CodeblockBatch, size: usize) -> CodeblockBatch {
    let count = (size / 64) * (size / 64);
    let mut batch = CodeblockBatch {
        coefficients: Vec::with_capacity(count * 4096),
        blocks: Vec::with_capacity(count),
    };
    for i in 0..count {
        let d = source.blocks[i % source.len()];
        let offset = batch.coefficients.len();
        for y in 0..d.height {
            let row = d.offset + y * d.stride;
            batch
                .coefficients
                .extend_from_slice(&source.coefficients[row..row + d.width]);
        }
        batch.blocks.push(BlockDesc {
            offset,
            stride: d.width,
            ..d
        });
    }
    batch
}

/// Splits a batch into batches of at most `max_coefficients` coefficients
/// (a device's binding limit: only the GPU measurement splits).
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
fn chunks(batch: &CodeblockBatch, max_coefficients: usize) -> Vec<CodeblockBatch> {
    let per = (max_coefficients / 4096).max(1);
    batch
        .blocks
        .chunks(per)
        .map(|blocks| {
            let start = blocks[0].offset;
            let end = blocks
                .last()
                .map_or(start, |d| d.offset + (d.height - 1) * d.stride + d.width);
            CodeblockBatch {
                coefficients: batch.coefficients[start..end].to_vec(),
                blocks: blocks
                    .iter()
                    .map(|d| BlockDesc {
                        offset: d.offset - start,
                        ..*d
                    })
                    .collect(),
            }
        })
        .collect()
}

/// What a [`result`] is measured against: the codewords of the batch's
/// encoding and the copy bandwidth (read + write bytes per second, 10^9).
#[derive(Clone, Copy)]
struct Against {
    codewords: usize,
    copy_gb_per_s: f64,
}

fn result(
    size: usize,
    passes: u8,
    backend: &str,
    op: &str,
    batch: &CodeblockBatch,
    times: Stats,
    against: Against,
) -> BenchResult {
    let coefficients = batch.coefficient_count();
    let Against {
        codewords,
        copy_gb_per_s,
    } = against;
    let ns = times.best;
    let job_bytes = (4 * coefficients + 2 * codewords) as u64;
    let job_gb_per_s = job_bytes as f64 / ns;
    BenchResult {
        size,
        passes,
        backend: backend.into(),
        op: op.into(),
        codeblocks: batch.len(),
        coefficients,
        ns,
        median_ns: times.median,
        spread: times.spread,
        ns_per_coefficient: ns / coefficients as f64,
        codeblocks_per_s: batch.len() as f64 / (ns * 1e-9),
        coefficients_per_s: coefficients as f64 / (ns * 1e-9),
        bits_per_coefficient: codewords as f64 * 16.0 / coefficients as f64,
        job_bytes,
        job_gb_per_s,
        copy_gb_per_s,
        job_fraction_of_copy: job_gb_per_s / copy_gb_per_s,
        dispatch_ns: Vec::new(),
    }
}

/// Runs `f` `repeats` times (at least once; the first run is timed too,
/// as these measurements always were); returns the result of the fastest
/// run and the [`stats`] of all.
fn best<T>(
    repeats: usize,
    mut f: impl FnMut() -> Result<(T, f64), BpcError>,
) -> Result<(T, Stats), BpcError> {
    let (mut out, mut ns) = f()?;
    let mut times = vec![ns];
    for _ in 1..repeats.max(1) {
        let (o, t) = f()?;
        times.push(t);
        if t < ns {
            (out, ns) = (o, t);
        }
    }
    Ok((out, stats(times)))
}

fn wall<T>(f: impl FnOnce() -> Result<T, BpcError>) -> Result<(T, f64), BpcError> {
    let t = Instant::now();
    let out = f()?;
    Ok((out, t.elapsed().as_nanos() as f64))
}

/// A failed copy reference as the benchmark's error.
fn copy_error(e: super::CopyError) -> BpcError {
    match e {
        #[cfg(feature = "gpu")]
        super::CopyError::Gpu(g) => BpcError::Gpu(g),
        other => BpcError::Mismatch(format!("the copy reference failed: {other}")),
    }
}

/// Runs the benchmark on `backend`, calling `progress` before each
/// measurement. Fails when a GPU encoding differs from the CPU encoder's
/// stream or a decoding does not give the coefficients back.
pub fn run(
    config: &BenchConfig,
    backend: &Backend,
    mut progress: impl FnMut(&str),
) -> Result<Vec<BenchResult>, BpcError> {
    let source = config.source.clone().unwrap_or_else(synthetic_source);
    let encode = config.ops.contains(&BenchOp::Encode);
    let decode = config.ops.contains(&BenchOp::Decode);
    let mut results = Vec::new();
    for &size in &config.sizes {
        let batch = tiled(&source, size);
        let copy_bytes = 4 * batch.coefficient_count();
        let copy = copy_reference(backend, copy_bytes, config.repeats, "the coefficients")
            .map_err(copy_error)?;
        let copy_gb_per_s = 2.0 * copy_bytes as f64 / copy.ns;
        for &mode in &config.modes {
            let tables = ProbabilityTables::reference(mode);
            let passes = mode.passes();
            // Names a codeblock of the tiled batch in an error, with the
            // input codeblock it repeats (the one to look at).
            let at = |block: usize, what: &str| {
                BpcError::Mismatch(format!(
                    "{size}x{size} {passes}-pass, codeblock {block} (input codeblock {}): {what}",
                    block % source.len()
                ))
            };
            let check_decoded = |like: &CodeblockBatch, decoded: &[i32], start: usize| {
                match first_decoded_difference(like, decoded) {
                    None => Ok(()),
                    Some((block, row, column)) => Err(at(
                        start + block,
                        &format!(
                            "the {} decoder did not give the coefficients back (row {row}, column {column})",
                            if backend.kind() == BackendKind::Gpu { "GPU" } else { "CPU" }
                        ),
                    )),
                }
            };
            match backend {
                Backend::Cpu => {
                    progress(&format!("{size}x{size} {passes}-pass cpu-rayon"));
                    let encode_once =
                        || wall(|| cpu::encode(&batch, tables, cpu::CoreForm::Sequential));
                    let (enc, times) = if encode {
                        best(config.repeats, encode_once)?
                    } else {
                        let (enc, ns) = encode_once()?;
                        (enc, stats(vec![ns]))
                    };
                    let against = Against {
                        codewords: enc.codewords.len(),
                        copy_gb_per_s,
                    };
                    if encode {
                        results.push(result(
                            size,
                            passes,
                            "cpu-rayon",
                            "encode",
                            &batch,
                            times,
                            against,
                        ));
                    }
                    if decode {
                        let (_, times) = best(config.repeats, || {
                            let ((decoded, _), ns) = wall(|| {
                                cpu::decode(&batch, &enc, tables, None, cpu::CoreForm::Sequential)
                            })?;
                            check_decoded(&batch, &decoded, 0)?;
                            Ok(((), ns))
                        })?;
                        results.push(result(
                            size,
                            passes,
                            "cpu-rayon",
                            "decode",
                            &batch,
                            times,
                            against,
                        ));
                    }
                    if config.single_thread && encode {
                        progress(&format!("{size}x{size} {passes}-pass cpu-1thread"));
                        let (_, times) = best(config.repeats, || {
                            wall(|| single_thread_encode(&batch, tables))
                        })?;
                        results.push(result(
                            size,
                            passes,
                            "cpu-1thread",
                            "encode",
                            &batch,
                            times,
                            against,
                        ));
                    }
                }
                #[cfg(feature = "gpu")]
                Backend::Gpu(g) => {
                    // Keep every buffer within the device's binding limit.
                    let limit = (g.info().max_storage_buffer_range as usize / 4 / 4).max(4096);
                    let parts = chunks(&batch, limit);
                    // Part k starts at codeblock starts[k] of the batch.
                    let starts: Vec<usize> = parts
                        .iter()
                        .scan(0, |n, p| {
                            let at = *n;
                            *n += p.len();
                            Some(at)
                        })
                        .collect();
                    progress(&format!("{size}x{size} {passes}-pass cpu reference"));
                    let reference = parts
                        .iter()
                        .map(|p| cpu::encode(p, tables, cpu::CoreForm::Sequential))
                        .collect::<Result<Vec<_>, _>>()?;
                    let against = Against {
                        codewords: reference.iter().map(|e| e.codewords.len()).sum(),
                        copy_gb_per_s,
                    };
                    progress(&format!("{size}x{size} {passes}-pass gpu"));
                    if encode {
                        let (dispatch_ns, times) = best(config.repeats, || {
                            let mut encoded = Vec::with_capacity(parts.len());
                            let mut dispatch_ns = Vec::new();
                            for p in &parts {
                                let (e, t) = gpu::encode(g, p, tables)?;
                                dispatch_ns.extend(t.dispatches.dispatch_ns);
                                encoded.push(e);
                            }
                            if let Some((block, what)) =
                                first_stream_difference(&reference, &encoded)
                            {
                                return Err(at(
                                    block,
                                    &format!(
                                        "the GPU stream differs from the CPU encoder's: {what}"
                                    ),
                                ));
                            }
                            let ns = dispatch_ns.iter().sum();
                            Ok((dispatch_ns, ns))
                        })?;
                        results.push(BenchResult {
                            dispatch_ns,
                            ..result(size, passes, "gpu", "encode", &batch, times, against)
                        });
                    }
                    if decode {
                        let (dispatch_ns, times) = best(config.repeats, || {
                            let mut dispatch_ns = Vec::new();
                            for ((p, e), &start) in parts.iter().zip(&reference).zip(&starts) {
                                let (decoded, _, t) =
                                    gpu::decode(g, p, e, tables, bpc::DecodeLimits::ALL)?;
                                check_decoded(p, &decoded, start)?;
                                dispatch_ns.extend(t.dispatches.dispatch_ns);
                            }
                            let ns = dispatch_ns.iter().sum();
                            Ok((dispatch_ns, ns))
                        })?;
                        results.push(BenchResult {
                            dispatch_ns,
                            ..result(size, passes, "gpu", "decode", &batch, times, against)
                        });
                    }
                }
            }
        }
    }
    Ok(results)
}

/// The first codeblock whose stream in `got` differs from `reference`'s,
/// and what differs (`M`, the codeword count or the first differing
/// codeword). Both are the same batch's parts in order; codeblocks are
/// numbered across the parts.
pub fn first_stream_difference(
    reference: &[EncodedBatch],
    got: &[EncodedBatch],
) -> Option<(usize, String)> {
    fn blocks(parts: &[EncodedBatch]) -> Vec<(Option<u8>, &[u16])> {
        parts
            .iter()
            .flat_map(|e| (0..e.len()).map(move |i| e.block(i)))
            .collect()
    }
    let (want, have) = (blocks(reference), blocks(got));
    let top = |t: Option<u8>| t.map_or("none (empty)".to_string(), |m| m.to_string());
    for (block, ((want_top, want_words), (have_top, have_words))) in
        want.iter().zip(&have).enumerate()
    {
        if want_top != have_top {
            return Some((
                block,
                format!("M is {} instead of {}", top(*have_top), top(*want_top)),
            ));
        }
        if let Some(k) = want_words
            .iter()
            .zip(have_words.iter())
            .position(|(w, h)| w != h)
        {
            return Some((
                block,
                format!(
                    "codeword {k} is {:#06x} instead of {:#06x}",
                    have_words[k], want_words[k]
                ),
            ));
        }
        if want_words.len() != have_words.len() {
            return Some((
                block,
                format!(
                    "{} codewords instead of {}",
                    have_words.len(),
                    want_words.len()
                ),
            ));
        }
    }
    (want.len() != have.len()).then(|| {
        (
            want.len().min(have.len()),
            format!("{} codeblocks instead of {}", have.len(), want.len()),
        )
    })
}

/// The first coefficient of `like`'s codeblocks that `decoded` (laid out
/// like `like.coefficients`) does not hold: (codeblock, row, column).
fn first_decoded_difference(
    like: &CodeblockBatch,
    decoded: &[i32],
) -> Option<(usize, usize, usize)> {
    like.blocks.iter().enumerate().find_map(|(i, d)| {
        (0..d.height).find_map(|y| {
            let row = d.offset + y * d.stride..d.offset + y * d.stride + d.width;
            let got = decoded.get(row.clone()).unwrap_or(&[]);
            let want = &like.coefficients[row];
            (got != want).then(|| {
                let column = want
                    .iter()
                    .zip(got)
                    .position(|(w, g)| w != g)
                    .unwrap_or(got.len());
                (i, y, column)
            })
        })
    })
}

fn single_thread_encode(
    batch: &CodeblockBatch,
    tables: &ProbabilityTables,
) -> Result<usize, BpcError> {
    let mut scratch = Box::new(Scratch::<{ bpc::MAX_HEIGHT }>::new());
    let mut out = vec![0u16; bpc::max_codewords_any(64, 64)];
    let mut total = 0;
    for i in 0..batch.len() {
        let block = batch.block(i)?;
        if out.len() < bpc::max_codewords_any(block.width(), block.height()) {
            out.resize(bpc::max_codewords_any(block.width(), block.height()), 0);
        }
        let params = CodingParams::new(tables, batch.blocks[i].group);
        let enc = bpc::encode_sequential(&block, &params, &mut scratch, &mut out, None)
            .map_err(|source| BpcError::Encode { block: i, source })?;
        total += enc.codewords;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiling_and_chunking_keep_the_codeblocks() {
        let source = synthetic_source();
        assert_eq!(source.len(), 1024);
        let big = tiled(&source, 4096);
        assert_eq!(big.len(), 4096);
        assert_eq!(
            big.block(1024 + 7).unwrap().row(3),
            source.block(7).unwrap().row(3)
        );
        let parts = chunks(&big, 1000 * 4096);
        assert_eq!(parts.iter().map(|p| p.len()).sum::<usize>(), 4096);
        assert_eq!(
            parts[1].block(0).unwrap().row(5),
            big.block(1000).unwrap().row(5)
        );
    }

    /// The check names the first corrupted codeblock across parts, whatever
    /// differs in it, and passes equal streams.
    #[test]
    fn stream_check_names_the_first_differing_codeblock() {
        let source = synthetic_source();
        let batch = CodeblockBatch {
            coefficients: source.coefficients[..6 * 4096].to_vec(),
            blocks: source.blocks[..6].to_vec(),
        };
        let tables = ProbabilityTables::reference(Mode::TwoPass);
        let parts = chunks(&batch, 4 * 4096);
        assert_eq!(parts.len(), 2);
        let reference: Vec<EncodedBatch> = parts
            .iter()
            .map(|p| cpu::encode(p, tables, cpu::CoreForm::Sequential).unwrap())
            .collect();
        assert_eq!(first_stream_difference(&reference, &reference), None);

        // Codeblock 5 is codeblock 1 of the second part.
        let mut flipped = reference.clone();
        let at = flipped[1].offsets[1] + 3;
        flipped[1].codewords[at] ^= 0x0100;
        let (block, what) = first_stream_difference(&reference, &flipped).unwrap();
        assert_eq!(block, 5);
        assert!(what.starts_with("codeword 3 is "), "{what}");

        // A corruption later in the stream does not hide an earlier one.
        let at = flipped[0].offsets[2];
        flipped[0].codewords[at] ^= 1;
        assert_eq!(first_stream_difference(&reference, &flipped).unwrap().0, 2);

        let mut short = reference.clone();
        let end = short[0].offsets[4];
        short[0].codewords.remove(end - 1);
        short[0].offsets[4] -= 1;
        let (block, what) = first_stream_difference(&reference, &short).unwrap();
        assert_eq!(block, 3);
        assert!(what.contains("codewords instead of"), "{what}");

        let mut top = reference.clone();
        top[1].tops[0] = None;
        let (block, what) = first_stream_difference(&reference, &top).unwrap();
        assert_eq!(block, 4);
        assert!(what.starts_with("M is none"), "{what}");

        let (block, what) = first_stream_difference(&reference, &reference[..1]).unwrap();
        assert_eq!(block, 4);
        assert_eq!(what, "4 codeblocks instead of 6");
    }

    #[test]
    fn decoded_check_finds_the_first_wrong_coefficient() {
        let source = synthetic_source();
        let batch = CodeblockBatch {
            coefficients: source.coefficients[..3 * 4096].to_vec(),
            blocks: source.blocks[..3].to_vec(),
        };
        let mut decoded = batch.coefficients.clone();
        assert_eq!(first_decoded_difference(&batch, &decoded), None);
        decoded[2 * 4096 + 5 * 64 + 7] += 1;
        assert_eq!(first_decoded_difference(&batch, &decoded), Some((2, 5, 7)));
        assert_eq!(
            first_decoded_difference(&batch, &decoded[..4096 + 64]),
            Some((1, 1, 0))
        );
    }
}
