//! `wavelane bench vle`: Huffman encode and decode throughput on a
//! generated input, on all CPU cores and on the GPU, with the device's copy
//! bandwidth measured in the same run.
//!
//! Throughput is original (uncompressed) bytes per second. GPU figures come
//! from GPU timestamps around the dispatches (no host transfers); "encode"
//! is the GVLE encoder kernel alone, "encode_pipeline" adds the histogram
//! passes and the buffer clears, i.e. everything `--backend gpu` runs on the
//! device; `*_wall` figures are end to end, uploads and downloads included.
//! The copy reference ([`super::copy_reference`]) is a `vkCmdCopyBuffer` of
//! the input, counted the same way (bytes copied per second), so
//! `fraction_of_copy` compares like with like: an encoder that reads its
//! input once and writes less than it reads could in principle exceed 1.
//! Every run checks its output: the GPU stream must equal the CPU stream
//! and both decoders must give the input back.

use serde::Serialize;
use wavelane_core::vle::CodeTable;

use super::{repeat, stats, wall, BenchError, Stats};
use crate::backend::Backend;
use crate::vle::sample::{generate, SampleKind};
use crate::vle::{cpu, VleFile, VleOptions};

/// What to measure.
#[derive(Debug, Clone)]
pub struct VleConfig {
    /// Input bytes.
    pub bytes: usize,
    /// What the input is made of.
    pub kind: SampleKind,
    /// Seed of the generated input.
    pub seed: u64,
    /// Code length limit and chunk size.
    pub options: VleOptions,
    /// Persistent encode workgroups on the GPU (`None`: the device's).
    pub workgroups: Option<u32>,
    /// Use the 32-bit-atomic fallback scan even where 64-bit atomics exist.
    pub fallback_scan: bool,
    /// Timed repeats after one warm-up.
    pub repeats: usize,
}

/// One timed operation.
#[derive(Debug, Clone, Serialize)]
pub struct VleResult {
    /// `cpu` or `gpu`.
    pub backend: &'static str,
    /// What was timed (see the module docs).
    pub op: &'static str,
    /// Best repeat, milliseconds.
    pub best_ms: f64,
    /// Median repeat, milliseconds.
    pub median_ms: f64,
    /// (slowest - best) / best of the repeats.
    pub spread: f64,
    /// Original bytes / best time, in 10^9 bytes per second.
    pub gb_per_s: f64,
    /// gb_per_s / the copy's bytes copied per second (GPU only).
    pub fraction_of_copy: Option<f64>,
}

/// The report of `wavelane bench vle --json`.
#[derive(Debug, Clone, Serialize)]
pub struct VleReport {
    /// `"vle"`.
    pub area: &'static str,
    /// What the input is made of.
    pub input_kind: SampleKind,
    /// Input bytes.
    pub input_bytes: usize,
    /// Code options.
    pub options: VleOptions,
    /// Bits of coded data per input byte.
    pub compressed_bits_per_byte: f64,
    /// The CPU backend, described.
    pub cpu: String,
    /// The GPU, described, if one was measured.
    pub gpu: Option<String>,
    /// GPU buffer copy of the input size: bytes copied per second, 10^9.
    pub gpu_copy_gb_per_s: Option<f64>,
    /// The GPU's prefix-scan kind.
    pub gpu_scan: Option<crate::vle::ScanKind>,
    /// `VleConfig::workgroups`.
    pub gpu_encode_workgroups: Option<u32>,
    /// The measurements, CPU first.
    pub results: Vec<VleResult>,
}

/// The generated input the benchmark codes (`kind`, `bytes` long, from
/// `seed`): [`crate::vle::sample::generate`].
pub fn input(kind: SampleKind, bytes: usize, seed: u64) -> Vec<u8> {
    generate(kind, bytes, seed)
}

fn result(
    backend: &'static str,
    op: &'static str,
    bytes: usize,
    ns: Vec<f64>,
    copy: Option<f64>,
) -> VleResult {
    let Stats {
        best,
        median,
        spread,
    } = stats(ns);
    let gbs = bytes as f64 / best;
    VleResult {
        backend,
        op,
        best_ms: best / 1e6,
        median_ms: median / 1e6,
        spread,
        gb_per_s: gbs,
        fraction_of_copy: copy.map(|c| gbs / c),
    }
}

/// Runs the benchmark on the CPU, and on `gpu`'s device when it is the GPU
/// backend; `progress` is called before each measurement.
pub fn run(
    config: &VleConfig,
    gpu: Option<&Backend>,
    mut progress: impl FnMut(&str),
) -> Result<VleReport, BenchError> {
    let opts = config.options;
    if config.bytes == 0 || config.repeats == 0 {
        return Err(BenchError::Invalid(
            "--size-mb and --repeats must be positive".into(),
        ));
    }
    wavelane_core::vle::check_chunk_symbols(opts.chunk_symbols)
        .map_err(|e| BenchError::Invalid(format!("--chunk-symbols: {e}")))?;
    let n = config.bytes;
    let data = input(config.kind, n, config.seed);
    let mut results = Vec::new();

    // CPU: histogram + code + encode, then decode.
    progress("cpu encode");
    let (times, encoded) = repeat(config.repeats, || {
        let (ns, enc) = wall(|| -> Result<_, BenchError> {
            let table = CodeTable::from_histogram(&cpu::histogram(&data), opts.max_len)?;
            Ok(cpu::encode(&data, &table, opts.chunk_symbols)?)
        });
        Ok::<_, BenchError>((ns, enc?))
    })?;
    results.push(result("cpu", "encode", n, times, None));
    let file_bytes = encoded.file(n as u64, cpu::crc32(&data)).to_bytes();
    let file = VleFile::parse(&file_bytes)?;
    progress("cpu decode");
    let offsets = file.chunk_offsets();
    let mut out = vec![0u8; n];
    let (times, ()) = repeat(config.repeats, || {
        let (ns, r) = wall(|| {
            cpu::decode(
                &file.table,
                file.data,
                file.data_bits,
                &offsets,
                opts.chunk_symbols,
                &mut out,
            )
        });
        r?;
        Ok::<_, BenchError>((ns, ()))
    })?;
    if out != data {
        return Err(BenchError::Mismatch(
            "CPU decode did not give the input back".into(),
        ));
    }
    results.push(result("cpu", "decode", n, times, None));

    let mut report = VleReport {
        area: "vle",
        input_kind: config.kind,
        input_bytes: n,
        options: opts,
        compressed_bits_per_byte: file.data_bits as f64 / n as f64,
        cpu: Backend::Cpu.describe(),
        gpu: None,
        gpu_copy_gb_per_s: None,
        gpu_scan: None,
        gpu_encode_workgroups: config.workgroups,
        results,
    };
    #[cfg(feature = "gpu")]
    if let Some(Backend::Gpu(g)) = gpu {
        let mut v = crate::vle::GpuVle::new(g.clone());
        if let Some(w) = config.workgroups {
            v = v.with_workgroups(w);
        }
        if config.fallback_scan {
            v = v.with_scan(crate::vle::ScanKind::Atomic32)?;
        }
        let copy = gpu_runs(
            &v,
            &data,
            config,
            &encoded,
            &file,
            &mut progress,
            &mut report,
        )?;
        report.gpu = Some(Backend::Gpu(g.clone()).describe());
        report.gpu_copy_gb_per_s = Some(copy);
        report.gpu_scan = Some(v.scan());
    }
    #[cfg(not(feature = "gpu"))]
    let _ = gpu;
    Ok(report)
}

/// The GPU measurements, added to `report`; returns the copy bandwidth.
#[cfg(feature = "gpu")]
fn gpu_runs(
    v: &crate::vle::GpuVle,
    data: &[u8],
    config: &VleConfig,
    cpu_encoded: &crate::vle::Encoded,
    file: &VleFile<'_>,
    progress: &mut impl FnMut(&str),
    report: &mut VleReport,
) -> Result<f64, BenchError> {
    let (opts, repeats, n) = (&config.options, config.repeats, data.len());
    let results = &mut report.results;
    progress("gpu copy");
    let backend = Backend::Gpu(v.gpu().clone());
    let copy = n as f64 / super::copy_reference(&backend, n, repeats, "the input")?.ns;

    progress("gpu encode");
    let input = v.upload(data, opts.chunk_symbols)?;
    let mut pipeline_ns = Vec::new();
    let (times, encoded) = repeat(repeats, || {
        let (hist, hist_ns) = v.histogram(&input)?;
        let table = CodeTable::from_histogram(&hist, opts.max_len)?;
        let (enc, t) = v.encode_counted(&input, &table, opts.chunk_symbols, &hist)?;
        pipeline_ns.push(hist_ns + t.clear_ns + t.encode_ns);
        Ok::<_, BenchError>((t.encode_ns, enc))
    })?;
    pipeline_ns.remove(0); // the warm-up
    if encoded != *cpu_encoded {
        return Err(BenchError::Mismatch(
            "the GPU stream differs from the CPU stream".into(),
        ));
    }
    results.push(result("gpu", "encode", n, times, Some(copy)));
    results.push(result("gpu", "encode_pipeline", n, pipeline_ns, Some(copy)));

    progress("gpu encode (wall)");
    let (times, ()) = repeat(repeats, || {
        let (ns, r) = wall(|| v.gpu().without_clock_warm_up(|| v.compress(data, opts)));
        r?;
        Ok::<_, BenchError>((ns, ()))
    })?;
    results.push(result("gpu", "encode_wall", n, times, Some(copy)));

    progress("gpu decode");
    let (times, out) = repeat(repeats, || {
        let (out, t) = v.decode(file)?;
        Ok::<_, BenchError>((t.decode_ns, out))
    })?;
    if out != data {
        return Err(BenchError::Mismatch(
            "GPU decode did not give the input back".into(),
        ));
    }
    results.push(result("gpu", "decode", n, times, Some(copy)));

    progress("gpu decode (wall)");
    let (times, ()) = repeat(repeats, || {
        let (ns, r) = wall(|| v.gpu().without_clock_warm_up(|| v.decode(file)));
        r?;
        Ok::<_, BenchError>((ns, ()))
    })?;
    results.push(result("gpu", "decode_wall", n, times, Some(copy)));
    Ok(copy)
}
