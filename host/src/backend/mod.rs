//! Where work runs: on all CPU cores ([`Backend::Cpu`], rayon) or, with the
//! `gpu` feature, on a Vulkan device (`Backend::Gpu`, vulkano). Both run the
//! same algorithms and give the same bytes.
//!
//! A build without the `gpu` feature still knows [`BackendKind::Gpu`], so
//! that `--backend gpu` parses everywhere; selecting it is then the typed
//! error [`BackendError::GpuNotBuilt`], and `auto` takes the CPU.
//!
//! The library prints nothing: the one-line notices of `auto` falling back
//! to the CPU go through the `log` facade (level `info`), which the
//! command-line tool prints to stderr.

pub mod auto;
pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod simd;

#[cfg(feature = "gpu")]
use std::sync::Arc;

pub use auto::Job;
#[cfg(feature = "gpu")]
pub use gpu::{Gpu, GpuError};

/// Environment variable that overrides device selection: a device index (as
/// listed by `wavelane devices`) or a case-insensitive substring of its name.
/// Naming a device also makes `auto` take it whatever the job's size.
pub const DEVICE_ENV: &str = "WAVELANE_DEVICE";

/// The backend a user asks for (`--backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
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

impl BackendKind {
    /// Every kind, in the order `--help` lists them.
    pub const ALL: [BackendKind; 3] = [BackendKind::Cpu, BackendKind::Gpu, BackendKind::Auto];

    /// The name `--backend` takes: `cpu`, `gpu` or `auto`.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Gpu => "gpu",
            BackendKind::Auto => "auto",
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not `cpu`, `gpu` or `auto`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown backend {0:?} (expected cpu, gpu or auto)")]
pub struct UnknownBackend(pub String);

impl std::str::FromStr for BackendKind {
    type Err = UnknownBackend;

    /// Parses a [`BackendKind::name`], ignoring ASCII case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        BackendKind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownBackend(s.to_string()))
    }
}

/// Errors selecting a backend.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// `--backend gpu` was asked for and no Vulkan device could be opened.
    #[cfg(feature = "gpu")]
    #[error("--backend gpu: {0}")]
    GpuUnavailable(#[source] GpuError),
    /// `--backend gpu` was asked for of a build without the `gpu` feature.
    #[error("--backend gpu: wavelane was built without the gpu feature")]
    GpuNotBuilt,
}

/// A backend ready to run work.
#[derive(Debug, Clone)]
pub enum Backend {
    /// All CPU cores.
    Cpu,
    /// A Vulkan device.
    #[cfg(feature = "gpu")]
    Gpu(Arc<Gpu>),
}

/// `GpuInfo::device_type` of a CPU-emulated Vulkan device (lavapipe).
pub const SOFTWARE_DEVICE_TYPE: &str = "Cpu";

impl Backend {
    /// Opens the backend for `kind`. With [`BackendKind::Auto`] a missing
    /// GPU is not an error: it logs one notice (`info`) and uses the CPU; so
    /// does a software-only Vulkan device unless `WAVELANE_DEVICE` picks it.
    pub fn select(kind: BackendKind) -> Result<Backend, BackendError> {
        match kind {
            BackendKind::Cpu => Ok(Backend::Cpu),
            BackendKind::Gpu => Backend::open_gpu(),
            BackendKind::Auto => Ok(Backend::auto_gpu().unwrap_or(Backend::Cpu)),
        }
    }

    #[cfg(feature = "gpu")]
    fn open_gpu() -> Result<Backend, BackendError> {
        Gpu::shared()
            .map(Backend::Gpu)
            .map_err(BackendError::GpuUnavailable)
    }

    #[cfg(not(feature = "gpu"))]
    fn open_gpu() -> Result<Backend, BackendError> {
        Err(BackendError::GpuNotBuilt)
    }

    /// The GPU `auto` takes, or `None` (with a notice) for the CPU.
    #[cfg(feature = "gpu")]
    fn auto_gpu() -> Option<Backend> {
        match Gpu::shared() {
            // A software Vulkan device (lavapipe) emulates the GPU on the
            // CPU, far slower than the CPU backend: `auto` takes it only
            // when the user picked it with WAVELANE_DEVICE.
            Ok(gpu)
                if gpu.info().device_type == SOFTWARE_DEVICE_TYPE
                    && std::env::var_os(DEVICE_ENV).is_none() =>
            {
                log::info!(
                    "only a software Vulkan device ({}); using the CPU backend \
                     (--backend gpu or {DEVICE_ENV}=... uses it)",
                    gpu.info().name,
                );
                None
            }
            Ok(gpu) => Some(Backend::Gpu(gpu)),
            Err(e) => {
                log::info!("no GPU ({e}); using the CPU backend");
                None
            }
        }
    }

    /// Without the `gpu` feature `auto` is the CPU, quietly: no device was
    /// asked for that could be missing.
    #[cfg(not(feature = "gpu"))]
    fn auto_gpu() -> Option<Backend> {
        None
    }

    /// Like [`Backend::select`], but `auto` first weighs `job`: where the
    /// GPU backend would not finish first on this many CPU threads
    /// ([`auto::prefers_gpu`]), it takes the CPU without opening a device
    /// and without a notice. A device named with `WAVELANE_DEVICE` is used
    /// whatever the size: naming one asks for it.
    pub fn select_for(kind: BackendKind, job: Job) -> Result<Backend, BackendError> {
        let named = std::env::var_os(DEVICE_ENV).is_some();
        if kind == BackendKind::Auto && !named && !auto::prefers_gpu(job, cpu::threads()) {
            return Ok(Backend::Cpu);
        }
        Backend::select(kind)
    }

    /// A short human-readable name: `cpu (N threads)` or `gpu (device name)`.
    pub fn describe(&self) -> String {
        match self {
            Backend::Cpu => format!("cpu ({} threads)", cpu::threads()),
            #[cfg(feature = "gpu")]
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
            #[cfg(feature = "gpu")]
            Backend::Gpu(_) => BackendKind::Gpu,
        }
    }

    /// The GPU, when this is the GPU backend.
    #[cfg(feature = "gpu")]
    pub fn gpu(&self) -> Option<&Arc<Gpu>> {
        match self {
            Backend::Gpu(g) => Some(g),
            Backend::Cpu => None,
        }
    }
}
