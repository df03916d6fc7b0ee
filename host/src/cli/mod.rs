//! Command-line interface: one module per subcommand.
//!
//! To add a subcommand: add a module here, a variant to [`Command`] holding
//! its `clap::Args` struct, and a dispatch arm in [`run`].

use clap::{Parser, Subcommand};

mod devices;

/// Errors returned by subcommands; `main` prints the whole cause chain.
pub type CliError = Box<dyn std::error::Error + Send + Sync>;

/// Result of a subcommand.
pub type CliResult = Result<(), CliError>;

/// wavelane: wavelet image coding and GPU-friendly entropy coding.
#[derive(Debug, Parser)]
#[command(name = "wavelane", version, about, long_about = None)]
pub struct Cli {
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the Vulkan devices and which one wavelane would pick.
    Devices(devices::DevicesArgs),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Devices(args) => devices::run(args),
    }
}
