//! `wavelane bpc`: BPC-PaCo on raw codeblock files (for debugging and
//! fuzzing). Formats in docs/format.md ("BPC-PaCo raw codeblock files").

use std::path::PathBuf;
use std::time::Instant;

use crate::args::BackendArg;
use clap::{Args, Subcommand};
use serde::Serialize;
use wavelane::backend::Backend;
use wavelane::bpc::formats::{self, RefFile};
use wavelane::bpc::{cpu, gpu, lut_json, CodeblockBatch, EncodedBatch};
use wavelane_core::bpc::{DecodeLimits, Mode};

use super::CliResult;

/// Arguments of `wavelane bpc`.
#[derive(Debug, Args)]
pub struct BpcArgs {
    #[command(subcommand)]
    command: BpcCommand,
}

#[derive(Debug, Subcommand)]
enum BpcCommand {
    /// Encode every codeblock of a BPCREF01 file. Output, per codeblock in
    /// input order: u8 M (0xFF when empty), u32 LE codeword count, the
    /// codewords as u16 big-endian.
    EncodeBlocks(EncodeArgs),
    /// Decode an `encode-blocks` output back to BPCREF01, taking the
    /// codeblock geometry from the file it was encoded from.
    DecodeBlocks(DecodeArgs),
}

#[derive(Debug, Args)]
struct Coding {
    /// Passes per bitplane: 2 (SPP, MRP) or 3 (SPP, MRP, CP).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3))]
    passes: u8,
    /// Probability tables: `reference` (compiled-in preset) or a JSON file
    /// from `wavelane train-lut`.
    #[arg(long, default_value = "reference")]
    lut: String,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct EncodeArgs {
    /// A BPCREF01 file (e.g. the reference sample).
    input: PathBuf,
    /// The encoded codeblocks.
    #[arg(short, long)]
    output: PathBuf,
    #[command(flatten)]
    coding: Coding,
}

#[derive(Debug, Args)]
struct DecodeArgs {
    /// An `encode-blocks` output.
    input: PathBuf,
    /// The BPCREF01 file the codeblocks were encoded from (gives the count
    /// and geometry of the codeblocks).
    #[arg(long)]
    like: PathBuf,
    /// The decoded codeblocks, as BPCREF01.
    #[arg(short, long)]
    output: PathBuf,
    /// Keep only the first N codewords of every codeblock.
    #[arg(long)]
    max_codewords: Option<usize>,
    #[command(flatten)]
    coding: Coding,
}

#[derive(Serialize)]
struct Summary {
    command: &'static str,
    backend: String,
    passes: u8,
    codeblocks: usize,
    coefficients: usize,
    codewords: usize,
    bits_per_coefficient: f64,
    seconds: f64,
}

impl Summary {
    fn print(&self, json: bool) {
        if json {
            println!(
                "{}",
                serde_json::to_string_pretty(self).expect("summary serializes")
            );
        } else {
            println!(
                "{}: {} codeblocks, {} coefficients, {} codewords ({:.4} bits/coefficient), {}-pass, {} in {:.3} s",
                self.command,
                self.codeblocks,
                self.coefficients,
                self.codewords,
                self.bits_per_coefficient,
                self.passes,
                self.backend,
                self.seconds
            );
        }
    }
}

fn read(path: &PathBuf) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn write(path: &PathBuf, bytes: &[u8]) -> Result<(), String> {
    wavelane::output::write_atomic(path, bytes).map_err(|e| format!("cannot write: {e}"))
}

/// Runs `wavelane bpc`.
pub fn run(args: BpcArgs) -> CliResult {
    match args.command {
        BpcCommand::EncodeBlocks(a) => encode_blocks(a),
        BpcCommand::DecodeBlocks(a) => decode_blocks(a),
    }
}

fn setup(
    c: &Coding,
) -> Result<
    (Mode, wavelane_core::bpc::ProbabilityTables, Backend),
    Box<dyn std::error::Error + Send + Sync>,
> {
    let mode = Mode::from_passes(c.passes).expect("clap checks 2..=3");
    let tables = lut_json::load_tables(&c.lut, mode)?;
    let backend = Backend::select(c.backend.into())?;
    Ok((mode, tables, backend))
}

fn encode_blocks(a: EncodeArgs) -> CliResult {
    let file = RefFile::parse(&read(&a.input)?)?;
    let (mode, tables, backend) = setup(&a.coding)?;
    let batch = CodeblockBatch::from_ref(&file);
    let start = Instant::now();
    let encoded = match &backend {
        Backend::Cpu => cpu::encode(&batch, &tables, cpu::CoreForm::Sequential)?,
        Backend::Gpu(g) => gpu::encode(g, &batch, &tables)?.0,
    };
    let seconds = start.elapsed().as_secs_f64();
    write(&a.output, &formats::write_encoded(&encoded))?;
    Summary {
        command: "encode-blocks",
        backend: backend.describe(),
        passes: mode.passes(),
        codeblocks: batch.len(),
        coefficients: batch.coefficient_count(),
        codewords: encoded.codewords.len(),
        bits_per_coefficient: encoded.codewords.len() as f64 * 16.0
            / batch.coefficient_count().max(1) as f64,
        seconds,
    }
    .print(a.coding.json);
    Ok(())
}

fn decode_blocks(a: DecodeArgs) -> CliResult {
    let like = RefFile::parse(&read(&a.like)?)?;
    let encoded: EncodedBatch = formats::read_encoded(&read(&a.input)?, like.blocks.len())?;
    let (mode, tables, backend) = setup(&a.coding)?;
    let batch = CodeblockBatch::from_ref(&like);
    let limits = DecodeLimits::codewords(a.max_codewords.unwrap_or(usize::MAX));
    let start = Instant::now();
    let decoded = match &backend {
        Backend::Cpu => {
            cpu::decode_with_limits(&batch, &encoded, &tables, limits, cpu::CoreForm::Sequential)?.0
        }
        Backend::Gpu(g) => gpu::decode(g, &batch, &encoded, &tables, limits)?.0,
    };
    let seconds = start.elapsed().as_secs_f64();
    let mut out = like.clone();
    for (b, d) in out.blocks.iter_mut().zip(&batch.blocks) {
        // Truncated reconstructions of the largest i16 magnitudes may not
        // fit 16 bits; they saturate.
        b.coefficients = decoded[d.offset..d.offset + formats::REF_BLOCK_LEN]
            .iter()
            .map(|&v| v.clamp(i16::MIN as i32, i16::MAX as i32) as i16)
            .collect();
        b.top = formats::ref_top(&b.coefficients);
    }
    write(&a.output, &out.to_bytes()?)?;
    Summary {
        command: "decode-blocks",
        backend: backend.describe(),
        passes: mode.passes(),
        codeblocks: batch.len(),
        coefficients: batch.coefficient_count(),
        codewords: encoded.codewords.len(),
        bits_per_coefficient: encoded.codewords.len() as f64 * 16.0
            / batch.coefficient_count().max(1) as f64,
        seconds,
    }
    .print(a.coding.json);
    Ok(())
}
