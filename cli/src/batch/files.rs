//! Batches of files (`encode` and `decode` with several inputs or a
//! directory): each command says how to read, code and write one file
//! ([`FileJob`]); [`run_files`] runs them through the bounded
//! [`pipeline`](super::pipeline), prints each file's report in input order,
//! shows a progress bar (files, files/s, MB/s) and, with `--json`, a
//! summary.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use wavelane::backend::{BackendKind, Job};

use super::super::{CliError, CliResult};
use super::devices::{Coder, DeviceList};
use super::pipeline::{self, Flow, Threads};
use super::start::open_early;
use super::Batch;

/// What writing one file gave: its report, printed in input order.
#[derive(Debug, Default)]
pub(crate) struct Done {
    /// The line for stdout (text mode).
    pub text: Option<String>,
    /// The `--json` report.
    pub json: Option<serde_json::Value>,
    /// Lines for stderr, printed before the text.
    pub warnings: Vec<String>,
    /// Bytes of image samples coded (width x height x components x 1 or 2
    /// bytes per sample), for MB/s.
    pub image_bytes: u64,
    /// Skipped (`--skip-existing`).
    pub skipped: bool,
}

/// How a command codes one file of a batch: `read` on a reader thread,
/// `code` on a coder (which selects or holds the backend), `write` on a
/// writer thread.
pub(crate) trait FileJob: Sync {
    /// What `read` gives `code`.
    type Loaded: Send;
    /// What `code` gives `write`.
    type Coded: Send;
    /// Extensions a directory given as input is searched for (lower case).
    const INPUTS: &'static [&'static str];
    /// The extension of outputs written into a directory.
    const OUTPUT: &'static str;
    /// The job of `input` from its header alone, so that the GPU can open
    /// while the first input is read; `None` where the header does not say.
    fn peek(&self, input: &Path) -> Option<Job>;
    /// Why `out` need not be written (`--skip-existing`), if so.
    fn skip(&self, out: &Path) -> Option<&'static str>;
    /// Reads `input` (to go to `out`).
    fn read(&self, input: &Path, out: &Path) -> Result<Self::Loaded, CliError>;
    /// Codes it, on `coder`'s backend.
    fn code(
        &self,
        input: &Path,
        loaded: Self::Loaded,
        coder: &mut Coder,
    ) -> Result<Self::Coded, CliError>;
    /// Writes it to `out`, atomically.
    fn write(&self, input: &Path, out: &Path, coded: Self::Coded) -> Result<Done, CliError>;
}

/// What a batch was asked for.
pub(crate) struct BatchArgs<'a> {
    pub inputs: &'a [PathBuf],
    pub output: &'a Path,
    pub json: bool,
    pub backend: BackendKind,
    pub devices: Option<&'a DeviceList>,
}

/// Runs `job` on every input (a directory stands for its files with
/// [`FileJob::INPUTS`] extensions): with several, `output` is a directory
/// of `NAME.ext` files. A failed file is reported and the others go on
/// ([`Batch`]); reports come in input order.
pub(crate) fn run_files<J: FileJob>(a: BatchArgs<'_>, job: &J) -> CliResult {
    let start = Instant::now();
    let (inputs, many) = expand(a.inputs, J::INPUTS)?;
    // Devices that do not exist are an error before anything is written.
    let indices = a.devices.map(DeviceList::resolve).transpose()?;
    if many {
        std::fs::create_dir_all(a.output)?;
    }
    let outputs: Vec<PathBuf> = inputs
        .iter()
        .map(|i| super::output_path(a.output, i, many, J::OUTPUT))
        .collect();
    let clash = first_users(&inputs, &outputs);
    let mut coders = match &indices {
        Some(list) => Coder::devices(list, a.backend)?,
        None => {
            let early = open_early(a.backend, inputs.first().and_then(|i| job.peek(i)));
            vec![Coder::select(a.backend, early)]
        }
    };
    let workers = coders.len();
    let bar = files_bar(inputs.len(), a.json);
    let mut batch = Batch::new(inputs.len());
    let mut reports = Vec::new();
    let (mut ok, mut skipped, mut image_bytes) = (0usize, 0usize, 0u64);
    pipeline::run(
        inputs.len(),
        &mut coders,
        Threads::for_workers(workers),
        |i| {
            let (input, out) = (&inputs[i], &outputs[i]);
            if let Some(first) = clash[i] {
                return Err(format!(
                    "its output {} is also that of {}",
                    out.display(),
                    inputs[first].display()
                )
                .into());
            }
            if let Some(reason) = job.skip(out) {
                return Ok(Flow::Done(Done {
                    warnings: vec![format!(
                        "{}: skipped, {} {reason}",
                        input.display(),
                        out.display()
                    )],
                    skipped: true,
                    ..Done::default()
                }));
            }
            job.read(input, out).map(Flow::Code)
        },
        |coder, i, loaded| job.code(&inputs[i], loaded, coder),
        |i, coded| job.write(&inputs[i], &outputs[i], coded),
        |i, outcome| {
            let result = outcome.map(|d| {
                bar.suspend(|| {
                    d.warnings.iter().for_each(|w| eprintln!("{w}"));
                    if let Some(t) = &d.text {
                        println!("{t}");
                    }
                });
                reports.extend(d.json);
                image_bytes += d.image_bytes;
                if d.skipped {
                    skipped += 1;
                } else {
                    ok += 1;
                }
            });
            batch.record(&inputs[i], result, |m| bar.suspend(|| eprintln!("{m}")));
            bar.inc(1);
            let s = start.elapsed().as_secs_f64();
            bar.set_message(format!(
                "{:.2} files/s, {:.1} MB/s",
                bar.position() as f64 / s,
                image_bytes as f64 / s / 1e6
            ));
        },
    );
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let summary = serde_json::json!({
        "files": inputs.len(), "ok": ok, "skipped": skipped, "failed": batch.failed(),
        "seconds": seconds,
        "files_per_second": ok as f64 / seconds,
        "image_bytes": image_bytes,
        "megabytes_per_second": image_bytes as f64 / seconds / 1e6,
        "workers": workers, "devices": indices,
    });
    if a.json {
        let v = if many {
            serde_json::json!({ "files": reports, "summary": summary })
        } else {
            reports.pop().unwrap_or(serde_json::Value::Null)
        };
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else if many {
        eprintln!(
            "{} files ({ok} coded, {skipped} skipped, {} failed) in {seconds:.2} s: \
             {:.2} files/s, {:.1} MB/s of image samples",
            inputs.len(),
            batch.failed(),
            summary["files_per_second"].as_f64().unwrap_or(0.0),
            summary["megabytes_per_second"].as_f64().unwrap_or(0.0),
        );
    }
    batch.finish()
}

/// The inputs, with each directory replaced by its files with one of
/// `exts` (sorted; hidden files left out, such as the temporaries of an
/// interrupted run), and whether the output is a directory (several
/// inputs, or a directory given).
fn expand(inputs: &[PathBuf], exts: &[&str]) -> Result<(Vec<PathBuf>, bool), CliError> {
    let mut out = Vec::new();
    let mut dir_given = false;
    for input in inputs {
        if !input.is_dir() {
            out.push(input.clone());
            continue;
        }
        dir_given = true;
        let mut found: Vec<PathBuf> = std::fs::read_dir(input)
            .map_err(|e| format!("{}: {e}", input.display()))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or(".");
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
                !name.starts_with('.') && p.is_file() && exts.contains(&ext.to_lowercase().as_str())
            })
            .collect();
        if found.is_empty() {
            return Err(format!(
                "{}: a directory with no .{} files",
                input.display(),
                exts.join(", .")
            )
            .into());
        }
        found.sort();
        out.extend(found);
    }
    let many = dir_given || out.len() > 1;
    Ok((out, many))
}

/// For each output, the index of an earlier, other input with the same
/// output (two inputs of one stem): the later one fails instead of racing
/// the first for the file. An input listed twice is coded twice into the
/// same bytes, as before batches overlapped.
fn first_users(inputs: &[PathBuf], outputs: &[PathBuf]) -> Vec<Option<usize>> {
    let mut first: HashMap<&Path, usize> = HashMap::new();
    outputs
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let f = *first.entry(o.as_path()).or_insert(i);
            (inputs[f] != inputs[i]).then_some(f)
        })
        .collect()
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
