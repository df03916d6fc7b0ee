//! Runs of several files that survive faults and keep the device busy.
//!
//! A failed file is reported on stderr and the others go on; the run then
//! fails with [`BatchFailed`], which `main` turns into exit code
//! [`EXIT_BATCH_FAILED`] (README, "Exit codes"). The files go through a
//! bounded pipeline (reader threads -> coders -> writer threads,
//! [`pipeline`]) so that reading and writing images overlap the coding, on
//! one backend or on several devices (`--devices`, [`devices`]); reports
//! come in input order ([`files`]). [`start`] is the device start-up the
//! commands share.

pub(crate) mod devices;
pub(crate) mod files;
pub(crate) mod pipeline;
pub(crate) mod start;

pub use devices::{parse_devices, DeviceList};
pub(crate) use files::{run_files, BatchArgs, Done, FileJob};

use std::path::{Path, PathBuf};

use super::CliError;

/// Refuses `--devices` for an input that is coded as one job (a volume or
/// a sequence): the list spreads a batch of image files over devices, and
/// accepting it silently would promise a spread that does not happen. The
/// message says what to use instead.
pub(crate) fn refuse_devices(devices: Option<&DeviceList>, what: &str) -> Result<(), CliError> {
    match devices {
        Some(_) => Err(format!(
            "--devices spreads a batch of image files over devices; a {what} is coded \
             as one job on one device: use --backend gpu (or WAVELANE_DEVICE to pick the card)"
        )
        .into()),
        None => Ok(()),
    }
}

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

    /// Files that failed so far.
    pub(crate) fn failed(&self) -> usize {
        self.failed
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

/// Where input `input` goes.
pub(crate) fn output_path(output: &Path, input: &Path, many: bool, ext: &str) -> PathBuf {
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
