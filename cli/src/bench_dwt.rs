//! `wavelane bench dwt`: time a multi-level 2-D DWT of a random square
//! image on the CPU or GPU backend and compare its memory throughput with a
//! plain copy measured in the same run.
//!
//! Bytes counted per level: one read and one write of every sample of the
//! level's region (`8 * w * h` bytes for 32-bit samples); halo re-reads are
//! not counted, so the figure is the useful bandwidth. The copy reference
//! (`wavelane::bench::copy_reference`) is a device buffer copy of the image
//! on the GPU, a `copy_from_slice` of the image on the CPU, reported as
//! read + write bytes per second.
//!
//! On the GPU, the result of the timed transform is checked outside the
//! timing against the CPU backend's (bit for bit for the integer wavelets,
//! to 1e-5 of the coefficient scale for the f32 9/7); a difference fails the
//! benchmark, naming the first sample that differs.

use std::time::Instant;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use wavelane_core::dwt::volume::VolumeLayout;
use wavelane_core::dwt::{level_size, max_levels, Cdf53, Cdf97, Fixed97, ImageLayout};

use super::dwt::WaveletArg;
use super::CliResult;
use crate::args::BackendArg;
use wavelane::backend::{Backend, Gpu};
use wavelane::bench::{copy_reference, stats, Stats};
use wavelane::dwt::gpu::GpuDwt;
use wavelane::dwt::{self as host_dwt, HostWavelet};

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

#[derive(Debug, Serialize)]
struct Measurement {
    wavelet: String,
    direction: &'static str,
    best_ms: f64,
    median_ms: f64,
    /// Samples per second (image samples / best time), in 10^9.
    gsamples_per_s: f64,
    /// Useful bytes moved / best time, in 10^9 bytes per second.
    achieved_gb_per_s: f64,
    /// achieved / copy bandwidth.
    fraction_of_copy: f64,
    /// GPU: milliseconds of each dispatch of the best run, in dispatch
    /// order (one per level: forward finest first, inverse coarsest first);
    /// empty on the CPU.
    dispatch_ms: Vec<f64>,
    /// GPU forward: output pair rows of each level's strips, finest first
    /// (`--strip-rows` or the per-level rule); empty otherwise.
    strip_rows: Vec<usize>,
}

#[derive(Debug, Serialize)]
struct Report {
    area: &'static str,
    backend: String,
    size: usize,
    levels: u32,
    sample_bytes: usize,
    bytes_per_transform: u64,
    copy_gb_per_s: f64,
    /// How the copy reference was taken.
    copy_method: String,
    timing: &'static str,
    results: Vec<Measurement>,
}

/// Runs `wavelane bench dwt`.
pub fn run(a: DwtBenchArgs) -> CliResult {
    if a.size == 0 || a.repeats == 0 {
        return Err("--size and --repeats must be positive".into());
    }
    if a.levels > max_levels(a.size, a.size) {
        return Err(format!(
            "--levels {}: a {0}x{0} image allows at most {}",
            a.levels,
            max_levels(a.size, a.size)
        )
        .into());
    }
    let backend = super::bench::bench_backend(a.backend.into())?;
    let n = a.size * a.size;
    let bytes: u64 = (0..a.levels)
        .map(|l| {
            let (w, h) = level_size(a.size, a.size, l);
            8 * (w * h) as u64
        })
        .sum();
    // 8-bit level-shifted noise from a fixed xorshift; the DWT's speed does
    // not depend on the values.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let image: Vec<i32> = (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 56) as i32 - 128
        })
        .collect();
    let copy = copy_reference(&backend, 4 * n, a.repeats, "the image")?;
    let timing = match &backend {
        Backend::Gpu(_) => "GPU timestamps around the dispatches (no transfers)",
        Backend::Cpu => "wall clock, all cores",
    };
    let copy_gbs = 8.0 * n as f64 / copy.ns;
    let jobs = a.wavelet.len() * if a.inverse { 2 } else { 1 };
    let bar = if a.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(jobs as u64)
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}").expect("static template"),
    );
    let mut results = Vec::new();
    for &wv in &a.wavelet {
        for inverse in [false, true] {
            if inverse && !a.inverse {
                continue;
            }
            bar.set_message(format!(
                "{:?} {}",
                wv.wavelet(),
                if inverse { "inverse" } else { "forward" }
            ));
            let run = Run {
                size: a.size,
                levels: a.levels,
                repeats: a.repeats,
                inverse,
                strip_rows: a.strip_rows,
            };
            let Timed { runs, strip_rows } = match wv {
                WaveletArg::Cdf53 => time::<Cdf53>(&backend, &image, run)?,
                WaveletArg::Fixed97 => time::<Fixed97>(&backend, &image, run)?,
                WaveletArg::Cdf97 => {
                    let f: Vec<f32> = image.iter().map(|&v| v as f32).collect();
                    time::<Cdf97>(&backend, &f, run)?
                }
            };
            let dispatch_ms = runs
                .iter()
                .min_by(|x, y| x.0.total_cmp(&y.0))
                .map(|r| r.1.iter().map(|ns| ns / 1e6).collect())
                .unwrap_or_default();
            let Stats { best, median } = stats(runs.into_iter().map(|r| r.0).collect());
            let achieved = bytes as f64 / best;
            results.push(Measurement {
                wavelet: format!("{:?}", wv.wavelet()),
                direction: if inverse { "inverse" } else { "forward" },
                best_ms: best / 1e6,
                median_ms: median / 1e6,
                gsamples_per_s: n as f64 / best,
                achieved_gb_per_s: achieved,
                fraction_of_copy: achieved / copy_gbs,
                dispatch_ms,
                strip_rows,
            });
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let report = Report {
        area: "dwt",
        backend: backend.describe(),
        size: a.size,
        levels: a.levels,
        sample_bytes: 4,
        bytes_per_transform: bytes,
        copy_gb_per_s: copy_gbs,
        copy_method: copy.method,
        timing,
        results,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "DWT {0}x{0}, {1} levels on {2}; copy reference {3:.1} GB/s ({4})",
        report.size, report.levels, report.backend, report.copy_gb_per_s, report.copy_method
    );
    println!(
        "{:<8} {:<8} {:>10} {:>10} {:>8} {:>9} {:>7}",
        "wavelet", "dir", "best ms", "median ms", "GS/s", "GB/s", "copy%"
    );
    for m in &report.results {
        println!(
            "{:<8} {:<8} {:>10.3} {:>10.3} {:>8.3} {:>9.1} {:>6.1}%",
            m.wavelet,
            m.direction,
            m.best_ms,
            m.median_ms,
            m.gsamples_per_s,
            m.achieved_gb_per_s,
            100.0 * m.fraction_of_copy
        );
    }
    Ok(())
}

/// What one measurement runs.
#[derive(Debug, Clone, Copy)]
struct Run {
    size: usize,
    levels: u32,
    repeats: usize,
    inverse: bool,
    strip_rows: Option<u16>,
}

/// What [`time`] measured.
struct Timed {
    /// Nanoseconds of `repeats` runs after one warm-up, each with the
    /// nanoseconds of its dispatches (GPU only).
    runs: Vec<(f64, Vec<f64>)>,
    /// GPU forward: output pair rows of each level's strips; else empty.
    strip_rows: Vec<usize>,
}

/// Times `run` of `W` on `backend`.
fn time<W: HostWavelet<HostSample: Checked>>(
    backend: &Backend,
    image: &[W::Sample],
    run: Run,
) -> Result<Timed, super::CliError> {
    let layout = ImageLayout::new(run.size, run.size);
    let (levels, inverse) = (run.levels, run.inverse);
    match backend {
        Backend::Gpu(gpu) => time_gpu::<W>(gpu, image, run),
        Backend::Cpu => {
            let mut times = Vec::new();
            let mut data = image.to_vec();
            for i in 0..=run.repeats {
                data.copy_from_slice(image);
                let t = Instant::now();
                if inverse {
                    host_dwt::inverse_2d::<W>(backend, &mut data, layout, levels)?;
                } else {
                    host_dwt::forward_2d::<W>(backend, &mut data, layout, levels)?;
                }
                if i > 0 {
                    times.push((t.elapsed().as_nanos() as f64, Vec::new()));
                }
            }
            Ok(Timed {
                runs: times,
                strip_rows: Vec::new(),
            })
        }
    }
}

/// Device-resident timing: buffers stay on the GPU, timestamps bracket the
/// dispatches of one whole transform.
fn time_gpu<W: HostWavelet<HostSample: Checked>>(
    gpu: &std::sync::Arc<Gpu>,
    image: &[W::Sample],
    run: Run,
) -> Result<Timed, super::CliError> {
    let Run {
        size,
        levels,
        repeats,
        inverse,
        strip_rows,
    } = run;
    let mut plan = GpuDwt::new(
        gpu.clone(),
        VolumeLayout::new(size, size, 1),
        [levels, levels, 0],
    )?;
    if let Some(rows) = strip_rows {
        plan = plan.with_strip_rows(rows.into());
    }
    let a = gpu.upload(image)?;
    let b = gpu.uninit::<W::Sample>(image.len() as u64)?;
    let scratch = plan.scratch::<W::Sample>()?;
    let dispatches = if inverse {
        plan.inverse_dispatches::<W>(&a, &b, &scratch)?
    } else {
        plan.forward_dispatches::<W>(&a, &b, &scratch)?
    };
    let mut times = Vec::new();
    for i in 0..=repeats {
        let timing = gpu.run(&dispatches)?;
        if timing.dispatch_ns.is_empty() {
            return Err("this GPU queue has no timestamps; cannot time kernels".into());
        }
        if i > 0 {
            times.push((timing.total_ns(), timing.dispatch_ns));
        }
    }
    // The result of the last run against the CPU backend's, outside the timing.
    let got = gpu.download(&b)?;
    let mut expected = image.to_vec();
    let layout = ImageLayout::new(size, size);
    if inverse {
        host_dwt::inverse_2d::<W>(&Backend::Cpu, &mut expected, layout, levels)?;
    } else {
        host_dwt::forward_2d::<W>(&Backend::Cpu, &mut expected, layout, levels)?;
    }
    if let Some(i) = W::HostSample::first_difference(&expected, &got) {
        return Err(format!(
            "the GPU's {} transform differs from the CPU's at row {}, column {}: expected {:?}, got {:?}",
            if inverse { "inverse" } else { "forward" },
            i / size,
            i % size,
            expected[i],
            got[i]
        )
        .into());
    }
    Ok(Timed {
        runs: times,
        strip_rows: if inverse {
            Vec::new()
        } else {
            plan.forward_strip_rows(W::WAVELET)?
        },
    })
}

/// How the benchmark compares the GPU's result with the CPU's.
trait Checked: Sized {
    /// Index of the first sample of `actual` that does not agree with
    /// `expected`, if any.
    fn first_difference(expected: &[Self], actual: &[Self]) -> Option<usize>;
}

impl Checked for i32 {
    fn first_difference(expected: &[i32], actual: &[i32]) -> Option<usize> {
        expected.iter().zip(actual).position(|(e, a)| e != a)
    }
}

impl Checked for f32 {
    /// Within 1e-5 of the larger of the coefficient scale and the value
    /// (the f32 9/7's documented agreement); a NaN never agrees.
    fn first_difference(expected: &[f32], actual: &[f32]) -> Option<usize> {
        let scale = expected.iter().fold(1.0f32, |m, v| m.max(v.abs()));
        expected.iter().zip(actual).position(|(e, a)| {
            let (error, tolerance) = ((e - a).abs(), 1e-5 * scale.max(e.abs()));
            error.is_nan() || error > tolerance
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Checked;

    #[test]
    fn integer_results_must_agree_bit_for_bit() {
        let expected = [3, -7, 0, 12];
        assert_eq!(i32::first_difference(&expected, &expected), None);
        assert_eq!(i32::first_difference(&expected, &[3, -7, 1, 12]), Some(2));
        assert_eq!(i32::first_difference(&expected, &[4, -7, 0, 12]), Some(0));
    }

    #[test]
    fn float_results_agree_within_the_documented_tolerance() {
        // Scale 1000: 1e-5 of it is 0.01.
        let expected = [1000.0f32, -2.5, 0.0, 40.0];
        assert_eq!(f32::first_difference(&expected, &expected), None);
        assert_eq!(
            f32::first_difference(&expected, &[1000.0, -2.505, 0.009, 40.0]),
            None
        );
        assert_eq!(
            f32::first_difference(&expected, &[1000.0, -2.5, 0.02, 40.0]),
            Some(2)
        );
        assert_eq!(
            f32::first_difference(&expected, &[1000.0, -2.5, 0.0, f32::NAN]),
            Some(3)
        );
    }
}
