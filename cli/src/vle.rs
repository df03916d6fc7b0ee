//! `wavelane vle compress|decompress`: canonical Huffman coding of any file
//! into the `.wlv` container (docs/format.md, "VLE file"), on all CPU cores
//! or on the GPU. Both backends write the same bytes, and either decodes
//! what the other wrote.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use indicatif::ProgressBar;
use serde::Serialize;

use super::CliResult;
use crate::args::BackendArg;
use wavelane::backend::{Backend, Job};
use wavelane::vle::partial::DamagedChunk;
use wavelane::vle::{self, VleFile, VleOptions};

/// Arguments of `wavelane vle`.
#[derive(Debug, Args)]
pub struct VleArgs {
    #[command(subcommand)]
    command: VleCommand,
}

#[derive(Debug, Subcommand)]
enum VleCommand {
    /// Compress any file (empty ones too) into a .wlv file: a canonical,
    /// length-limited Huffman code of its bytes, in independently decodable chunks.
    Compress(CompressArgs),
    /// Decompress a .wlv file; every chunk's CRC and the CRC-32 of the
    /// result must match the ones recorded (--partial: restore what is intact).
    Decompress(DecompressArgs),
}

#[derive(Debug, Args)]
struct CompressArgs {
    /// The file to compress.
    input: PathBuf,
    /// The .wlv file to write.
    #[arg(short, long)]
    output: PathBuf,
    /// Longest codeword in bits (8 is enough for any input; shorter limits
    /// fail when more distinct bytes occur than they can code).
    #[arg(long, default_value_t = wavelane_core::vle::DEFAULT_MAX_LEN,
          value_parser = clap::value_parser!(u32).range(1..=24))]
    max_len: u32,
    /// Symbols per independently decodable chunk (a positive multiple of 32,
    /// at most 16777216).
    #[arg(long, default_value_t = vle::DEFAULT_CHUNK_SYMBOLS)]
    chunk_symbols: usize,
    /// Where to run; `auto` takes the CPU (the GPU, with its start-up and
    /// transfers, finished first on no measured file; `gpu` or a device
    /// named in WAVELANE_DEVICE runs there).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct DecompressArgs {
    /// The .wlv file to decompress.
    input: PathBuf,
    /// The file to write.
    #[arg(short, long)]
    output: PathBuf,
    /// Restore what is intact of a damaged or cut file: every chunk whose
    /// CRC holds is decoded, the bytes of the others are written as zeros
    /// and listed on stderr (version 2 files, which record chunk CRCs).
    /// Runs on the CPU.
    #[arg(long)]
    partial: bool,
    /// Where to run; `auto` takes the CPU (the GPU, with its start-up and
    /// transfers, finished first on no measured file; `gpu` or a device
    /// named in WAVELANE_DEVICE runs there).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct Summary {
    operation: &'static str,
    backend: String,
    input: String,
    output: String,
    original_bytes: u64,
    compressed_bytes: u64,
    /// Compressed bits per original byte (0 for an empty input).
    bits_per_byte: f64,
    distinct_bytes: u32,
    longest_code_bits: u32,
    chunk_symbols: u32,
    chunks: usize,
    crc32: String,
    seconds: f64,
    /// Chunks a `--partial` decompression left out (their bytes are zero).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    damaged_chunks: Vec<DamagedChunk>,
}

impl Summary {
    fn new(
        operation: &'static str,
        backend: &Backend,
        paths: (&Path, &Path),
        file: &VleFile<'_>,
        compressed_bytes: u64,
        seconds: f64,
    ) -> Self {
        let original = file.original_len;
        Summary {
            operation,
            backend: backend.describe(),
            input: paths.0.display().to_string(),
            output: paths.1.display().to_string(),
            original_bytes: original,
            compressed_bytes,
            bits_per_byte: if original == 0 {
                0.0
            } else {
                compressed_bytes as f64 * 8.0 / original as f64
            },
            distinct_bytes: file.table.used_symbols(),
            longest_code_bits: file.table.max_len(),
            chunk_symbols: file.chunk_symbols,
            chunks: file.chunk_bits.len(),
            crc32: format!("{:08x}", file.crc32),
            seconds,
            damaged_chunks: Vec::new(),
        }
    }

    fn print(&self, json: bool) -> CliResult {
        if json {
            println!("{}", serde_json::to_string_pretty(self)?);
        } else {
            // Sizes in the direction of the operation: input -> output.
            let (from, to) = if self.operation == "decompressed" {
                (self.compressed_bytes, self.original_bytes)
            } else {
                (self.original_bytes, self.compressed_bytes)
            };
            println!(
                "{} {} -> {}: {} -> {} bytes ({:.3} bits/byte), {} distinct bytes, \
                 codes up to {} bits, {} chunks of {} symbols, CRC-32 {}, {:.3} s on {}",
                self.operation,
                self.input,
                self.output,
                from,
                to,
                self.bits_per_byte,
                self.distinct_bytes,
                self.longest_code_bits,
                self.chunks,
                self.chunk_symbols,
                self.crc32,
                self.seconds,
                self.backend
            );
        }
        Ok(())
    }
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    wavelane::output::write_atomic(path, bytes).map_err(|e| format!("cannot write: {e}"))
}

fn spinner(json: bool, message: String) -> ProgressBar {
    if json {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// Runs `wavelane vle`.
pub fn run(args: VleArgs) -> CliResult {
    match args.command {
        VleCommand::Compress(a) => compress(a),
        VleCommand::Decompress(a) => decompress(a),
    }
}

fn compress(a: CompressArgs) -> CliResult {
    let opts = VleOptions {
        max_len: a.max_len,
        chunk_symbols: a.chunk_symbols,
    };
    let data = read(&a.input)?;
    let backend = Backend::select_for(a.backend.into(), Job::Vle)?;
    let bar = spinner(
        a.json,
        format!("compressing {} bytes on {}", data.len(), backend.describe()),
    );
    let start = Instant::now();
    let packed = vle::compress(&data, &backend, &opts);
    let seconds = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let packed = packed.map_err(|source| Failed {
        what: "compress",
        path: a.input.display().to_string(),
        source,
    })?;
    write(&a.output, &packed)?;
    let file = VleFile::parse(&packed)?;
    Summary::new(
        "compressed",
        &backend,
        (&a.input, &a.output),
        &file,
        packed.len() as u64,
        seconds,
    )
    .print(a.json)
}

fn decompress(a: DecompressArgs) -> CliResult {
    let packed = read(&a.input)?;
    let backend = if a.partial {
        Backend::Cpu
    } else {
        Backend::select_for(a.backend.into(), Job::Vle)?
    };
    let bar = spinner(
        a.json,
        format!(
            "decompressing {} bytes on {}",
            packed.len(),
            backend.describe()
        ),
    );
    let start = Instant::now();
    let data = if a.partial {
        vle::partial::decompress_partial(&packed)
    } else {
        vle::decompress(&packed, &backend).map(|d| (d, Vec::new()))
    };
    let seconds = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    let (data, damaged) = data.map_err(|source| Failed {
        what: "decompress",
        path: a.input.display().to_string(),
        source,
    })?;
    let file = if a.partial {
        VleFile::parse_prefix(&packed)?
    } else {
        VleFile::parse(&packed)?
    };
    if (packed.len() as u64) < file.byte_len() as u64 {
        eprintln!(
            "wavelane: warning: {}: truncated ({} of {} bytes)",
            a.input.display(),
            packed.len(),
            file.byte_len()
        );
    }
    // A cut file can leave out thousands of chunks: the first few are
    // named, the rest counted (--json lists them all).
    const NAMED: usize = 8;
    for d in damaged.iter().take(NAMED) {
        eprintln!(
            "wavelane: warning: {}: left out {d}, written as zeros",
            a.input.display()
        );
    }
    if damaged.len() > NAMED {
        eprintln!(
            "wavelane: warning: {}: left out {} more chunks, written as zeros",
            a.input.display(),
            damaged.len() - NAMED
        );
    }
    write(&a.output, &data)?;
    let mut summary = Summary::new(
        "decompressed",
        &backend,
        (&a.input, &a.output),
        &file,
        packed.len() as u64,
        seconds,
    );
    summary.damaged_chunks = damaged;
    summary.print(a.json)
}

/// A failed compression or decompression; the typed error stays the cause,
/// so the message names the failure (checksum mismatch, truncation, a bad chunk).
#[derive(Debug, thiserror::Error)]
#[error("cannot {what} {path}")]
struct Failed {
    what: &'static str,
    path: String,
    #[source]
    source: vle::VleCodecError,
}
