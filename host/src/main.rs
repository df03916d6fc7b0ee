//! The `wavelane` command-line tool. Each subcommand lives in its own module
//! under `cli/`; this file only parses arguments and reports errors.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    default_sigpipe();
    let cli = wavelane::cli::Cli::parse();
    match wavelane::cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("wavelane: error: {err}");
            let mut source = err.source();
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
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
