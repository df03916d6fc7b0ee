//! The `wavelane` command-line tool. Each subcommand lives in its own module
//! under `cli/`; this file only parses arguments and reports errors.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    default_sigpipe();
    wavelane_cli::init_logger();
    // The main thread is one of the pool's workers instead of waiting for
    // them: one thread fewer to start, and a parallel stage starts on this
    // thread at once instead of after a wake-up (small images run many
    // short stages). The pool's size still follows RAYON_NUM_THREADS. An
    // error means a pool exists already, which is as good.
    let _ = rayon::ThreadPoolBuilder::new()
        .use_current_thread()
        .build_global();
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
