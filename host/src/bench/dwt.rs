//! `wavelane bench dwt`: a multi-level 2-D DWT of a generated square image
//! on the CPU or the GPU backend, its memory throughput set against a plain
//! copy measured in the same run.
//!
//! # Bytes
//!
//! Two byte counts, both per transform, both set against the copy in read
//! + write bytes per second:
//! - `bytes_per_transform`, the transform's own traffic at its storage
//!   width: one read and one write of every sample of each level's region
//!   (`8 * w * h` bytes per level for 32-bit samples); halo re-reads are
//!   not counted, so the figure is the useful bandwidth of the kernels as
//!   they are.
//! - `job_bytes`, what the job really needs whatever the kernels do: the
//!   image's samples read once at their own width (the generated image is
//!   8-bit: one byte a sample) and the coefficients written once at the
//!   transform's width (4 bytes); the inverse reads the coefficients and
//!   writes the samples. A kernel that stores its intermediates narrower,
//!   or fuses the levels, gains against this count; a figure near the copy
//!   means no layout could do much better.
//!
//! # Checks
//!
//! On the GPU the result of the timed transform is checked outside the
//! timing against the CPU backend's (bit for bit for the integer wavelets,
//! to 1e-5 of the coefficient scale for the f32 9/7); a difference fails
//! the benchmark, naming the first sample that differs.

use serde::Serialize;
use wavelane_core::dwt::{level_size, max_levels, Cdf53, Cdf97, Fixed97, ImageLayout, Wavelet};

use super::{copy_reference, wall, BenchError, Clock, Measurement};
use crate::backend::Backend;
use crate::dwt::{self as host_dwt, HostWavelet};

/// Bytes a sample of the generated image has (it is 8-bit).
pub const SAMPLE_BYTES_IN: usize = 1;

/// Bytes a coefficient has in the transform's buffers (i32 or f32).
pub const COEFFICIENT_BYTES: usize = 4;

/// What to measure.
#[derive(Debug, Clone)]
pub struct DwtConfig {
    /// Image side (the image is `size x size`).
    pub size: usize,
    /// Decomposition levels.
    pub levels: u32,
    /// Wavelets to measure, in order.
    pub wavelets: Vec<Wavelet>,
    /// Time the inverse transform too.
    pub inverse: bool,
    /// Timed repeats after one warm-up.
    pub repeats: usize,
    /// GPU forward only: output pair rows of every level's strips (a
    /// tuning knob; `None`: per level, `wavelane::dwt::gpu::forward_strip`).
    pub strip_rows: Option<u16>,
}

/// One wavelet and direction.
#[derive(Debug, Clone, Serialize)]
pub struct DwtResult {
    /// `Cdf53`, `Fixed97` or `Cdf97`.
    pub wavelet: String,
    /// `forward` or `inverse`.
    pub direction: &'static str,
    /// Best repeat, milliseconds.
    pub best_ms: f64,
    /// Median repeat, milliseconds.
    pub median_ms: f64,
    /// (slowest - best) / best of the repeats.
    pub spread: f64,
    /// Image samples / best time, in 10^9 per second.
    pub gsamples_per_s: f64,
    /// `bytes_per_transform` / best time, in 10^9 bytes per second.
    pub achieved_gb_per_s: f64,
    /// achieved / copy bandwidth.
    pub fraction_of_copy: f64,
    /// `job_bytes` / best time, in 10^9 bytes per second.
    pub job_gb_per_s: f64,
    /// job / copy bandwidth.
    pub job_fraction_of_copy: f64,
    /// GPU: milliseconds of each dispatch of the best run, in dispatch
    /// order (one per level: forward finest first, inverse coarsest first);
    /// empty on the CPU.
    pub dispatch_ms: Vec<f64>,
    /// GPU forward: output pair rows of each level's strips, finest first;
    /// empty otherwise.
    pub strip_rows: Vec<usize>,
    /// Every repeat.
    pub measurement: Measurement,
}

/// The report of `wavelane bench dwt --json`.
#[derive(Debug, Clone, Serialize)]
pub struct DwtReport {
    /// `"dwt"`.
    pub area: &'static str,
    /// [`Backend::describe`].
    pub backend: String,
    /// Image side.
    pub size: usize,
    /// Levels.
    pub levels: u32,
    /// Bytes per sample in the transform's buffers.
    pub sample_bytes: usize,
    /// The transform's traffic at its storage width (module docs).
    pub bytes_per_transform: u64,
    /// Bytes a sample of the input has.
    pub sample_bytes_in: usize,
    /// Bytes a coefficient has.
    pub coefficient_bytes: usize,
    /// The bytes the job needs (module docs).
    pub job_bytes: u64,
    /// Copy bandwidth, read + write bytes per second, 10^9.
    pub copy_gb_per_s: f64,
    /// How the copy reference was taken.
    pub copy_method: String,
    /// What timed the transforms.
    pub timing: &'static str,
    /// One per wavelet and direction.
    pub results: Vec<DwtResult>,
}

/// The generated image: 8-bit level-shifted noise from a fixed xorshift
/// (the DWT's speed does not depend on the values).
pub fn noise_image(samples: usize) -> Vec<i32> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..samples)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 56) as i32 - 128
        })
        .collect()
}

/// The transform's traffic at 32-bit storage: each level's region read and
/// written once.
pub fn bytes_per_transform(size: usize, levels: u32) -> u64 {
    (0..levels)
        .map(|l| {
            let (w, h) = level_size(size, size, l);
            (2 * COEFFICIENT_BYTES * w * h) as u64
        })
        .sum()
}

/// The bytes the job needs: samples in at their width, coefficients out
/// (either direction moves the same bytes).
pub fn job_bytes(samples: usize) -> u64 {
    (samples * (SAMPLE_BYTES_IN + COEFFICIENT_BYTES)) as u64
}

/// Runs the benchmark on `backend`, calling `progress` before each
/// measurement.
pub fn run(
    config: &DwtConfig,
    backend: &Backend,
    mut progress: impl FnMut(&str),
) -> Result<DwtReport, BenchError> {
    let size = config.size;
    if size == 0 || config.repeats == 0 {
        return Err(BenchError::Invalid(
            "--size and --repeats must be positive".into(),
        ));
    }
    if config.levels > max_levels(size, size) {
        return Err(BenchError::Invalid(format!(
            "--levels {}: a {size}x{size} image allows at most {}",
            config.levels,
            max_levels(size, size)
        )));
    }
    let n = size * size;
    let bytes = bytes_per_transform(size, config.levels);
    let job = job_bytes(n);
    let image = noise_image(n);
    let copy = copy_reference(backend, COEFFICIENT_BYTES * n, config.repeats, "the image")?;
    let (timing, clock) = match backend {
        Backend::Cpu => ("wall clock, all cores", Clock::Wall),
        #[cfg(feature = "gpu")]
        Backend::Gpu(_) => (
            "GPU timestamps around the dispatches (no transfers)",
            Clock::GpuTimestamps,
        ),
    };
    // Read + write bytes per second, like the transforms' counts.
    let copy_gbs = 2.0 * (COEFFICIENT_BYTES * n) as f64 / copy.ns;
    let mut results = Vec::new();
    for &wavelet in &config.wavelets {
        for inverse in [false, true] {
            if inverse && !config.inverse {
                continue;
            }
            let direction = if inverse { "inverse" } else { "forward" };
            progress(&format!("{wavelet:?} {direction}"));
            let run = Run {
                size,
                levels: config.levels,
                repeats: config.repeats,
                inverse,
                strip_rows: config.strip_rows,
            };
            let Timed { runs, strip_rows } = match wavelet {
                Wavelet::Cdf53 => time::<Cdf53>(backend, &image, run)?,
                Wavelet::Fixed97 => time::<Fixed97>(backend, &image, run)?,
                Wavelet::Cdf97 => {
                    let f: Vec<f32> = image.iter().map(|&v| v as f32).collect();
                    time::<Cdf97>(backend, &f, run)?
                }
            };
            let dispatch_ms = runs
                .iter()
                .min_by(|x, y| x.0.total_cmp(&y.0))
                .map(|r| r.1.iter().map(|ns| ns / 1e6).collect())
                .unwrap_or_default();
            let measurement = Measurement::new(clock, runs.into_iter().map(|r| r.0).collect());
            let best = measurement.stats.best;
            let achieved = bytes as f64 / best;
            let job_gbs = job as f64 / best;
            results.push(DwtResult {
                wavelet: format!("{wavelet:?}"),
                direction,
                best_ms: measurement.best_ms(),
                median_ms: measurement.median_ms(),
                spread: measurement.stats.spread,
                gsamples_per_s: n as f64 / best,
                achieved_gb_per_s: achieved,
                fraction_of_copy: achieved / copy_gbs,
                job_gb_per_s: job_gbs,
                job_fraction_of_copy: job_gbs / copy_gbs,
                dispatch_ms,
                strip_rows,
                measurement,
            });
        }
    }
    Ok(DwtReport {
        area: "dwt",
        backend: backend.describe(),
        size,
        levels: config.levels,
        sample_bytes: COEFFICIENT_BYTES,
        bytes_per_transform: bytes,
        sample_bytes_in: SAMPLE_BYTES_IN,
        coefficient_bytes: COEFFICIENT_BYTES,
        job_bytes: job,
        copy_gb_per_s: copy_gbs,
        copy_method: copy.method,
        timing,
        results,
    })
}

/// What one measurement runs.
#[derive(Debug, Clone, Copy)]
struct Run {
    size: usize,
    levels: u32,
    repeats: usize,
    inverse: bool,
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
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
) -> Result<Timed, BenchError> {
    let layout = ImageLayout::new(run.size, run.size);
    let (levels, inverse) = (run.levels, run.inverse);
    match backend {
        #[cfg(feature = "gpu")]
        Backend::Gpu(gpu) => time_gpu::<W>(gpu, image, run),
        Backend::Cpu => {
            let mut data = image.to_vec();
            let (times, ()) = super::repeat(run.repeats, || {
                data.copy_from_slice(image);
                let (ns, r) = wall(|| {
                    if inverse {
                        host_dwt::inverse_2d::<W>(backend, &mut data, layout, levels)
                    } else {
                        host_dwt::forward_2d::<W>(backend, &mut data, layout, levels)
                    }
                });
                r.map(|()| (ns, ()))
            })?;
            Ok(Timed {
                runs: times.into_iter().map(|ns| (ns, Vec::new())).collect(),
                strip_rows: Vec::new(),
            })
        }
    }
}

/// Device-resident timing: buffers stay on the GPU, timestamps bracket the
/// dispatches of one whole transform.
#[cfg(feature = "gpu")]
fn time_gpu<W: HostWavelet<HostSample: Checked>>(
    gpu: &std::sync::Arc<crate::backend::Gpu>,
    image: &[W::Sample],
    run: Run,
) -> Result<Timed, BenchError> {
    use crate::dwt::gpu::GpuDwt;
    use wavelane_core::dwt::volume::VolumeLayout;
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
    let mut per_dispatch = Vec::new();
    let (times, ()) = super::repeat(repeats, || {
        let timing = gpu.run(&dispatches)?;
        if timing.dispatch_ns.is_empty() {
            return Err(BenchError::NoTimestamps);
        }
        let ns = timing.total_ns();
        per_dispatch.push(timing.dispatch_ns);
        Ok((ns, ()))
    })?;
    // Each timed run's total with its dispatches (the first was the warm-up).
    let runs = times
        .into_iter()
        .zip(per_dispatch.into_iter().skip(1))
        .collect();
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
        return Err(BenchError::Mismatch(format!(
            "the GPU's {} transform differs from the CPU's at row {}, column {}: expected {:?}, got {:?}",
            if inverse { "inverse" } else { "forward" },
            i / size,
            i % size,
            expected[i],
            got[i]
        )));
    }
    Ok(Timed {
        runs,
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
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
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
    use super::*;

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

    /// The job's bytes are one read of 8-bit samples and one write of
    /// 32-bit coefficients; the transform's own count is the levels' read
    /// and write at 32 bits (a 64x64 image, 2 levels: 64² + 32²).
    #[test]
    fn byte_counts_follow_the_widths() {
        assert_eq!(job_bytes(64 * 64), 5 * 64 * 64);
        assert_eq!(bytes_per_transform(64, 2), 8 * (64 * 64 + 32 * 32));
    }
}
