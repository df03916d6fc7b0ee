//! Runs of several files that survive faults: a failed file is reported on
//! stderr as it happens and the others go on; the run then fails with
//! [`BatchFailed`], which `main` turns into exit code
//! [`EXIT_BATCH_FAILED`] (README, "Exit codes"). Also the device start-up
//! the two commands share: the GPU opens on another thread while the input
//! is read ([`read_while_opening`]), and `--json` says how long it took and
//! why the backend is what it is ([`select_backend`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use wavelane::backend::auto::{self, Choice};
use wavelane::backend::{cpu, Backend, BackendKind, Gpu, Job, DEVICE_ENV};

use super::{CliError, CliResult};

/// Exit code of a batch in which some files failed (others may have
/// succeeded). 1 is any other error, 2 a usage error (clap).
pub const EXIT_BATCH_FAILED: u8 = 3;

/// Some files of a batch failed; each was reported when it failed.
#[derive(Debug, thiserror::Error)]
#[error("{failed} of {total} files failed")]
pub struct BatchFailed {
    /// Files that failed.
    pub failed: usize,
    /// Files in the batch.
    pub total: usize,
}

/// Tallies a batch. With one file, its error is the command's error
/// (exit code 1), as for any single-file command.
pub(crate) struct Batch {
    total: usize,
    failed: usize,
    first: Option<CliError>,
}

impl Batch {
    pub(crate) fn new(total: usize) -> Self {
        Batch {
            total,
            failed: 0,
            first: None,
        }
    }

    /// Records the outcome for `input`; prints an error at once (through
    /// `print`, so that a progress bar can step aside).
    pub(crate) fn record(
        &mut self,
        input: &Path,
        result: Result<(), CliError>,
        print: impl FnOnce(&str),
    ) {
        if let Err(e) = result {
            self.failed += 1;
            if self.total > 1 {
                print(&format!("wavelane: error: {}: {e}", input.display()));
            } else {
                self.first = Some(format!("{}: {e}", input.display()).into());
            }
        }
    }

    /// The batch's result.
    pub(crate) fn finish(self) -> Result<(), CliError> {
        match (self.first, self.failed) {
            (Some(e), _) => Err(e),
            (None, 0) => Ok(()),
            (None, failed) => Err(Box::new(BatchFailed {
                failed,
                total: self.total,
            })),
        }
    }
}

/// Runs `one` for each of `inputs` (`encode` and `decode`): with several
/// inputs `output` is a directory of `NAME.ext` files, shown by a files
/// bar. An output that `skip` names a reason for (`--skip-existing`) is
/// skipped; a failed file is reported and the others go on ([`Batch`]);
/// the `--json` reports `one` adds are printed at the end.
pub(crate) fn run_files(
    inputs: &[PathBuf],
    output: &Path,
    ext: &str,
    json: bool,
    skip: impl Fn(&Path) -> Option<&'static str>,
    mut one: impl FnMut(&Path, &Path, &ProgressBar, &mut Vec<serde_json::Value>) -> CliResult,
) -> CliResult {
    let many = inputs.len() > 1;
    if many {
        std::fs::create_dir_all(output)?;
    }
    let bar = files_bar(inputs.len(), json);
    let mut reports = Vec::new();
    let mut batch = Batch::new(inputs.len());
    for input in inputs {
        bar.set_message(input.display().to_string());
        let out = output_path(output, input, many, ext);
        let result = if let Some(reason) = skip(&out) {
            bar.suspend(|| eprintln!("{}: skipped, {} {reason}", input.display(), out.display()));
            Ok(())
        } else {
            one(input, &out, &bar, &mut reports)
        };
        batch.record(input, result, |m| bar.suspend(|| eprintln!("{m}")));
        bar.inc(1);
    }
    bar.finish_and_clear();
    if json {
        print_json(many, reports)?;
    }
    batch.finish()
}

/// Where input `input` goes.
fn output_path(output: &Path, input: &Path, many: bool, ext: &str) -> PathBuf {
    if many {
        let stem = input
            .file_stem()
            .map(|s| s.to_os_string())
            .unwrap_or_else(|| "image".into());
        output.join(Path::new(&stem).with_extension(ext))
    } else {
        output.to_path_buf()
    }
}

/// A progress bar for multi-file runs (hidden for one file or JSON).
fn files_bar(n: usize, json: bool) -> ProgressBar {
    if n > 1 && !json {
        let bar = ProgressBar::new(n as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed} {msg}")
                .expect("valid template"),
        );
        bar
    } else {
        ProgressBar::hidden()
    }
}

/// Prints `--json` reports: an array with one report per input when the
/// command was given several, else the single report (`null` if it failed).
fn print_json(many: bool, mut reports: Vec<serde_json::Value>) -> Result<(), CliError> {
    let v = if many {
        serde_json::Value::Array(reports)
    } else {
        reports.pop().unwrap_or(serde_json::Value::Null)
    };
    println!("{}", serde_json::to_string_pretty(&v)?);
    Ok(())
}

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

/// A device opening started by [`read_while_opening`].
pub(crate) struct EarlyOpen {
    seconds: f64,
    waited: f64,
}

/// Runs `read`, opening the shared GPU on another thread meanwhile when
/// `open` (the device's start-up then overlaps the read; a later
/// [`select_backend`] finds it open, or the error that opening it gave).
pub(crate) fn read_while_opening<T>(
    open: bool,
    read: impl FnOnce() -> T,
) -> (T, Option<EarlyOpen>) {
    if !open {
        return (read(), None);
    }
    std::thread::scope(|s| {
        let opening = s.spawn(|| {
            let t = Instant::now();
            // An error is kept by `Gpu::shared` and reported by the
            // selection, which knows whether `auto` may fall back.
            let _ = Gpu::shared();
            t.elapsed().as_secs_f64()
        });
        let out = read();
        let t = Instant::now();
        let seconds = opening.join().unwrap_or(f64::NAN);
        let waited = t.elapsed().as_secs_f64();
        (out, Some(EarlyOpen { seconds, waited }))
    })
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
