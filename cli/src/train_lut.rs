//! `wavelane train-lut`: BPC-PaCo probability tables trained from images
//! (or from BPCREF01 codeblock files), in the reference JSON layout.
//!
//! Two ways to turn images into codeblocks: the luma through a bare
//! transform and one quantization step (the seed-000 set-up), or with
//! `--codec lossless|lossy` the image codec's own front end (colour
//! transform, wavelet, per-subband steps, codeblocks), which is how the
//! codec's built-in presets are trained (scripts/train-natural-tables.py).

use std::path::PathBuf;

use crate::args::TrainWaveletArg;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use wavelane::bpc::formats::{RefFile, REF_MAGIC};
use wavelane::bpc::train::{image_codeblocks, ImageTraining, Trainer};
use wavelane::bpc::{lut_json, CodeblockBatch};
use wavelane::codec::{self, EncodeOptions, RateTarget};
use wavelane::image_io;
use wavelane_core::bpc::Mode;

use super::CliResult;

/// Arguments of `wavelane train-lut`.
#[derive(Debug, Args)]
pub struct TrainLutArgs {
    /// Training images (PNG, PNM, TIFF; their luma is used) or BPCREF01
    /// files of already quantized codeblocks.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The tables, as JSON (load them with `--lut FILE` elsewhere).
    #[arg(short, long)]
    output: PathBuf,
    /// Passes per bitplane the tables are for: 2 or 3.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3))]
    passes: u8,
    /// Wavelet applied to images.
    #[arg(long, value_enum, default_value_t = TrainWaveletArg::Fixed97)]
    wavelet: TrainWaveletArg,
    /// Decomposition levels for images.
    #[arg(long, default_value_t = 5)]
    levels: u32,
    /// Quantization step for image coefficients.
    #[arg(long, default_value_t = 1.0)]
    step: f64,
    /// Codeblock height for images (width is 64).
    #[arg(long, default_value_t = 64)]
    codeblock_height: usize,
    /// Code images with the codec's lossless or lossy front end (all
    /// components, default settings) instead of `--wavelet`/`--levels`/`--step`
    /// on the luma. Images must be 8-bit: the presets' rows are for 8-bit
    /// samples.
    #[arg(long, value_enum, conflicts_with_all = ["wavelet", "levels", "step"])]
    codec: Option<CodecPath>,
}

/// The codec path whose codeblocks the tables are trained on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CodecPath {
    /// 5/3 + RCT, step 1.
    Lossless,
    /// Fixed-point 9/7 + ICT, the default lossy steps.
    Lossy,
}

impl CodecPath {
    fn options(self, passes: u8) -> EncodeOptions {
        let target = match self {
            CodecPath::Lossless => RateTarget::Lossless,
            // Any rate: the target only picks the path, every pass is trained.
            CodecPath::Lossy => RateTarget::AllPasses,
        };
        EncodeOptions {
            target,
            passes,
            ..EncodeOptions::default()
        }
    }
}

fn codeblocks(
    path: &PathBuf,
    opt: &ImageTraining,
) -> Result<CodeblockBatch, Box<dyn std::error::Error + Send + Sync>> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.starts_with(REF_MAGIC) {
        return Ok(CodeblockBatch::from_ref(&RefFile::parse(&bytes)?));
    }
    let image = image::load_from_memory(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(image_codeblocks(&image, opt)?)
}

/// Runs `wavelane train-lut`.
pub fn run(args: TrainLutArgs) -> CliResult {
    let mode = Mode::from_passes(args.passes).expect("clap checks 2..=3");
    let opt = ImageTraining {
        wavelet: args.wavelet.into(),
        levels: args.levels,
        step: args.step,
        codeblock_height: args.codeblock_height,
    };
    let bar = ProgressBar::new(args.inputs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").expect("valid template"),
    );
    let mut trainer = Trainer::new(mode);
    for path in &args.inputs {
        bar.set_message(path.display().to_string());
        let batch = match args.codec {
            Some(codec_path) => {
                let image = image_io::load(path).map_err(|e| format!("{}: {e}", path.display()))?;
                let options = codec_path.options(args.passes);
                codec::tables::training_batch(&image, &options)
                    .map_err(|e| format!("{}: {e}", path.display()))?
            }
            None => codeblocks(path, &opt)?,
        };
        trainer.add_batch(&batch)?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    let tables = trainer.tables();
    wavelane::output::write_atomic(&args.output, lut_json::tables_to_json(&tables).as_bytes())
        .map_err(|e| format!("cannot write: {e}"))?;
    eprintln!(
        "wavelane: trained {}-pass tables on {} symbols from {} inputs -> {}",
        args.passes,
        trainer.symbols(),
        args.inputs.len(),
        args.output.display()
    );
    Ok(())
}
