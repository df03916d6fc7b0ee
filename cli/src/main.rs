//! The `wavelane` command-line tool. Each subcommand lives in its own module
//! under `cli/`; this file only parses arguments and reports errors.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    default_sigpipe();
    wavelane_cli::init_logger();
    // The main thread is not one of rayon's workers: encode and decode run
    // every file through the batch pipeline (cli/src/batch/pipeline.rs),
    // whose coder and reader threads use the pool while this thread waits
    // on a channel for their outcomes. A pool worker blocked there takes
    // no work, so with `use_current_thread` the pool had one worker fewer
    // than RAYON_NUM_THREADS: half the cores on two, and a deadlock on one
    // (cli/tests/threads_cli.rs; docs/perf/codec.md, "The CPU encoder on
    // the AVX2 development machine").
    let cli = wavelane_cli::Cli::parse();
    match wavelane_cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // A batch whose failures were reported file by file as they
            // happened: one summary line and its own exit code (README,
            // "Exit codes").
            if let Some(b) = err.downcast_ref::<wavelane_cli::BatchFailed>() {
                eprintln!("wavelane: {b}");
                return ExitCode::from(wavelane_cli::EXIT_BATCH_FAILED);
            }
            let mut printed = err.to_string();
            eprintln!("wavelane: error: {printed}");
            // Causes that a message above already quotes (errors that show
            // their source in their own text) are not repeated.
            let mut source = err.source();
            while let Some(cause) = source {
                let text = cause.to_string();
                if !printed.contains(&text) {
                    eprintln!("  caused by: {text}");
                    printed.push_str(&text);
                }
                source = cause.source();
            }
            ExitCode::FAILURE
        }
    }
}

/// Lets a closed pipe end the program quietly, like other Unix tools
/// (`wavelane info x.wl | head`): the Rust runtime ignores SIGPIPE, so a
/// write to a closed pipe fails and `println!` panics instead.
#[cfg(unix)]
fn default_sigpipe() {
    // SAFETY: sets the disposition of one signal to its default, at the
    // start of main, before any other thread exists or any signal handler
    // of ours could be affected.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn default_sigpipe() {}
