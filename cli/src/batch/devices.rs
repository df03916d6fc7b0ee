//! The coders of a batch: one backend chosen per file as a single-file
//! command chooses it (`--backend`, `auto`'s rule), or one worker per entry
//! of `--devices all|0,1,...`.
//!
//! Each distinct index of `--devices` opens its own [`Gpu`] ([`Gpu::open`]);
//! an index listed twice runs two workers on that one device, so that one
//! file's transfers and host-side stages overlap another's kernels. Their
//! per-file `--json` `transfers` (and which stages read `gpu`) then count
//! both workers' traffic on the device, since a `Gpu`'s counters are the
//! device's; the totals of `bench codec --frames` stay exact.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use wavelane::backend::auto::Choice;
use wavelane::backend::{Backend, BackendKind, Gpu, Job};

use super::super::CliError;
use super::start::{select_backend, DeviceStart, EarlyOpen};

/// `--devices`: every hardware device, or these indices (as `wavelane
/// devices` lists them; repeats allowed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceList {
    /// Every device that is not a software one (lavapipe), or every device
    /// where all are software.
    All,
    /// These indices, one worker each.
    Indices(Vec<usize>),
}

/// Parses `--devices` (`all` or comma-separated indices).
pub fn parse_devices(s: &str) -> Result<DeviceList, String> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(DeviceList::All);
    }
    let indices = s
        .split(',')
        .map(|p| p.trim().parse::<usize>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| format!("{s:?} is not `all` nor a list of device indices such as 0,1"))?;
    Ok(DeviceList::Indices(indices))
}

impl DeviceList {
    /// The indices to run workers on, checked against the devices there are.
    pub(crate) fn resolve(&self) -> Result<Vec<usize>, CliError> {
        let (devices, _) = Gpu::list()?;
        let listing = || {
            devices
                .iter()
                .map(|(i, name, ty)| format!("{i}: {name} ({ty})"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            DeviceList::All => {
                let hardware: Vec<usize> = devices
                    .iter()
                    .filter(|(_, _, ty)| ty != wavelane::backend::SOFTWARE_DEVICE_TYPE)
                    .map(|(i, _, _)| *i)
                    .collect();
                Ok(if hardware.is_empty() {
                    devices.iter().map(|(i, _, _)| *i).collect()
                } else {
                    hardware
                })
            }
            DeviceList::Indices(list) => {
                if let Some(bad) = list.iter().find(|i| !devices.iter().any(|d| d.0 == **i)) {
                    return Err(format!(
                        "--devices: there is no device {bad} (devices: {}; `wavelane devices` lists them)",
                        listing()
                    )
                    .into());
                }
                Ok(list.clone())
            }
        }
    }

    /// How `--json` names this choice.
    pub(crate) fn describe(indices: &[usize]) -> String {
        let list: Vec<String> = indices.iter().map(usize::to_string).collect();
        format!("--devices {}", list.join(","))
    }
}

/// One coder of a batch.
pub(crate) enum Coder {
    /// The backend is selected for each file from its job, as for a single
    /// file; the shared GPU may be opening meanwhile (`opening`).
    Select {
        kind: BackendKind,
        opening: Option<JoinHandle<f64>>,
    },
    /// A device of `--devices` (or a backend opened once, [`Coder::fixed`]).
    Device {
        backend: Backend,
        /// Its start-up, reported with the worker's first file.
        start: Option<DeviceStart>,
        reason: String,
    },
}

impl Coder {
    /// The coder of a batch without `--devices`; with `open_early` the
    /// shared GPU starts opening now, while the first input is read.
    pub(crate) fn select(kind: BackendKind, open_early: bool) -> Coder {
        let opening = open_early.then(|| {
            std::thread::spawn(|| {
                let t = Instant::now();
                // An error is kept by `Gpu::shared` and reported by the
                // selection, which knows whether `auto` may fall back.
                let _ = Gpu::shared();
                t.elapsed().as_secs_f64()
            })
        });
        Coder::Select { kind, opening }
    }

    /// A coder on `backend` for every file, opened by the caller.
    pub(crate) fn fixed(backend: Backend, reason: String) -> Coder {
        Coder::Device {
            backend,
            start: None,
            reason,
        }
    }

    /// Where this coder runs, for reports.
    pub(crate) fn describe(&self) -> String {
        match self {
            Coder::Device { backend, .. } => backend.describe(),
            Coder::Select { kind, .. } => format!("--backend {kind}, chosen per file"),
        }
    }

    /// The GPU this coder runs on, where it holds one.
    pub(crate) fn gpu(&self) -> Option<&Arc<Gpu>> {
        match self {
            Coder::Device { backend, .. } => backend.gpu(),
            Coder::Select { .. } => None,
        }
    }

    /// One coder per entry of `indices`, each distinct device opened once
    /// (in parallel: start-up is mostly the driver's, per device).
    pub(crate) fn devices(indices: &[usize], kind: BackendKind) -> Result<Vec<Coder>, CliError> {
        if kind == BackendKind::Cpu {
            return Err("--devices runs on GPUs; it conflicts with --backend cpu".into());
        }
        let mut distinct = indices.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        let opened: Vec<(usize, Arc<Gpu>, f64)> = std::thread::scope(|s| {
            let handles: Vec<_> = distinct
                .iter()
                .map(|&i| {
                    s.spawn(move || {
                        let t = Instant::now();
                        Gpu::open(i).map(|g| (i, g, t.elapsed().as_secs_f64()))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("device opening panicked"))
                .collect::<Result<_, _>>()
        })
        .map_err(|e| format!("--devices: {e}"))?;
        let reason = DeviceList::describe(indices);
        Ok(indices
            .iter()
            .enumerate()
            .map(|(k, i)| {
                let (_, gpu, seconds) = opened.iter().find(|o| o.0 == *i).expect("opened");
                // The device's start-up goes with the first worker's first
                // file; a second worker on it found it open.
                let first = indices.iter().position(|j| j == i) == Some(k);
                let seconds = if first { *seconds } else { 0.0 };
                Coder::Device {
                    backend: Backend::Gpu(gpu.clone()),
                    start: Some(DeviceStart {
                        seconds,
                        while_reading: false,
                        waited_seconds: seconds,
                    }),
                    reason: reason.clone(),
                }
            })
            .collect())
    }

    /// The backend for `job`, how its device started (for this file) and
    /// why it is what it is.
    pub(crate) fn backend(&mut self, job: Job) -> Result<(Backend, DeviceStart, Choice), CliError> {
        match self {
            Coder::Select { kind, opening } => {
                let early = opening.take().map(|h| {
                    let t = Instant::now();
                    let seconds = h.join().unwrap_or(f64::NAN);
                    EarlyOpen {
                        seconds,
                        waited: t.elapsed().as_secs_f64(),
                    }
                });
                select_backend(*kind, job, early)
            }
            Coder::Device {
                backend,
                start,
                reason,
            } => {
                let start = start.take().unwrap_or(DeviceStart {
                    seconds: 0.0,
                    while_reading: false,
                    waited_seconds: 0.0,
                });
                let choice = Choice {
                    asked: backend.kind(),
                    chose: backend.kind(),
                    reason: reason.clone(),
                };
                Ok((backend.clone(), start, choice))
            }
        }
    }
}
