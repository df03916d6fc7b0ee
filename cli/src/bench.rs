//! `wavelane bench <area>`: throughput measurements, as text or `--json`.
//!
//! Each area is a variant of [`BenchArea`] with its own arguments and
//! runner; to add one, add a variant and a match arm in [`run`].

use std::path::PathBuf;

use clap::{Args, Subcommand};
use indicatif::ProgressBar;
use serde::Serialize;
use wavelane::backend::{Backend, BackendKind};
use wavelane::bench::bpc::{self as bpc_bench, BenchConfig};

use crate::args::{BackendArg, BenchOpArg};
use wavelane::bpc::{formats::RefFile, CodeblockBatch};
use wavelane_core::bpc::Mode;

use super::CliResult;

/// Arguments of `wavelane bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    area: BenchArea,
}

#[derive(Debug, Subcommand)]
enum BenchArea {
    /// Multi-level 2-D DWT throughput against a copy measured in the same run.
    Dwt(super::bench_dwt::DwtBenchArgs),
    /// BPC-PaCo encode/decode throughput on tiled 64x64 codeblocks.
    Bpc(BpcBenchArgs),
    /// CAVLC blocks/s: CPU encode and decode, GPU encode with packing.
    Cavlc(super::bench_cavlc::CavlcBenchArgs),
    /// Huffman (VLE) encode/decode GB/s on CPU and GPU against the GPU copy bandwidth.
    Vle(super::bench_vle::VleBenchArgs),
    /// Whole encodes and decodes of one image: wall and kernel time, frames/s, stages, transfers.
    Codec(super::bench_codec::CodecBenchArgs),
}

#[derive(Debug, Args)]
struct BpcBenchArgs {
    /// BPCREF01 codeblocks to tile (e.g. the reference sample, gunzipped
    /// from tests/data/bpc); synthetic Laplacian codeblocks by default.
    #[arg(long)]
    input: Option<PathBuf>,
    /// Image sides, multiples of 64.
    #[arg(long, value_delimiter = ',', default_value = "2048,4096,8192")]
    sizes: Vec<usize>,
    /// Passes per bitplane to measure (2, 3 or both).
    #[arg(long, value_delimiter = ',', default_value = "2,3")]
    passes: Vec<u8>,
    /// Repeats per measurement (the best is reported).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// What to time: encode, decode or both. Decoding decodes the CPU
    /// encoder's stream, so `--ops decode` runs no GPU encoding and
    /// `--ops encode` no decoding. Every GPU encoding is checked equal to
    /// the CPU encoder's stream and every decoding lossless (an error names
    /// the first codeblock that differs).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "encode,decode"
    )]
    ops: Vec<BenchOpArg>,
    /// Also time the core encoder on a single thread (CPU backend, with
    /// encode in --ops).
    #[arg(long)]
    single_thread: bool,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report<T: Serialize> {
    area: &'static str,
    backend: String,
    results: Vec<T>,
}

/// Runs `wavelane bench`.
pub fn run(args: BenchArgs) -> CliResult {
    match args.area {
        BenchArea::Dwt(a) => super::bench_dwt::run(a),
        BenchArea::Bpc(a) => bpc(a),
        BenchArea::Cavlc(a) => super::bench_cavlc::run(a),
        BenchArea::Vle(a) => super::bench_vle::run(a),
        BenchArea::Codec(a) => super::bench_codec::run(a),
    }
}

fn bpc(a: BpcBenchArgs) -> CliResult {
    if let Some(bad) = a.sizes.iter().find(|s| **s == 0 || **s % 64 != 0) {
        return Err(format!("--sizes: {bad} is not a positive multiple of 64").into());
    }
    let modes = a
        .passes
        .iter()
        .map(|&p| Mode::from_passes(p).ok_or_else(|| format!("--passes: {p} is not 2 or 3")))
        .collect::<Result<Vec<_>, _>>()?;
    let source = match &a.input {
        Some(path) => {
            let bytes =
                std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Some(CodeblockBatch::from_ref(&RefFile::parse(&bytes)?))
        }
        None => None,
    };
    let backend = bench_backend(a.backend.into())?;
    let config = BenchConfig {
        source,
        sizes: a.sizes,
        modes,
        repeats: a.repeats,
        single_thread: a.single_thread,
        ops: a.ops.into_iter().map(Into::into).collect(),
    };
    let bar = ProgressBar::new_spinner();
    let results = bpc_bench::run(&config, &backend, |m| bar.set_message(m.to_owned()))?;
    bar.finish_and_clear();
    if a.json {
        let report = Report {
            area: "bpc",
            backend: backend.describe(),
            results,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("bpc on {}", backend.describe());
    println!(
        "{:>6} {:>6} {:>12} {:>7} {:>14} {:>14} {:>10} {:>9} {:>6}",
        "size",
        "passes",
        "backend",
        "op",
        "ns/coeff",
        "codeblocks/s",
        "bits/coef",
        "job GB/s",
        "copy%"
    );
    for r in results {
        println!(
            "{:>6} {:>6} {:>12} {:>7} {:>14.4} {:>14.0} {:>10.4} {:>9.1} {:>5.1}%",
            r.size,
            r.passes,
            r.backend,
            r.op,
            r.ns_per_coefficient,
            r.codeblocks_per_s,
            r.bits_per_coefficient,
            r.job_gb_per_s,
            100.0 * r.job_fraction_of_copy
        );
    }
    Ok(())
}

/// How long every timed GPU submission of a benchmark is preceded by busy
/// work ([`wavelane::backend::Gpu::set_clock_warm_up`]).
const CLOCK_WARM_UP: std::time::Duration = std::time::Duration::from_millis(200);

/// The backend a benchmark runs on; a GPU gets the clock warm-up, so that
/// kernels timed after a pause of the host (checking a result, preparing
/// the next input) do not run at the idle clocks the pause left.
pub(super) fn bench_backend(kind: BackendKind) -> Result<Backend, super::CliError> {
    let backend = Backend::select(kind)?;
    if let Some(gpu) = backend.gpu() {
        gpu.set_clock_warm_up(CLOCK_WARM_UP)?;
    }
    Ok(backend)
}
