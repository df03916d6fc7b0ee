//! When `--backend auto` takes the GPU: only for jobs big enough that the
//! GPU backend finishes first end to end. A GPU command pays ~0.3-0.45 s of
//! device start-up before any work (driver, pipelines, staging) and moves
//! every plane across the bus, so small jobs are faster on the CPU, and how
//! small depends on how many CPU threads there are.
//!
//! The crossovers below are measured (docs/perf/codec.md, "Where `auto`
//! takes the GPU"): whole command lines on 768² to 6144² RGB images and a
//! 113 MB VLE input, the process pinned to 2, 4 and 16 cores of an H200
//! host. Between the measured thread counts the crossover is interpolated
//! geometrically; past 16 threads it grows in proportion, below 2 it
//! shrinks in proportion.
//!
//! [`Choice`] says what a command chose and why, for its `--json` report.
//! The crossovers were measured before the stages moved onto the device;
//! as they do, `wavelane bench codec` on the lent GPU and the CPU gives the
//! figures to measure them again from (docs/perf/codec.md).

use super::BackendKind;

/// Where the measurements behind the crossovers are, for reports.
pub const MEASURED_IN: &str = "docs/perf/codec.md, \"Where `auto` takes the GPU\"";

/// What a command is about to run, for `auto` to weigh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// Encoding an image of `samples` samples (width x height x components).
    Encode {
        /// Samples of the image.
        samples: u64,
        /// A lossless single-layer target, which keeps every pass: no
        /// rate control, so the GPU's lead comes sooner (every stage runs
        /// on the device for both kinds of target).
        lossless: bool,
    },
    /// Decoding `samples` samples (after `--reduce`).
    Decode {
        /// Samples decoded.
        samples: u64,
        /// The file uses the reversible 5/3 (lossless files and their
        /// truncations), whose decoding gains most on the GPU.
        reversible: bool,
    },
    /// Compressing or decompressing a VLE file.
    Vle,
}

/// Measured crossovers in samples at 2, 4 and 16 CPU threads, or `None`
/// where the GPU backend finished first in no measured case.
fn crossovers(job: Job) -> Option<[f64; 3]> {
    match job {
        Job::Encode { lossless: true, .. } => Some([9e6, 16e6, 55e6]),
        // Generated (noisy) images, the GPU's worst case: their coding
        // passes give rate control the most candidate cuts to weigh.
        Job::Encode {
            lossless: false, ..
        } => Some([1.8e6, 3.1e6, 9e6]),
        Job::Decode {
            reversible: true, ..
        } => Some([8.5e6, 14.5e6, 27e6]),
        Job::Decode {
            reversible: false, ..
        } => Some([13.5e6, 20e6, 31e6]),
        // Transfer-bound: 0.8-1.3 s on the GPU against 0.2-0.55 s on the
        // CPU for 113 MB, at every thread count.
        Job::Vle => None,
    }
}

/// Samples from which the GPU backend is expected to finish first with
/// `threads` CPU threads, or `None` if never.
pub fn gpu_threshold(job: Job, threads: usize) -> Option<f64> {
    let [c2, c4, c16] = crossovers(job)?;
    let t = threads.max(1) as f64;
    Some(if t <= 2.0 {
        c2 * t / 2.0
    } else if t <= 4.0 {
        c2 * (c4 / c2).powf((t / 2.0).log2())
    } else if t <= 16.0 {
        c4 * (c16 / c4).powf((t / 4.0).log2() / 2.0)
    } else {
        c16 * t / 16.0
    })
}

/// Whether `auto` should take a hardware GPU for `job` on `threads` CPU
/// threads.
pub fn prefers_gpu(job: Job, threads: usize) -> bool {
    let samples = match job {
        Job::Encode { samples, .. } | Job::Decode { samples, .. } => samples,
        Job::Vle => return false,
    };
    gpu_threshold(job, threads).is_some_and(|limit| samples as f64 >= limit)
}

/// What a command asked for, what it got, and why: the `backend_choice`
/// of `encode` and `decode`'s `--json` reports.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Choice {
    /// `--backend`.
    pub asked: BackendKind,
    /// The backend the command runs on.
    pub chose: BackendKind,
    /// Why, in one sentence.
    pub reason: String,
}

impl Choice {
    /// Explains the choice of `chose` for `job` when `asked` was given,
    /// with `threads` CPU threads and `named` when `WAVELANE_DEVICE` names a
    /// device (the rules of `Backend::select_for`).
    pub fn explain(
        asked: BackendKind,
        chose: BackendKind,
        job: Job,
        threads: usize,
        named: bool,
    ) -> Choice {
        let samples = match job {
            Job::Encode { samples, .. } | Job::Decode { samples, .. } => Some(samples),
            Job::Vle => None,
        };
        let what = samples.map_or("this job".to_string(), |s| format!("{s} samples"));
        let reason = match asked {
            BackendKind::Cpu | BackendKind::Gpu => format!("--backend {asked}"),
            BackendKind::Auto if named => {
                "auto: WAVELANE_DEVICE names a device, which is used whatever the job's size"
                    .to_string()
            }
            BackendKind::Auto => match gpu_threshold(job, threads) {
                None => format!(
                    "auto: the GPU backend finished first for no measured job of this kind \
                     ({MEASURED_IN})"
                ),
                Some(limit) if !prefers_gpu(job, threads) => format!(
                    "auto: {what}, below the crossover of {limit:.0} samples for {threads} CPU \
                     threads ({MEASURED_IN})"
                ),
                Some(limit) if chose == BackendKind::Gpu => format!(
                    "auto: {what}, at or above the crossover of {limit:.0} samples for \
                     {threads} CPU threads ({MEASURED_IN})"
                ),
                Some(_) => "auto: the job is large enough for the GPU, but no hardware GPU \
                     could be opened (see the notice on stderr)"
                    .to_string(),
            },
        };
        Choice {
            asked,
            chose,
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOSSLESS: fn(u64) -> Job = |samples| Job::Encode {
        samples,
        lossless: true,
    };

    #[test]
    fn measured_points_are_the_crossovers() {
        assert_eq!(gpu_threshold(LOSSLESS(0), 2), Some(9e6));
        assert_eq!(gpu_threshold(LOSSLESS(0), 4), Some(16e6));
        assert!((gpu_threshold(LOSSLESS(0), 16).unwrap() - 55e6).abs() < 1.0);
        // The measured cases land on the side they were measured on (CPU
        // ms against GPU ms plus the device's start-up, docs/perf/codec.md).
        let rgb = |side: u64| side * side * 3;
        assert!(prefers_gpu(LOSSLESS(rgb(2048)), 2)); // 10 + 160 vs 228
        assert!(!prefers_gpu(LOSSLESS(rgb(1024)), 2)); // 6 + 157 vs 63
        assert!(!prefers_gpu(LOSSLESS(rgb(2048)), 4)); // 11 + 168 vs 137
        assert!(prefers_gpu(LOSSLESS(rgb(3072)), 4)); // 15 + 152 vs 279
        assert!(!prefers_gpu(LOSSLESS(rgb(4096)), 16)); // 22 + 153 vs 165
        let dec = |side: u64| Job::Decode {
            samples: rgb(side),
            reversible: true,
        };
        assert!(prefers_gpu(dec(3072), 16)); // 18 + 138 vs 161
        assert!(!prefers_gpu(dec(2048), 16)); // 12 + 145 vs 66
        assert!(prefers_gpu(dec(2048), 2)); // 11 + 160 vs 240
        assert!(!prefers_gpu(dec(2048), 4)); // 11 + 168 vs 151
        let lossy = |side: u64| Job::Encode {
            samples: rgb(side),
            lossless: false,
        };
        assert!(prefers_gpu(lossy(1024), 2)); // 21 + 151 vs 294
        assert!(!prefers_gpu(lossy(1024), 16)); // 21 + 127 vs 47
        assert!(prefers_gpu(lossy(2048), 16)); // 37 + 164 vs 221
        let dec97 = |side: u64| Job::Decode {
            samples: rgb(side),
            reversible: false,
        };
        assert!(!prefers_gpu(dec97(2048), 2)); // 9 + 154 vs 141
        assert!(prefers_gpu(dec97(3072), 2)); // 15 + 135 vs 381
        assert!(!prefers_gpu(dec97(3072), 16)); // 9 + 140 vs 130
        assert!(prefers_gpu(dec97(4096), 16)); // 14 + 143 vs 285
    }

    #[test]
    fn thresholds_grow_with_threads_and_never_where_unmeasured() {
        let mut last = 0.0;
        for t in 1..=64 {
            let v = gpu_threshold(LOSSLESS(0), t).unwrap();
            assert!(v > last, "{t} threads: {v} after {last}");
            last = v;
        }
        assert!(!prefers_gpu(Job::Vle, 1));
        assert!(prefers_gpu(LOSSLESS(u64::MAX), 1024));
    }

    #[test]
    fn a_choice_names_its_rule() {
        use BackendKind::{Auto, Cpu, Gpu};
        let small = LOSSLESS(1000);
        let c = Choice::explain(Cpu, Cpu, small, 2, false);
        assert_eq!(c.reason, "--backend cpu");
        let c = Choice::explain(Auto, Cpu, small, 2, false);
        assert!(
            c.reason
                .contains("below the crossover of 9000000 samples for 2"),
            "{}",
            c.reason
        );
        assert!(c.reason.contains(MEASURED_IN), "{}", c.reason);
        let big = LOSSLESS(20_000_000);
        let c = Choice::explain(Auto, Gpu, big, 2, false);
        assert!(c.reason.contains("at or above"), "{}", c.reason);
        let c = Choice::explain(Auto, Cpu, big, 2, false);
        assert!(c.reason.contains("no hardware GPU"), "{}", c.reason);
        let c = Choice::explain(Auto, Gpu, small, 2, true);
        assert!(c.reason.contains("WAVELANE_DEVICE"), "{}", c.reason);
        let c = Choice::explain(Auto, Cpu, Job::Vle, 16, false);
        assert!(c.reason.contains("no measured job"), "{}", c.reason);
    }
}
