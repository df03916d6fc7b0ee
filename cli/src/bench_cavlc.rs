//! `wavelane bench cavlc`: CAVLC blocks per second for CPU encode, CPU
//! decode and GPU encode (with packing) on synthetic pictures.

use clap::Args;
use indicatif::ProgressBar;
use serde::Serialize;

use super::CliResult;
use crate::args::BackendArg;
use wavelane::bench::cavlc::{self as bench, CavlcMeasurement};

/// Arguments of `wavelane bench cavlc`.
#[derive(Debug, Args)]
pub struct CavlcBenchArgs {
    /// Picture sizes WxH (comma separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1280x720,1920x1080,3840x2160"
    )]
    sizes: Vec<String>,
    /// QP of the macroblock coding that produces the blocks.
    #[arg(long, default_value_t = 26, value_parser = clap::value_parser!(u8).range(0..=51))]
    qp: u8,
    /// Timed repetitions (after one warm-up); best and median are reported.
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// Where the encode runs besides the CPU (gpu adds the GPU encode).
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    area: &'static str,
    backend: String,
    qp: u8,
    timing: &'static str,
    results: Vec<CavlcMeasurement>,
}

fn parse_size(s: &str) -> Result<(usize, usize), String> {
    let (w, h) = s
        .split_once('x')
        .ok_or_else(|| format!("--sizes: {s:?} is not WxH"))?;
    let w: usize = w
        .parse()
        .map_err(|_| format!("--sizes: bad width in {s:?}"))?;
    let h: usize = h
        .parse()
        .map_err(|_| format!("--sizes: bad height in {s:?}"))?;
    if w == 0 || h == 0 || !w.is_multiple_of(2) || !h.is_multiple_of(2) || w > 8192 || h > 8192 {
        return Err(format!(
            "--sizes: {s:?} must be even and 2..=8192 on each side"
        ));
    }
    Ok((w, h))
}

/// Runs `wavelane bench cavlc`.
pub fn run(a: CavlcBenchArgs) -> CliResult {
    let sizes = a
        .sizes
        .iter()
        .map(|s| parse_size(s))
        .collect::<Result<Vec<_>, _>>()?;
    let backend = super::bench::bench_backend(a.backend.into())?;
    let bar = if a.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new_spinner()
    };
    let results = bench::run(&sizes, a.qp, a.repeats, &backend, &|m| {
        bar.set_message(m.to_owned())
    })?;
    bar.finish_and_clear();
    let timing = "cpu: wall clock (encode on all cores, decode on one thread); gpu: timestamps of the encode, scan and pack dispatches (wall_ms adds transfers)";
    if a.json {
        let report = Report {
            area: "cavlc",
            backend: backend.describe(),
            qp: a.qp,
            timing,
            results,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("cavlc at QP {} on {} ({timing})", a.qp, backend.describe());
    println!(
        "{:>10} {:>11} {:>9} {:>10} {:>10} {:>10} {:>14} {:>9}",
        "size", "op", "blocks", "bits", "best ms", "median ms", "blocks/s", "wall ms"
    );
    for r in results {
        let wall = r.wall_ms.map_or("-".to_string(), |w| format!("{w:.2}"));
        println!(
            "{:>10} {:>11} {:>9} {:>10} {:>10.3} {:>10.3} {:>14.0} {:>9}",
            r.size, r.op, r.blocks, r.bits, r.best_ms, r.median_ms, r.blocks_per_s, wall
        );
    }
    Ok(())
}
