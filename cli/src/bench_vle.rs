//! `wavelane bench vle`: Huffman encode and decode throughput on a generated
//! input (128 MB of English-like text by default), on all CPU cores and on
//! the GPU, with the device's copy bandwidth measured in the same run.
//!
//! Throughput is original (uncompressed) bytes per second. GPU figures come
//! from GPU timestamps around the dispatches (no host transfers); "encode"
//! is the GVLE encoder kernel alone, "encode_pipeline" adds the histogram
//! passes and the buffer clears, i.e. everything `--backend gpu` runs on the
//! device; `*_wall` figures are end to end, uploads and downloads included.
//! The copy reference (`wavelane::bench::copy_reference`) is a
//! `vkCmdCopyBuffer` of the input, counted the same
//! way (bytes copied per second), so `fraction_of_copy` compares like with
//! like: an encoder that reads its input once and writes less than it reads
//! could in principle exceed 1. Every run checks its output: the GPU stream
//! must equal the CPU stream and both decoders must give the input back.

use std::time::Instant;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use wavelane_core::vle::CodeTable;

use super::CliResult;
use crate::args::{BackendArg, SampleKindArg};
use wavelane::backend::Backend;
use wavelane::bench::{copy_reference, stats, Stats};
use wavelane::vle::sample::{generate, SampleKind};
use wavelane::vle::{cpu, GpuVle, VleFile, VleOptions, DEFAULT_CHUNK_SYMBOLS};

/// Arguments of `wavelane bench vle`.
#[derive(Debug, Args)]
pub struct VleBenchArgs {
    /// Input size in MB (10^6 bytes); at least 100 for meaningful GPU
    /// figures, smaller on software Vulkan (lavapipe).
    #[arg(long, default_value_t = 128)]
    size_mb: usize,
    /// What the input is made of.
    #[arg(long, value_enum, default_value_t = SampleKindArg::Text)]
    kind: SampleKindArg,
    /// Seed of the generated input.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Longest codeword in bits.
    #[arg(long, default_value_t = wavelane_core::vle::DEFAULT_MAX_LEN,
          value_parser = clap::value_parser!(u32).range(8..=24))]
    max_len: u32,
    /// Symbols per chunk (a positive multiple of 32).
    #[arg(long, default_value_t = DEFAULT_CHUNK_SYMBOLS)]
    chunk_symbols: usize,
    /// Persistent encode workgroups on the GPU (default: the device's, see
    /// `GpuVle::with_workgroups`).
    #[arg(long)]
    workgroups: Option<u32>,
    /// Use the 32-bit-atomic fallback scan even where 64-bit atomics exist.
    #[arg(long)]
    fallback_scan: bool,
    /// Timed repetitions (after one warm-up); best and median are reported.
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// `cpu`: the CPU only; `gpu`: the CPU and the GPU (an error without
    /// one); `auto`: the CPU, and the GPU if one can be opened.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct Measurement {
    backend: &'static str,
    /// What was timed (see the module docs).
    op: &'static str,
    best_ms: f64,
    median_ms: f64,
    /// Original bytes / best time, in 10^9 bytes per second.
    gb_per_s: f64,
    /// gb_per_s / copy_gb_per_s of the same backend (GPU only).
    fraction_of_copy: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Report {
    area: &'static str,
    input_kind: SampleKind,
    input_bytes: usize,
    options: VleOptions,
    compressed_bits_per_byte: f64,
    cpu: String,
    gpu: Option<String>,
    /// GPU buffer copy of the input size: bytes copied per second, 10^9.
    gpu_copy_gb_per_s: Option<f64>,
    gpu_scan: Option<wavelane::vle::ScanKind>,
    gpu_encode_workgroups: Option<u32>,
    results: Vec<Measurement>,
}

/// Runs `f` once to warm up, then `repeats` times; returns its timings (ns)
/// as `f` reports them, and the last result.
fn timed<T>(
    repeats: usize,
    bar: &ProgressBar,
    mut f: impl FnMut() -> Result<(f64, T), super::CliError>,
) -> Result<(Vec<f64>, T), super::CliError> {
    let (_, mut last) = f()?;
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let (ns, out) = f()?;
        times.push(ns);
        last = out;
        bar.inc(1);
    }
    Ok((times, last))
}

fn wall<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let out = f();
    (t.elapsed().as_nanos() as f64, out)
}

/// Runs `wavelane bench vle`.
pub fn run(a: VleBenchArgs) -> CliResult {
    if a.size_mb == 0 || a.repeats == 0 {
        return Err("--size-mb and --repeats must be positive".into());
    }
    let opts = VleOptions {
        max_len: a.max_len,
        chunk_symbols: a.chunk_symbols,
    };
    wavelane_core::vle::check_chunk_symbols(opts.chunk_symbols)
        .map_err(|e| format!("--chunk-symbols: {e}"))?;
    let gpu = match a.backend {
        BackendArg::Cpu => None,
        kind => super::bench::bench_backend(kind.into())?.gpu().cloned(),
    };
    let n = a.size_mb * 1_000_000;
    let data = generate(a.kind.into(), n, a.seed);
    let jobs = (2 + if gpu.is_some() { 4 } else { 0 }) * a.repeats;
    let bar = if a.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(jobs as u64).with_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                .expect("static progress template"),
        )
    };
    let mut results = Vec::new();
    let mut push = |backend, op, ns: Vec<f64>, copy: Option<f64>| {
        let Stats { best, median } = stats(ns);
        let gbs = n as f64 / best;
        results.push(Measurement {
            backend,
            op,
            best_ms: best / 1e6,
            median_ms: median / 1e6,
            gb_per_s: gbs,
            fraction_of_copy: copy.map(|c| gbs / c),
        });
    };

    // CPU: histogram + code + encode, then decode.
    bar.set_message("cpu encode");
    let (times, encoded) = timed(a.repeats, &bar, || {
        let (ns, enc) = wall(|| {
            let table = CodeTable::from_histogram(&cpu::histogram(&data), opts.max_len)?;
            cpu::encode(&data, &table, opts.chunk_symbols)
        });
        Ok((ns, enc?))
    })?;
    push("cpu", "encode", times, None);
    let file_bytes = encoded.file(n as u64, cpu::crc32(&data)).to_bytes();
    let file = VleFile::parse(&file_bytes)?;
    bar.set_message("cpu decode");
    let offsets = file.chunk_offsets();
    let mut out = vec![0u8; n];
    let (times, ()) = timed(a.repeats, &bar, || {
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
        Ok((ns, ()))
    })?;
    if out != data {
        return Err("CPU decode did not give the input back".into());
    }
    push("cpu", "decode", times, None);

    let mut copy_gbs = None;
    let mut scan = None;
    if let Some(g) = &gpu {
        let mut v = GpuVle::new(g.clone());
        if let Some(w) = a.workgroups {
            v = v.with_workgroups(w);
        }
        if a.fallback_scan {
            v = v.with_scan(wavelane::vle::ScanKind::Atomic32)?;
        }
        let (copy, s) = bench_gpu(
            &v, &data, &opts, &encoded, &file, a.repeats, &bar, &mut push,
        )?;
        copy_gbs = Some(copy);
        scan = Some(s);
    }
    bar.finish_and_clear();
    let report = Report {
        area: "vle",
        input_kind: a.kind.into(),
        input_bytes: n,
        options: opts,
        compressed_bits_per_byte: file.data_bits as f64 / n as f64,
        cpu: Backend::Cpu.describe(),
        gpu: gpu.map(|g| Backend::Gpu(g).describe()),
        gpu_copy_gb_per_s: copy_gbs,
        gpu_scan: scan,
        gpu_encode_workgroups: a.workgroups,
        results,
    };
    print(&report, a.json)
}

type Push<'a> = dyn FnMut(&'static str, &'static str, Vec<f64>, Option<f64>) + 'a;

/// The GPU measurements; returns the copy bandwidth and the scan used.
#[allow(clippy::too_many_arguments)]
fn bench_gpu(
    v: &GpuVle,
    data: &[u8],
    opts: &VleOptions,
    cpu_encoded: &wavelane::vle::Encoded,
    file: &VleFile<'_>,
    repeats: usize,
    bar: &ProgressBar,
    push: &mut Push<'_>,
) -> Result<(f64, wavelane::vle::ScanKind), super::CliError> {
    let n = data.len();
    bar.set_message("gpu copy");
    let backend = Backend::Gpu(v.gpu().clone());
    let copy = n as f64 / copy_reference(&backend, n, repeats, "the input")?.ns;

    bar.set_message("gpu encode");
    let input = v.upload(data, opts.chunk_symbols)?;
    let mut pipeline_ns = Vec::new();
    let (times, encoded) = timed(repeats, bar, || {
        let (hist, hist_ns) = v.histogram(&input)?;
        let table = CodeTable::from_histogram(&hist, opts.max_len)?;
        let (enc, t) = v.encode_counted(&input, &table, opts.chunk_symbols, &hist)?;
        pipeline_ns.push(hist_ns + t.clear_ns + t.encode_ns);
        Ok((t.encode_ns, enc))
    })?;
    pipeline_ns.remove(0); // the warm-up
    if encoded != *cpu_encoded {
        return Err("the GPU stream differs from the CPU stream".into());
    }
    push("gpu", "encode", times, Some(copy));
    push("gpu", "encode_pipeline", pipeline_ns, Some(copy));

    bar.set_message("gpu encode (wall)");
    let (times, _) = timed(repeats, bar, || {
        let (ns, r) = wall(|| v.gpu().without_clock_warm_up(|| v.compress(data, opts)));
        r?;
        Ok((ns, ()))
    })?;
    push("gpu", "encode_wall", times, Some(copy));

    bar.set_message("gpu decode");
    let (times, out) = timed(repeats, bar, || {
        let (out, t) = v.decode(file)?;
        Ok((t.decode_ns, out))
    })?;
    if out != data {
        return Err("GPU decode did not give the input back".into());
    }
    push("gpu", "decode", times, Some(copy));

    bar.set_message("gpu decode (wall)");
    let (times, _) = timed(repeats, bar, || {
        let (ns, r) = wall(|| v.gpu().without_clock_warm_up(|| v.decode(file)));
        r?;
        Ok((ns, ()))
    })?;
    push("gpu", "decode_wall", times, Some(copy));
    Ok((copy, v.scan()))
}

fn print(r: &Report, json: bool) -> CliResult {
    if json {
        println!("{}", serde_json::to_string_pretty(r)?);
        return Ok(());
    }
    println!(
        "vle: {} MB of {:?} ({:.3} bits/byte, max_len {}, {} symbols per chunk)",
        r.input_bytes / 1_000_000,
        r.input_kind,
        r.compressed_bits_per_byte,
        r.options.max_len,
        r.options.chunk_symbols
    );
    println!("cpu: {}", r.cpu);
    if let (Some(gpu), Some(copy)) = (&r.gpu, r.gpu_copy_gb_per_s) {
        println!("gpu: {gpu}, scan {:?}, copy {copy:.2} GB/s", r.gpu_scan);
    }
    println!(
        "{:>4} {:>16} {:>10} {:>10} {:>9} {:>8}",
        "", "op", "best ms", "median ms", "GB/s", "of copy"
    );
    for m in &r.results {
        println!(
            "{:>4} {:>16} {:>10.3} {:>10.3} {:>9.3} {:>8}",
            m.backend,
            m.op,
            m.best_ms,
            m.median_ms,
            m.gb_per_s,
            m.fraction_of_copy
                .map_or(String::new(), |f| format!("{:.0}%", 100.0 * f))
        );
    }
    Ok(())
}
