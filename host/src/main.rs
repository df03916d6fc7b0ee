//! The `wavelane` command-line tool. Each subcommand lives in its own module
//! under `cli/`; this file only parses arguments and reports errors.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
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
