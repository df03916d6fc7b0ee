//! Where work runs: on all CPU cores ([`Backend::Cpu`], rayon) or on a Vulkan
//! device ([`Backend::Gpu`], vulkano). Both run the same algorithms and give
//! the same bytes.

pub mod auto;
pub mod cpu;
pub mod gpu;
pub mod simd;

use std::sync::Arc;

pub use auto::Job;
pub use gpu::{Gpu, GpuError};

/// The backend a user asks for (`--backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// All CPU cores (rayon).
    Cpu,
    /// A Vulkan compute device; an error if there is none.
    Gpu,
    /// A hardware GPU if one can be opened, else the CPU with a one-line
    /// notice (a software Vulkan device such as lavapipe only when chosen
    /// with `WAVELANE_DEVICE`). Commands that know the size of their job
    /// ([`Backend::select_for`]) take the CPU without opening a device when
    /// the job is too small for the GPU to finish first ([`auto`]).
    #[default]
    Auto,
}

/// Errors selecting a backend.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// `--backend gpu` was asked for and no Vulkan device could be opened.
    #[error("--backend gpu: {0}")]
    GpuUnavailable(#[source] GpuError),
}

/// A backend ready to run work.
#[derive(Debug, Clone)]
pub enum Backend {
    /// All CPU cores.
    Cpu,
    /// A Vulkan device.
    Gpu(Arc<Gpu>),
}

/// `GpuInfo::device_type` of a CPU-emulated Vulkan device (lavapipe).
pub const SOFTWARE_DEVICE_TYPE: &str = "Cpu";

impl Backend {
    /// Opens the backend for `kind`. With [`BackendKind::Auto`] a missing
    /// GPU is not an error: it prints one notice to stderr and uses the CPU;
    /// so does a software-only Vulkan device unless `WAVELANE_DEVICE` picks
    /// it.
    pub fn select(kind: BackendKind) -> Result<Backend, BackendError> {
        match kind {
            BackendKind::Cpu => Ok(Backend::Cpu),
            BackendKind::Gpu => Gpu::shared()
                .map(Backend::Gpu)
                .map_err(BackendError::GpuUnavailable),
            BackendKind::Auto => Ok(match Gpu::shared() {
                // A software Vulkan device (lavapipe) emulates the GPU on
                // the CPU, far slower than the CPU backend: `auto` takes it
                // only when the user picked it with WAVELANE_DEVICE.
                Ok(gpu)
                    if gpu.info().device_type == SOFTWARE_DEVICE_TYPE
                        && std::env::var_os(gpu::DEVICE_ENV).is_none() =>
                {
                    eprintln!(
                        "wavelane: only a software Vulkan device ({}); using the CPU backend \
                         (--backend gpu or {}=... uses it)",
                        gpu.info().name,
                        gpu::DEVICE_ENV
                    );
                    Backend::Cpu
                }
                Ok(gpu) => Backend::Gpu(gpu),
                Err(e) => {
                    eprintln!("wavelane: no GPU ({e}); using the CPU backend");
                    Backend::Cpu
                }
            }),
        }
    }

    /// Like [`Backend::select`], but `auto` first weighs `job`: where the
    /// GPU backend would not finish first on this many CPU threads
    /// ([`auto::prefers_gpu`]), it takes the CPU without opening a device
    /// and without a notice. A device named with `WAVELANE_DEVICE` is used
    /// whatever the size: naming one asks for it.
    pub fn select_for(kind: BackendKind, job: Job) -> Result<Backend, BackendError> {
        let named = std::env::var_os(gpu::DEVICE_ENV).is_some();
        if kind == BackendKind::Auto && !named && !auto::prefers_gpu(job, cpu::threads()) {
            return Ok(Backend::Cpu);
        }
        Backend::select(kind)
    }

    /// A short human-readable name: `cpu (N threads)` or `gpu (device name)`.
    pub fn describe(&self) -> String {
        match self {
            Backend::Cpu => format!("cpu ({} threads)", cpu::threads()),
            Backend::Gpu(g) => format!(
                "gpu ({}, subgroup {})",
                g.info().name,
                g.info().subgroup_size
            ),
        }
    }

    /// `"cpu"` or `"gpu"`.
    pub fn kind(&self) -> BackendKind {
        match self {
            Backend::Cpu => BackendKind::Cpu,
            Backend::Gpu(_) => BackendKind::Gpu,
        }
    }

    /// The GPU, when this is the GPU backend.
    pub fn gpu(&self) -> Option<&Arc<Gpu>> {
        match self {
            Backend::Gpu(g) => Some(g),
            Backend::Cpu => None,
        }
    }
}
