//! `wavelane encode`: images to `.wl` files.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use wavelane_core::dwt::Wavelet;

use std::io::Write;

use super::batch::devices::Coder;
use super::batch::{parse_devices, run_files, BatchArgs, DeviceList, Done, FileJob};
use super::{CliError, CliResult};
use crate::args::BackendArg;
use wavelane::backend::Job;
use wavelane::codec::{self, EncodeOptions, RateTarget, TableChoice};
use wavelane::image_io;
use wavelane::output::AtomicFile;

/// The wavelet, on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WaveletArg {
    /// Reversible CDF 5/3 (the only choice for --lossless).
    #[value(name = "53")]
    W53,
    /// Fixed-point CDF 9/7 (lossy default; identical bytes on CPU and GPU).
    #[value(name = "97i")]
    W97Fixed,
    /// Floating-point CDF 9/7.
    #[value(name = "97")]
    W97,
}

impl WaveletArg {
    pub(crate) fn wavelet(self) -> Wavelet {
        match self {
            WaveletArg::W53 => Wavelet::Cdf53,
            WaveletArg::W97Fixed => Wavelet::Fixed97,
            WaveletArg::W97 => Wavelet::Cdf97,
        }
    }
}

/// The probability tables, on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TablesArg {
    /// The natural-image preset, fitted where it pays: lossless to (a sample of) the codeblocks,
    /// lossy to the passes rate control keeps.
    Auto,
    /// The natural-image preset as it is (trained on photographs with the codec's own path).
    Natural,
    /// The BPC-PaCo reference implementation's tables (format version 1's only preset).
    Reference,
    /// The natural-image preset fitted to every codeblock (one more coding pass).
    Trained,
}

/// Arguments of `wavelane encode`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  wavelane encode photo.png -o photo.wl --lossless
  wavelane encode scans/ -o archive/ --lossless          # every image of a directory
  wavelane encode frames/*.png -o out/ --bpp 1 --json    # per-file reports and a summary
  wavelane encode tiles/ -o out/ --lossless --devices all
  wavelane encode tiles/ -o out/ --lossless --devices 0,0  # two workers on device 0

With several inputs (or a directory) the output is a directory: reading,
coding and writing overlap (a few files in flight), every output equals
what encoding its input alone gives, reports come in input order, and a
failed file is reported while the others go on (exit code 3).

Video: one .y4m input, or raw planar video with --video-size, becomes a .wls
sequence (each frame's components coded at their own size; --bpp is per frame):
  wavelane encode clip.y4m -o clip.wls --lossless
  wavelane encode clip.yuv --video-size 1920x1080 --pix-fmt yuv422p10le -o clip.wls --bpp 2")]
#[command(group = clap::ArgGroup::new("rate").args(["lossless", "bpp", "psnr"]))]
pub struct EncodeArgs {
    /// Input images (PNG, PGM/PPM, TIFF; 8 or 16 bit; gray, gray+alpha, RGB, RGBA), or
    /// directories of them, or one video (.y4m, or raw planar with --video-size) to a .wls
    /// sequence.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output .wl file; with several inputs, a directory (each input's name with .wl).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Bit-exact coding (the default when no rate is given).
    #[arg(long)]
    pub lossless: bool,
    /// Target size in bits per pixel of the whole file (rate control hits it within a codeword).
    #[arg(long, value_name = "X")]
    pub bpp: Option<f64>,
    /// Target quality: the smallest file whose PSNR reaches Y dB (checked by decoding).
    #[arg(long, value_name = "Y")]
    pub psnr: Option<f64>,
    /// Wavelet decomposition levels (default 5, fewer for small images).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=16))]
    pub levels: Option<u8>,
    /// BPC-PaCo coding passes per bitplane.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(2..=3))]
    pub passes: u8,
    /// Quality layers (each one roughly doubles the rate of the one below).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=32))]
    pub layers: u8,
    /// Wavelet (default: 53 lossless, 97i lossy).
    #[arg(long, value_enum)]
    pub wavelet: Option<WaveletArg>,
    /// Codeblock height (the width is always 64; default 64 lossless, 256 lossy).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub codeblock_height: Option<u16>,
    /// Skip coding bitplanes rate control is predicted to drop (faster, may cost a little PSNR).
    #[arg(long)]
    pub early_termination: bool,
    /// Same as --tables trained.
    #[arg(long)]
    pub train_tables: bool,
    /// Probability tables: changes fitted to the image are listed in the header when they pay.
    #[arg(long, value_enum, default_value_t = TablesArg::Auto, conflicts_with = "train_tables")]
    pub tables: TablesArg,
    /// Move the preset's rows up this many bitplanes (down when negative) instead of
    /// matching them to the bit depth and step.
    #[arg(long, value_name = "K", allow_hyphen_values = true,
          value_parser = clap::value_parser!(i8).range(-14..=14))]
    pub table_row_offset: Option<i8>,
    /// Base quantization step in sample units for lossy coding (default 2^(bits-8)).
    #[arg(long)]
    pub qstep: Option<f64>,
    /// Declare the true bit depth of samples stored in a wider container (e.g. 12 in 16-bit PNG).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=16))]
    pub bit_depth: Option<u8>,
    /// Where the transform and coder run; `auto` takes a hardware GPU only
    /// for lossless images large enough to finish first there for this many
    /// CPU threads (docs/perf/codec.md), else the CPU.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Skip inputs whose output exists and verifies cleanly (resume a killed batch).
    #[arg(long)]
    pub skip_existing: bool,
    /// Code on these GPUs (`all`, or indices as `wavelane devices` lists them), one
    /// worker each, taking files from one queue: a faster device codes more of them.
    /// An index listed twice runs two workers on that device (one file's transfers
    /// overlap another's kernels).
    #[arg(long, value_name = "all|0,1,...", value_parser = parse_devices)]
    pub devices: Option<DeviceList>,
    /// Print JSON reports instead of text.
    #[arg(long)]
    pub json: bool,
    /// Raw planar video input: its frame size (a .y4m input says it itself).
    #[arg(long, value_name = "WxH")]
    pub video_size: Option<String>,
    /// Raw planar video input: gray, yuv420p, yuv422p, yuv444p, or with 9..16 bits
    /// their little-endian forms (gray10le, yuv420p10le, yuv422p12le, ...; default yuv420p).
    #[arg(long, value_name = "NAME", requires = "video_size")]
    pub pix_fmt: Option<String>,
}

impl EncodeArgs {
    fn options(&self) -> EncodeOptions {
        let target = match (self.bpp, self.psnr) {
            (Some(b), _) => RateTarget::Bpp(b),
            (_, Some(p)) => RateTarget::Psnr(p),
            _ => RateTarget::Lossless,
        };
        EncodeOptions {
            target,
            wavelet: self.wavelet.map(WaveletArg::wavelet),
            levels: self.levels,
            passes: self.passes,
            layers: self.layers,
            codeblock_height: self.codeblock_height,
            early_termination: self.early_termination,
            tables: self.table_choice(),
            table_row_offset: self.table_row_offset,
            base_step: self.qstep,
            ..EncodeOptions::default()
        }
    }
}

impl EncodeArgs {
    fn table_choice(&self) -> TableChoice {
        match (self.train_tables, self.tables) {
            (true, _) | (false, TablesArg::Trained) => TableChoice::Trained,
            (false, TablesArg::Auto) => TableChoice::Default,
            (false, TablesArg::Natural) => TableChoice::Natural,
            (false, TablesArg::Reference) => TableChoice::Preset(codec::tables::PRESET_REFERENCE),
        }
    }
}

/// The samples of the image at `path` from its header alone (PNG, TIFF,
/// PNM), so that the device can open while the rest is read; `None` where
/// the header does not say.
fn peek_samples(path: &Path) -> Option<u64> {
    use image::ImageDecoder;
    let decoder = image::ImageReader::open(path)
        .ok()?
        .with_guessed_format()
        .ok()?
        .into_decoder()
        .ok()?;
    let (w, h) = decoder.dimensions();
    Some(w as u64 * h as u64 * decoder.color_type().channel_count() as u64)
}

/// Whether `--skip-existing` may skip `out`: it exists and verifies
/// cleanly (complete, every CRC right).
fn complete_wl(out: &Path) -> bool {
    wavelane::verify::verify_file(out).is_ok_and(|v| v.ok())
}

/// Runs `wavelane encode`.
pub fn run(args: EncodeArgs) -> CliResult {
    // A NIfTI volume goes to the volume encoder (docs/volumes.md).
    if let [input] = args.inputs.as_slice() {
        if crate::volume::is_nifti_name(input) {
            super::batch::refuse_devices(args.devices.as_ref(), "volume")?;
            return crate::volume::encode_from_image_args(&args, input);
        }
    }
    // A .y4m or raw video input goes to the sequence encoder (.wls).
    if let [input] = args.inputs.as_slice() {
        if crate::sequence::is_sequence_input(input, &args) {
            return crate::sequence::encode(&args, &args.options(), input);
        }
    }
    let job = EncodeJob {
        options: args.options(),
        args: &args,
    };
    run_files(
        BatchArgs {
            inputs: &args.inputs,
            output: &args.output,
            json: args.json,
            backend: args.backend.into(),
            devices: args.devices.as_ref(),
        },
        &job,
    )
}

/// Encoding one file of a batch.
struct EncodeJob<'a> {
    args: &'a EncodeArgs,
    options: EncodeOptions,
}

impl EncodeJob<'_> {
    /// Only single-layer lossless files are coded on the device.
    fn lossless(&self) -> bool {
        self.options.target == RateTarget::Lossless && self.options.layers == 1
    }
}

/// An image read, with the output file it goes to.
struct Loaded {
    file: AtomicFile,
    image: codec::Interleaved,
}

/// An image encoded, with what its report needs.
struct Coded {
    file: AtomicFile,
    encoded: codec::Encoded,
    shape: (usize, usize, usize, u8, f64),
    device_start: super::batch::start::DeviceStart,
    choice: wavelane::backend::auto::Choice,
}

impl FileJob for EncodeJob<'_> {
    type Loaded = Loaded;
    type Coded = Coded;
    const INPUTS: &'static [&'static str] = &["png", "pgm", "ppm", "pnm", "tif", "tiff"];
    const OUTPUT: &'static str = "wl";

    fn peek(&self, input: &Path) -> Option<Job> {
        let lossless = self.lossless();
        peek_samples(input).map(|samples| Job::Encode { samples, lossless })
    }

    fn skip(&self, out: &Path) -> Option<&'static str> {
        (self.args.skip_existing && complete_wl(out)).then_some("is complete")
    }

    fn read(&self, input: &Path, out: &Path) -> Result<Loaded, CliError> {
        // The output is opened first: an unwritable target fails before the
        // encode is spent, and a killed run leaves only a temporary file
        // (wavelane::output).
        let file = AtomicFile::create(out)?;
        // Samples as the file holds them: the GPU backend uploads them as
        // they are, with no `i32` planes made on the way.
        let mut image = image_io::load_interleaved(input)?;
        if let Some(b) = self.args.bit_depth {
            image = image.with_bit_depth(b)?;
        }
        Ok(Loaded { file, image })
    }

    fn code(&self, _input: &Path, loaded: Loaded, coder: &mut Coder) -> Result<Coded, CliError> {
        let Loaded { file, image } = loaded;
        let job = Job::Encode {
            samples: image.len() as u64,
            lossless: self.lossless(),
        };
        let (backend, device_start, choice) = coder.backend(job)?;
        let shape = (
            image.width,
            image.height,
            image.components,
            image.bit_depth,
            image.len() as f64,
        );
        // Encoding runs some forty parallel regions (stages, DWT levels);
        // started from a pool thread, each is a push onto its queue, where
        // from this thread each would be a hand-over to the pool and a
        // sleep and wake-up of this thread.
        let (encoded, ()) = rayon::join(
            || codec::encode_interleaved(&image, &self.options, &backend),
            || (),
        );
        Ok(Coded {
            file,
            encoded: encoded?,
            shape,
            device_start,
            choice,
        })
    }

    fn write(&self, input: &Path, out: &Path, coded: Coded) -> Result<Done, CliError> {
        let Coded {
            mut file,
            encoded,
            shape: (width, height, components, bit_depth, samples),
            device_start,
            choice,
        } = coded;
        file.write_all(&encoded.bytes)?;
        file.commit()?;
        let r = &encoded.report;
        let image_bytes = samples as u64 * if bit_depth > 8 { 2 } else { 1 };
        if self.args.json {
            let json = serde_json::json!({
                "input": input, "output": out, "width": width, "height": height,
                "components": components, "bit_depth": bit_depth,
                "target": self.options.target, "report": r,
                "megasamples_per_second": samples / r.seconds.total / 1e6,
                "transfers": r.transfers, "stages": r.stages,
                "device_start": device_start, "backend_choice": choice,
            });
            return Ok(Done {
                json: Some(json),
                image_bytes,
                ..Done::default()
            });
        }
        let quality = match (r.measured_psnr, r.estimated_psnr) {
            (Some(p), _) => format!(", PSNR {p:.2} dB"),
            (None, Some(p)) => format!(", PSNR ~{p:.2} dB (model)"),
            _ => ", lossless".to_string(),
        };
        let text = format!(
            "{} -> {}: {}x{}x{} {}-bit, {} bytes ({:.4} bpp){quality}, {:.3} s ({:.1} MS/s) on {}",
            input.display(),
            out.display(),
            width,
            height,
            components,
            bit_depth,
            r.bytes,
            r.bpp,
            r.seconds.total,
            samples / r.seconds.total / 1e6,
            r.backend
        );
        Ok(Done {
            text: Some(text),
            image_bytes,
            ..Done::default()
        })
    }
}
