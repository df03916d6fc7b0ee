//! `wavelane bench dwt`: the arguments and the printing of
//! [`wavelane::bench::dwt`], which measures (and documents the byte
//! counts and the checks).

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::dwt::WaveletArg;
use super::CliResult;
use crate::args::BackendArg;
use wavelane::bench::dwt::{self as bench, DwtConfig};

/// Arguments of `wavelane bench dwt`.
#[derive(Debug, Args)]
pub struct DwtBenchArgs {
    /// Image side (the image is size x size).
    #[arg(long, default_value_t = 8192)]
    size: usize,
    /// Decomposition levels.
    #[arg(long, default_value_t = 5)]
    levels: u32,
    /// Wavelets to measure (comma separated).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "53")]
    wavelet: Vec<WaveletArg>,
    /// Time the inverse transform too.
    #[arg(long)]
    inverse: bool,
    /// Timed repetitions (after one warm-up); best and median are reported.
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// GPU forward only: output pair rows of every level's strips, 1..=64
    /// (a tuning knob, results do not depend on it; default: per level,
    /// wavelane::dwt::gpu::forward_strip).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    strip_rows: Option<u16>,
}

/// Runs `wavelane bench dwt`.
pub fn run(a: DwtBenchArgs) -> CliResult {
    let config = DwtConfig {
        size: a.size,
        levels: a.levels,
        wavelets: a.wavelet.iter().map(|w| w.wavelet()).collect(),
        inverse: a.inverse,
        repeats: a.repeats,
        strip_rows: a.strip_rows,
    };
    if config.size == 0 || config.repeats == 0 {
        return Err("--size and --repeats must be positive".into());
    }
    let backend = super::bench::bench_backend(a.backend.into())?;
    let jobs = config.wavelets.len() * if config.inverse { 2 } else { 1 };
    let bar = if a.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(jobs as u64)
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("static template"),
    );
    let mut started = false;
    let report = bench::run(&config, &backend, |m| {
        if started {
            bar.inc(1);
        }
        started = true;
        bar.set_message(m.to_owned());
    })?;
    bar.finish_and_clear();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "DWT {0}x{0}, {1} levels on {2}; copy reference {3:.1} GB/s ({4})",
        report.size, report.levels, report.backend, report.copy_gb_per_s, report.copy_method
    );
    println!(
        "job: {} bytes ({}-byte samples in, {}-byte coefficients out); transform: {} bytes",
        report.job_bytes,
        report.sample_bytes_in,
        report.coefficient_bytes,
        report.bytes_per_transform
    );
    println!(
        "{:<8} {:<8} {:>10} {:>10} {:>8} {:>9} {:>7} {:>9} {:>7}",
        "wavelet", "dir", "best ms", "median ms", "GS/s", "GB/s", "copy%", "job GB/s", "job%"
    );
    for m in &report.results {
        println!(
            "{:<8} {:<8} {:>10.3} {:>10.3} {:>8.3} {:>9.1} {:>6.1}% {:>9.1} {:>6.1}%",
            m.wavelet,
            m.direction,
            m.best_ms,
            m.median_ms,
            m.gsamples_per_s,
            m.achieved_gb_per_s,
            100.0 * m.fraction_of_copy,
            m.job_gb_per_s,
            100.0 * m.job_fraction_of_copy
        );
    }
    Ok(())
}
