//! Clock warm-up for benchmarks.
//!
//! A GPU left idle drops its clocks within a fraction of a second and needs
//! a similar time under load to raise them. A benchmark that pauses between
//! timed submissions (to download and check a result, to prepare the next
//! input) therefore times its kernels at whatever clock the pause left: on
//! an H200 the SM clock was seen at 360-855 MHz instead of 1980 MHz during
//! the BPC-PaCo runs at 8192², which made them 3-4x slower than the 4096²
//! runs (docs/perf/README.md). With a warm-up set, every timed submission
//! first runs `shaders/util/busy.comp` for about the given device time, before
//! its first timestamp, so the timed work starts at full clocks and the
//! warm-up is not part of any timing.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use vulkano::buffer::Subbuffer;
use vulkano::command_buffer::{AutoCommandBufferBuilder, PrimaryAutoCommandBuffer};
use vulkano::device::physical::PhysicalDeviceType;

use super::{Dispatch, Gpu, GpuError};
use crate::shaders;

/// Workgroups of a warm-up dispatch (256 invocations each): enough to fill
/// every SM of a large GPU several times over.
const GROUPS: u32 = 4096;
/// Loop iterations of the calibration dispatches.
const CALIBRATION_ITERATIONS: u32 = 1 << 12;
/// Most iterations a warm-up dispatch is given.
const MAX_ITERATIONS: u32 = 1 << 24;

/// The warm-up state of a [`Gpu`].
#[derive(Default)]
pub(super) struct ClockWarmUp {
    /// Loop iterations of the busy kernel; 0 = no warm-up.
    iterations: AtomicU32,
    /// The busy kernel's (almost never written) output.
    sink: OnceLock<Subbuffer<[u32]>>,
}

impl Gpu {
    /// From now on, records a busy kernel of about `duration` of device time
    /// (at full clocks) ahead of every timed submission, outside the
    /// timings; `Duration::ZERO` turns it off. For benchmarks only: it costs
    /// `duration` per [`Gpu::run`]. A CPU device (lavapipe) runs at the
    /// host's clocks and gets no warm-up. Returns the busy kernel's
    /// iteration count (0 when off).
    pub fn set_clock_warm_up(&self, duration: Duration) -> Result<u32, GpuError> {
        self.warm.iterations.store(0, Ordering::Relaxed);
        let cpu_device =
            self.device.physical_device().properties().device_type == PhysicalDeviceType::Cpu;
        if duration.is_zero() || cpu_device {
            return Ok(0);
        }
        // Calibrate: time the kernel at a fixed iteration count until the
        // clocks have risen (the fastest of several runs), then scale.
        let mut best_ns = f64::INFINITY;
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(300) {
            let t = self.busy(CALIBRATION_ITERATIONS)?;
            match t.dispatch_ns.first() {
                Some(&ns) if ns > 0.0 => best_ns = best_ns.min(ns),
                // No timestamps: nothing to warm up for.
                _ => return Ok(0),
            }
        }
        let per_iteration = best_ns / CALIBRATION_ITERATIONS as f64;
        let iterations =
            (duration.as_nanos() as f64 / per_iteration).clamp(1.0, MAX_ITERATIONS as f64) as u32;
        self.warm.iterations.store(iterations, Ordering::Relaxed);
        Ok(iterations)
    }

    /// Runs `f` with the clock warm-up off, then restores it: for wall-clock
    /// (end-to-end) timings, which must not include it.
    pub fn without_clock_warm_up<T>(&self, f: impl FnOnce() -> T) -> T {
        let saved = self.warm.iterations.swap(0, Ordering::Relaxed);
        let out = f();
        self.warm.iterations.store(saved, Ordering::Relaxed);
        out
    }

    /// Runs the warm-up's busy kernel once with `iterations` loop iterations
    /// per invocation (what [`Gpu::set_clock_warm_up`] calibrates with).
    pub fn busy(&self, iterations: u32) -> Result<super::Timing, GpuError> {
        self.run(&[self.busy_dispatch(iterations)?])
    }

    /// Records the warm-up, if one is set (see [`Gpu::set_clock_warm_up`]).
    pub(super) fn record_warm_up(
        &self,
        b: &mut AutoCommandBufferBuilder<PrimaryAutoCommandBuffer>,
    ) -> Result<(), GpuError> {
        let iterations = self.warm.iterations.load(Ordering::Relaxed);
        if iterations == 0 {
            return Ok(());
        }
        let d = self.busy_dispatch(iterations)?;
        let pipeline = self.pipeline(&shaders::BUSY, &[])?;
        self.record_dispatch(b, &pipeline, &d)
    }

    fn busy_dispatch(&self, iterations: u32) -> Result<Dispatch, GpuError> {
        let sink = match self.warm.sink.get() {
            Some(s) => s.clone(),
            None => {
                let s = self.zeroed::<u32>(1)?;
                self.warm.sink.get_or_init(|| s).clone()
            }
        };
        Ok(Dispatch::new(&shaders::BUSY, [GROUPS, 1, 1])
            .buffer(&sink)
            .push(&[iterations]))
    }
}
