//! `wavelane h264`: encode an image or a y4m sequence as an H.264 Baseline
//! intra stream whose residuals are coded by wavelane's CAVLC (CPU or GPU).

use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::CliResult;
use crate::args::BackendArg;
use crate::args::MbModesArg;
use wavelane::backend::Backend;
use wavelane::h264::encode::{encode_sequence, CpuEntropy, EncodeOptions, EntropyCoder};
use wavelane::h264::gpu::GpuEntropy;
use wavelane::h264::input::read_input;

/// Arguments of `wavelane h264`.
#[derive(Debug, Args)]
pub struct H264Args {
    /// Input: PNG, PGM or PPM image, or a YUV4MPEG2 (.y4m) 4:2:0/mono sequence.
    pub input: PathBuf,
    /// Output Annex B H.264 stream (.264).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Quantisation parameter, 0 (finest) to 51 (coarsest).
    #[arg(long, default_value_t = 26, value_parser = clap::value_parser!(u8).range(0..=51))]
    pub qp: u8,
    /// Also write our reconstruction as raw I420 (what a decoder must output).
    #[arg(long, value_name = "RECON.yuv")]
    pub recon: Option<PathBuf>,
    /// Where CAVLC runs: cpu, gpu or auto.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Luma prediction types the mode decision may use.
    #[arg(long, value_enum, default_value_t = MbModesArg::Auto)]
    pub mb_modes: MbModesArg,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `wavelane h264`.
pub fn run(args: H264Args) -> CliResult {
    let input = read_input(&args.input)?;
    let backend = Backend::select(args.backend.into())?;
    let entropy: Box<dyn EntropyCoder> = match &backend {
        Backend::Cpu => Box::new(CpuEntropy),
        Backend::Gpu(g) => Box::new(GpuEntropy::new(g.clone())),
    };
    let frames = input.frames.len() as u64;
    let bar = if frames > 1 && !args.json {
        let bar = ProgressBar::new(frames);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} frames {elapsed}")
                .expect("valid template"),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let opts = EncodeOptions {
        qp: args.qp,
        modes: args.mb_modes.into(),
    };
    let start = std::time::Instant::now();
    let encoded = encode_sequence(&input.frames, &opts, entropy.as_ref(), &|| bar.inc(1))?;
    let seconds = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    wavelane::output::write_atomic(&args.output, &encoded.stream)?;
    if let Some(path) = &args.recon {
        let mut yuv = Vec::new();
        for p in &encoded.recon {
            p.write_i420(&mut yuv);
        }
        wavelane::output::write_atomic(path, &yuv)?;
    }
    let first = &encoded.recon[0];
    if args.json {
        let v = serde_json::json!({
            "output": args.output, "frames": frames, "width": first.width(), "height": first.height(),
            "gray": input.gray, "qp": args.qp, "bytes": encoded.stream.len(),
            "backend": backend.describe(), "seconds": seconds,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "{}: {} frame(s) {}x{}{}, QP {}, {} bytes ({:.3} bpp), {} in {:.2} s",
            args.output.display(),
            frames,
            first.width(),
            first.height(),
            if input.gray { " gray" } else { "" },
            args.qp,
            encoded.stream.len(),
            encoded.stream.len() as f64 * 8.0
                / (first.width() * first.height()) as f64
                / frames as f64,
            backend.describe(),
            seconds
        );
    }
    Ok(())
}
