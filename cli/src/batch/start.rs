//! How a command's device starts: the GPU opens on another thread while the
//! first input is read ([`Coder::select`](super::devices::Coder::select)), and `--json` says how long it
//! took and why the backend is what it is ([`select_backend`]).

use std::time::Instant;

use wavelane::backend::auto::{self, Choice};
use wavelane::backend::{cpu, Backend, BackendKind, Job, DEVICE_ENV};

use super::super::CliError;

/// How a command's device started: opened on another thread while the
/// input was read (`while_reading`), or when the backend was selected.
/// `--json` reports it apart from the codec's stages, so that a stage's
/// time never holds the device's start-up.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub(crate) struct DeviceStart {
    /// Seconds opening the device took (0 where it was open already, as
    /// for the second file of a batch).
    pub seconds: f64,
    /// It was opened while the input was read.
    pub while_reading: bool,
    /// Seconds the command waited for it after reading its input.
    pub waited_seconds: f64,
}

/// A device opening started while the input was read
/// ([`Coder::select`](super::devices::Coder::select)).
pub(crate) struct EarlyOpen {
    pub(crate) seconds: f64,
    pub(crate) waited: f64,
}

/// Whether a command asked for `kind` should open the GPU while it reads
/// its input: for `gpu`, and for `auto` where `job` (from the input's
/// header, when it could be read without the rest) is one `auto` would
/// take the GPU for. The selection itself is made from the whole input.
pub(crate) fn open_early(kind: BackendKind, job: Option<Job>) -> bool {
    match kind {
        BackendKind::Cpu => false,
        BackendKind::Gpu => true,
        BackendKind::Auto => {
            std::env::var_os(DEVICE_ENV).is_some()
                || job.is_some_and(|j| auto::prefers_gpu(j, cpu::threads()))
        }
    }
}

/// [`Backend::select_for`], with how the device started and why the
/// backend is what it is, for `--json`.
pub(crate) fn select_backend(
    kind: BackendKind,
    job: Job,
    early: Option<EarlyOpen>,
) -> Result<(Backend, DeviceStart, Choice), CliError> {
    let t = Instant::now();
    let backend = Backend::select_for(kind, job)?;
    let select = t.elapsed().as_secs_f64();
    let named = std::env::var_os(DEVICE_ENV).is_some();
    let choice = Choice::explain(kind, backend.kind(), job, cpu::threads(), named);
    let start = match (backend.kind(), early) {
        (BackendKind::Gpu, Some(e)) => DeviceStart {
            seconds: e.seconds,
            while_reading: true,
            waited_seconds: e.waited + select,
        },
        (BackendKind::Gpu, None) => DeviceStart {
            seconds: select,
            while_reading: false,
            waited_seconds: select,
        },
        _ => DeviceStart {
            seconds: 0.0,
            while_reading: false,
            waited_seconds: 0.0,
        },
    };
    Ok((backend, start, choice))
}
