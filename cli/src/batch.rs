//! Runs of several files that survive faults: a failed file is reported on
//! stderr as it happens and the others go on; the run then fails with
//! [`BatchFailed`], which `main` turns into exit code
//! [`EXIT_BATCH_FAILED`] (README, "Exit codes").

use std::path::Path;

use super::CliError;

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

/// Prints `--json` reports: an array with one report per input when the
/// command was given several, else the single report (`null` if it failed).
pub(crate) fn print_json(many: bool, mut reports: Vec<serde_json::Value>) -> Result<(), CliError> {
    let v = if many {
        serde_json::Value::Array(reports)
    } else {
        reports.pop().unwrap_or(serde_json::Value::Null)
    };
    println!("{}", serde_json::to_string_pretty(&v)?);
    Ok(())
}
