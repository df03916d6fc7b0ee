//! Command-line interface: one module per subcommand.
//!
//! To add a subcommand: add a module here, a variant to [`Command`] holding
//! its `clap::Args` struct, and a dispatch arm in [`run`].

use clap::{Parser, Subcommand};

mod args;
mod batch;
mod bench;
mod bench_batch;
mod bench_cavlc;
mod bench_codec;
mod bench_dwt;
mod bench_vle;
mod bpc;
mod decode;
pub mod demo;
mod devices;
mod dwt;
mod encode;
mod h264;
mod info;
mod logger;
mod plot;
mod sequence;
mod sequence_decode;
mod train_lut;
mod verify;
mod vle;
mod volume;
mod volume_demo;

pub use logger::init_logger;

/// Errors returned by subcommands; `main` prints the whole cause chain.
pub type CliError = Box<dyn std::error::Error + Send + Sync>;

/// Result of a subcommand.
pub type CliResult = Result<(), CliError>;

pub use batch::{BatchFailed, EXIT_BATCH_FAILED};

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
    /// Encode an image or y4m sequence as an H.264 intra stream (CAVLC on CPU or GPU).
    H264(h264::H264Args),
    /// Encode images as .wl files (lossless, --bpp or --psnr; DWT + BPC-PaCo + PCRD-Opt); video as .wls.
    Encode(encode::EncodeArgs),
    /// Decode .wl files to PNG/PGM/PPM/TIFF, optionally --reduce'd (--partial: truncated or damaged files).
    Decode(decode::DecodeArgs),
    /// Describe a .wl file: parameters, sizes per resolution and layer, CRC status; .wls: its frames.
    Info(info::InfoArgs),
    /// Run the codec on a built-in public-domain image on every backend; table, images, RD plot.
    Demo(demo::DemoArgs),
    /// BPC-PaCo on raw codeblock files: encode-blocks, decode-blocks.
    Bpc(bpc::BpcArgs),
    /// Train BPC-PaCo probability tables from images.
    TrainLut(train_lut::TrainLutArgs),
    /// Measure throughput against the device copy bandwidth: `wavelane bench dwt|bpc|vle|cavlc|codec`.
    Bench(bench::BenchArgs),
    /// Wavelet-transform an image (or invert raw coefficients): raw Mallat-layout output.
    Dwt(dwt::DwtArgs),
    /// Huffman-compress any file to .wlv, or decompress one (CPU or GPU).
    Vle(vle::VleArgs),
    /// Check .wl, .wlv, volume and .wls files (structure, completeness, every CRC) without decoding.
    Verify(verify::VerifyArgs),
    /// Volumes (MRI, CT: .nii, .nii.gz, TIFF stacks, raw) to volume .wl files and back; info.
    Volume(volume::VolumeArgs),
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Devices(args) => devices::run(args),
        Command::H264(args) => h264::run(args),
        Command::Encode(args) => encode::run(args),
        Command::Decode(args) => decode::run(args),
        Command::Info(args) => info::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Bpc(args) => bpc::run(args),
        Command::TrainLut(args) => train_lut::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Dwt(args) => dwt::run(args),
        Command::Vle(args) => vle::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Volume(args) => volume::run(args),
    }
}
