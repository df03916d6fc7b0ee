//! Throughput measurement, one home for `wavelane bench` and the criterion
//! benches in `host/benches/` (feature `bench`): the command line only
//! parses arguments and prints what these functions measure.
//!
//! - [`stats`]: the one statistic every benchmark reports, the best and the
//!   median of its repeats. The best is the figure compared across runs
//!   (the least disturbed by other work on the machine); the median shows
//!   how noisy the runs were.
//! - [`copy_reference`]: the copy bandwidth each throughput is set against,
//!   measured in the same run on the same backend, so that a figure reads
//!   as a fraction of what the memory system can move.
//! - [`bpc`] and [`cavlc`]: the BPC-PaCo and CAVLC measurements, each of
//!   which checks every timed result against the CPU's bytes.

pub mod bpc;
pub mod cavlc;

use std::time::Instant;

use crate::backend::Backend;

/// Best and median of a set of timings, in the timings' unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// The smallest.
    pub best: f64,
    /// The middle one (the upper of the two middle ones for an even count).
    pub median: f64,
}

/// The [`Stats`] of `times`; NaN for no times (a report then shows that
/// nothing was timed, where a panic would lose the other results).
pub fn stats(mut times: Vec<f64>) -> Stats {
    times.sort_by(f64::total_cmp);
    Stats {
        best: times.first().copied().unwrap_or(f64::NAN),
        median: times.get(times.len() / 2).copied().unwrap_or(f64::NAN),
    }
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
                median: 5.0
            }
        );
        let s = stats(vec![4.0, 2.0]);
        assert_eq!(
            s,
            Stats {
                best: 2.0,
                median: 4.0
            }
        );
        let none = stats(Vec::new());
        assert!(none.best.is_nan() && none.median.is_nan());
    }

    #[test]
    fn the_cpu_copy_reference_is_a_positive_time() {
        let copy = copy_reference(&Backend::Cpu, 1 << 20, 2, "a buffer").unwrap();
        assert!(copy.ns > 0.0 && copy.ns.is_finite(), "{copy:?}");
        assert_eq!(copy.method, "copy_from_slice of a buffer, one thread");
    }
}
