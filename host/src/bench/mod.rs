//! Throughput measurement, one home for `wavelane bench` and the criterion
//! benches in `host/benches/` (feature `bench`): the command line only
//! parses arguments and prints what these functions measure.
//!
//! - [`Measurement`]: the one measurement type, the repeats of one timed
//!   operation with the clock that timed them ([`Clock`]: GPU timestamps
//!   around the kernels, or the wall clock around the whole call), and
//!   [`stats`], the one statistic every benchmark reports: the best, the
//!   median and the spread of the repeats. The best is the figure compared
//!   across runs (the least disturbed by other work on the machine); the
//!   median and the spread show how noisy the runs were.
//! - [`repeat`] and [`wall`]: the timing loop every benchmark runs (one
//!   untimed warm-up, then the timed repeats).
//! - [`copy_reference`]: the copy bandwidth each throughput is set against,
//!   measured in the same run on the same backend, so that a figure reads
//!   as a fraction of what the memory system can move.
//! - [`dwt`], [`bpc`], [`vle`], [`cavlc`] and [`codec`]: the measurements
//!   of `wavelane bench dwt|bpc|vle|cavlc|codec`, each of which checks
//!   every timed result against the CPU's (docs/perf/README.md).

pub mod bpc;
pub mod cavlc;
pub mod codec;
pub mod dwt;
pub mod vle;

use std::time::Instant;

use serde::Serialize;

use crate::backend::Backend;

/// Best, median and spread of a set of timings, in the timings' unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    /// The smallest.
    pub best: f64,
    /// The middle one (the upper of the two middle ones for an even count).
    pub median: f64,
    /// (largest - smallest) / smallest: 0.05 means the slowest repeat took
    /// 5% longer than the best.
    pub spread: f64,
}

/// The [`Stats`] of `times`; NaN for no times (a report then shows that
/// nothing was timed, where a panic would lose the other results).
pub fn stats(mut times: Vec<f64>) -> Stats {
    times.sort_by(f64::total_cmp);
    let best = times.first().copied().unwrap_or(f64::NAN);
    let worst = times.last().copied().unwrap_or(f64::NAN);
    Stats {
        best,
        median: times.get(times.len() / 2).copied().unwrap_or(f64::NAN),
        spread: (worst - best) / best,
    }
}

/// What timed a [`Measurement`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// GPU timestamp queries around the dispatches: kernels only, no
    /// transfers, no host work.
    GpuTimestamps,
    /// The host's wall clock around the whole call (on the GPU backend:
    /// uploads, kernels, downloads and host work).
    Wall,
}

/// The repeats of one timed operation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measurement {
    /// What timed it.
    pub clock: Clock,
    /// Nanoseconds of each timed repeat, in the order they ran.
    pub ns: Vec<f64>,
    /// Their statistics, nanoseconds.
    pub stats: Stats,
}

impl Measurement {
    /// The measurement of `ns`, timed by `clock`.
    pub fn new(clock: Clock, ns: Vec<f64>) -> Self {
        let stats = stats(ns.clone());
        Measurement { clock, ns, stats }
    }

    /// The best repeat, milliseconds.
    pub fn best_ms(&self) -> f64 {
        self.stats.best / 1e6
    }

    /// The median repeat, milliseconds.
    pub fn median_ms(&self) -> f64 {
        self.stats.median / 1e6
    }
}

/// Runs `f` once untimed (pipelines, caches, clocks), then `repeats` times;
/// `f` returns the nanoseconds it measured with its result. Returns the
/// timed repeats' nanoseconds and the last result.
pub fn repeat<T, E>(
    repeats: usize,
    mut f: impl FnMut() -> Result<(f64, T), E>,
) -> Result<(Vec<f64>, T), E> {
    let (_, mut last) = f()?;
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let (ns, out) = f()?;
        times.push(ns);
        last = out;
    }
    Ok((times, last))
}

/// `f`'s result and its wall-clock nanoseconds.
pub fn wall<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let out = f();
    (t.elapsed().as_nanos() as f64, out)
}

/// A copy of a buffer, timed as the reference a benchmark's throughput is
/// compared with.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyReference {
    /// Nanoseconds of the best copy.
    pub ns: f64,
    /// How the copy was made and timed, for reports.
    pub method: String,
}

/// Errors of [`copy_reference`].
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    /// The GPU failed.
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Gpu(#[from] crate::backend::GpuError),
    /// The GPU's queue writes no timestamps, so kernels cannot be timed.
    #[error("this GPU queue has no timestamps; cannot time kernels")]
    NoTimestamps,
}

/// Errors of the benchmarks of [`dwt`], [`vle`] and [`codec`].
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A configuration the benchmark cannot run.
    #[error("{0}")]
    Invalid(String),
    /// A timed result differs from the CPU's (the message names where).
    #[error("{0}")]
    Mismatch(String),
    /// The copy reference failed.
    #[error(transparent)]
    Copy(#[from] CopyError),
    /// The DWT failed.
    #[error(transparent)]
    Dwt(#[from] crate::dwt::DwtHostError),
    /// VLE coding failed.
    #[error(transparent)]
    Vle(#[from] crate::vle::VleCodecError),
    /// Building a VLE code failed.
    #[error(transparent)]
    VleCode(#[from] wavelane_core::vle::VleError),
    /// The codec failed.
    #[error(transparent)]
    Codec(#[from] crate::codec::CodecError),
    /// The GPU failed.
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Gpu(#[from] crate::backend::GpuError),
    /// The GPU's queue writes no timestamps, so kernels cannot be timed.
    #[error("this GPU queue has no timestamps; cannot time kernels")]
    NoTimestamps,
}

/// Times a copy of `bytes` bytes on `backend`, best of `repeats` (at least
/// one): `vkCmdCopyBuffer` between device buffers timed with GPU
/// timestamps, or `copy_from_slice` on one CPU thread (after one untimed
/// copy that faults the pages in). `what` names the buffer in
/// [`CopyReference::method`] (`"the image"`, `"the input"`).
pub fn copy_reference(
    backend: &Backend,
    bytes: usize,
    repeats: usize,
    what: &str,
) -> Result<CopyReference, CopyError> {
    match backend {
        Backend::Cpu => {
            let src = vec![1u8; bytes];
            let mut dst = vec![0u8; bytes];
            let mut times = Vec::with_capacity(repeats);
            for i in 0..=repeats.max(1) {
                let t = Instant::now();
                dst.copy_from_slice(&src);
                let ns = t.elapsed().as_nanos() as f64;
                std::hint::black_box(&dst);
                if i > 0 {
                    times.push(ns);
                }
            }
            Ok(CopyReference {
                ns: stats(times).best,
                method: format!("copy_from_slice of {what}, one thread"),
            })
        }
        #[cfg(feature = "gpu")]
        Backend::Gpu(gpu) => Ok(CopyReference {
            ns: gpu
                .time_copy(bytes as u64, repeats.max(1) as u32)?
                .ok_or(CopyError::NoTimestamps)?,
            method: format!("vkCmdCopyBuffer of {what}, GPU timestamps"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_are_the_least_and_the_middle() {
        let s = stats(vec![5.0, 1.0, 9.0, 3.0, 7.0]);
        assert_eq!(
            s,
            Stats {
                best: 1.0,
                median: 5.0,
                spread: 8.0,
            }
        );
        let s = stats(vec![4.0, 2.0]);
        assert_eq!(
            s,
            Stats {
                best: 2.0,
                median: 4.0,
                spread: 1.0,
            }
        );
        let none = stats(Vec::new());
        assert!(none.best.is_nan() && none.median.is_nan() && none.spread.is_nan());
    }

    #[test]
    fn repeat_warms_up_once_then_times_each_repeat() {
        let mut calls = 0;
        let (times, last) = repeat::<_, ()>(3, || {
            calls += 1;
            Ok((calls as f64 * 10.0, calls))
        })
        .unwrap();
        assert_eq!(times, vec![20.0, 30.0, 40.0]);
        assert_eq!(last, 4);
        let m = Measurement::new(Clock::Wall, times);
        assert_eq!(m.stats.best, 20.0);
        assert_eq!(m.best_ms(), 20.0 / 1e6);
    }

    #[test]
    fn the_cpu_copy_reference_is_a_positive_time() {
        let copy = copy_reference(&Backend::Cpu, 1 << 20, 2, "a buffer").unwrap();
        assert!(copy.ns > 0.0 && copy.ns.is_finite(), "{copy:?}");
        assert_eq!(copy.method, "copy_from_slice of a buffer, one thread");
    }
}
