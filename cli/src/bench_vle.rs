//! `wavelane bench vle`: the arguments and the printing of
//! [`wavelane::bench::vle`], which measures (and documents what each
//! figure times and how every run is checked).

use clap::Args;
use indicatif::ProgressBar;

use super::CliResult;
use crate::args::{BackendArg, SampleKindArg};
use wavelane::bench::vle::{self as bench, VleConfig, VleReport};
use wavelane::vle::{VleOptions, DEFAULT_CHUNK_SYMBOLS};

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

/// Runs `wavelane bench vle`.
pub fn run(a: VleBenchArgs) -> CliResult {
    if a.size_mb == 0 || a.repeats == 0 {
        return Err("--size-mb and --repeats must be positive".into());
    }
    let config = VleConfig {
        bytes: a.size_mb * 1_000_000,
        kind: a.kind.into(),
        seed: a.seed,
        options: VleOptions {
            max_len: a.max_len,
            chunk_symbols: a.chunk_symbols,
        },
        workgroups: a.workgroups,
        fallback_scan: a.fallback_scan,
        repeats: a.repeats,
    };
    wavelane_core::vle::check_chunk_symbols(config.options.chunk_symbols)
        .map_err(|e| format!("--chunk-symbols: {e}"))?;
    let gpu = match a.backend {
        BackendArg::Cpu => None,
        kind => Some(super::bench::bench_backend(kind.into())?).filter(|b| b.gpu().is_some()),
    };
    let bar = if a.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new_spinner()
    };
    let report = bench::run(&config, gpu.as_ref(), |m| bar.set_message(m.to_owned()))?;
    bar.finish_and_clear();
    print(&report, a.json)
}

fn print(r: &VleReport, json: bool) -> CliResult {
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
