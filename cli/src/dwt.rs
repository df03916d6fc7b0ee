//! `wavelane dwt`: run the wavelet transform on an image (or invert a raw
//! coefficient file) and write the Mallat-layout coefficients as raw
//! little-endian samples, optionally with a viewable PNG and a JSON listing
//! of every subband.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, ValueEnum};
use serde_json::json;
use wavelane_core::dwt::{self, shift, Cdf53, Cdf97, Fixed97, ImageLayout, Orientation, Wavelet};

use super::CliResult;
use crate::args::BackendArg;
use wavelane::backend::Backend;
use wavelane::codec::Image;
use wavelane::dwt::{self as host_dwt, HostWavelet};
use wavelane::image_io::{self, FileFormat};

/// Wavelet names on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WaveletArg {
    /// Reversible CDF 5/3 (i32 coefficients, lossless).
    #[value(name = "53")]
    Cdf53,
    /// CDF 9/7 in f32 with JPEG 2000 normalization (f32 coefficients).
    #[value(name = "97")]
    Cdf97,
    /// Fixed-point integer CDF 9/7 (i32 coefficients, reversible).
    #[value(name = "97i")]
    Fixed97,
}

impl WaveletArg {
    /// The core wavelet.
    pub fn wavelet(self) -> Wavelet {
        match self {
            WaveletArg::Cdf53 => Wavelet::Cdf53,
            WaveletArg::Cdf97 => Wavelet::Cdf97,
            WaveletArg::Fixed97 => Wavelet::Fixed97,
        }
    }
}

/// Arguments of `wavelane dwt`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  wavelane dwt photo.pgm --wavelet 53 --levels 5 -o coeffs.raw --png view.png --json\n  wavelane dwt coeffs.raw --inverse --width 640 --height 480 --wavelet 53 --levels 5 -o back.pgm"
)]
pub struct DwtArgs {
    /// Input: a greyscale PGM/PNG image (level-shifted by 2^(depth-1) before
    /// the transform) or, with --inverse, a raw coefficient file.
    pub input: PathBuf,
    /// Wavelet: 53 (reversible), 97 (float) or 97i (fixed point).
    #[arg(long, value_enum, default_value_t = WaveletArg::Cdf53)]
    pub wavelet: WaveletArg,
    /// Decomposition levels (at most ceil(log2(max(width, height)))).
    #[arg(long, default_value_t = 5)]
    pub levels: u32,
    /// Output. Forward: the Mallat-layout coefficient image, no header,
    /// little-endian i32 (53, 97i) or f32 (97). Inverse: a .pgm/.png image,
    /// or raw little-endian i32 samples for any other extension.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Invert a raw coefficient file instead (needs --width and --height).
    #[arg(long)]
    pub inverse: bool,
    /// Width of the raw input (--inverse).
    #[arg(long, required_if_eq("inverse", "true"))]
    pub width: Option<usize>,
    /// Height of the raw input (--inverse).
    #[arg(long, required_if_eq("inverse", "true"))]
    pub height: Option<usize>,
    /// Bit depth of the reconstructed image (--inverse): the level shift to
    /// undo and the range to clamp to.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(1..=16))]
    pub bits: u8,
    /// Also write a viewable picture of the subbands (forward only).
    #[arg(long)]
    pub png: Option<PathBuf>,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Print width, height, timing and every subband's rectangle as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `wavelane dwt`.
pub fn run(args: DwtArgs) -> CliResult {
    let backend = Backend::select(args.backend.into())?;
    if args.inverse {
        return inverse(&args, &backend);
    }
    if args.png.as_ref().is_some_and(|p| p == &args.output) {
        return Err("--png must differ from -o".into());
    }
    let image = image_io::load(&args.input)?;
    if image.planes.len() != 1 {
        return Err(format!(
            "{}: expected a greyscale image, got {} components",
            args.input.display(),
            image.planes.len()
        )
        .into());
    }
    let (w, h) = (image.width, image.height);
    check_levels(w, h, args.levels)?;
    let mut samples = image.planes[0].clone();
    if !image.signed {
        shift::shift_forward(&mut samples, image.bit_depth as u32)?;
    }
    let layout = ImageLayout::new(w, h);
    let start = Instant::now();
    let (bytes, view) = match args.wavelet {
        WaveletArg::Cdf53 => forward_int::<Cdf53>(&backend, samples, layout, args.levels)?,
        WaveletArg::Fixed97 => forward_int::<Fixed97>(&backend, samples, layout, args.levels)?,
        WaveletArg::Cdf97 => {
            let mut f: Vec<f32> = samples.iter().map(|&v| v as f32).collect();
            host_dwt::forward_2d::<Cdf97>(&backend, &mut f, layout, args.levels)?;
            let bytes = f.iter().flat_map(|v| v.to_le_bytes()).collect();
            (bytes, f.iter().map(|&v| v as f64).collect::<Vec<_>>())
        }
    };
    let elapsed = start.elapsed();
    wavelane::output::write_atomic(&args.output, &bytes)?;
    if let Some(png) = &args.png {
        write_view(png, &view, w, h, args.levels)?;
    }
    if args.json {
        let bands: Vec<_> = dwt::subbands(w, h, args.levels)?
            .map(|b| {
                json!({
                    "level": b.level,
                    "orientation": b.orientation.name(),
                    "orientation_index": b.orientation as u8,
                    "x": b.rect.x, "y": b.rect.y,
                    "width": b.rect.width, "height": b.rect.height,
                })
            })
            .collect();
        let report = json!({
            "width": w,
            "height": h,
            "bit_depth": image.bit_depth,
            "levels": args.levels,
            "wavelet": format!("{:?}", args.wavelet.wavelet()),
            "sample_format": if args.wavelet == WaveletArg::Cdf97 { "f32le" } else { "i32le" },
            "backend": backend.describe(),
            "time_ms": elapsed.as_secs_f64() * 1e3,
            "subbands": bands,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        eprintln!(
            "{}x{} {}-bit, {} levels of {:?} on {} in {:.2} ms -> {}",
            w,
            h,
            image.bit_depth,
            args.levels,
            args.wavelet.wavelet(),
            backend.describe(),
            elapsed.as_secs_f64() * 1e3,
            args.output.display()
        );
    }
    Ok(())
}

fn check_levels(w: usize, h: usize, levels: u32) -> CliResult {
    let max = dwt::max_levels(w, h);
    if levels > max {
        return Err(format!("--levels {levels}: a {w}x{h} image allows at most {max}").into());
    }
    Ok(())
}

type Forward = (Vec<u8>, Vec<f64>);

fn forward_int<W: HostWavelet<HostSample = i32>>(
    backend: &Backend,
    mut data: Vec<i32>,
    layout: ImageLayout,
    levels: u32,
) -> Result<Forward, super::CliError> {
    host_dwt::forward_2d::<W>(backend, &mut data, layout, levels)?;
    let bytes = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    Ok((bytes, data.iter().map(|&v| v as f64).collect()))
}

fn inverse(args: &DwtArgs, backend: &Backend) -> CliResult {
    let (w, h) = match (args.width, args.height) {
        (Some(w), Some(h)) if w > 0 && h > 0 => (w, h),
        _ => return Err("--inverse needs --width and --height (both > 0)".into()),
    };
    check_levels(w, h, args.levels)?;
    let raw = std::fs::read(&args.input).map_err(|e| format!("{}: {e}", args.input.display()))?;
    let expected = w * h * 4;
    if raw.len() != expected {
        return Err(format!(
            "{}: {} bytes, but {w}x{h} 32-bit coefficients need {expected}",
            args.input.display(),
            raw.len()
        )
        .into());
    }
    let words = raw.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]);
    let layout = ImageLayout::new(w, h);
    let bits = args.bits as u32;
    let mut samples: Vec<i32> = match args.wavelet {
        WaveletArg::Cdf53 | WaveletArg::Fixed97 => {
            let mut data: Vec<i32> = words.map(i32::from_le_bytes).collect();
            if args.wavelet == WaveletArg::Cdf53 {
                host_dwt::inverse_2d::<Cdf53>(backend, &mut data, layout, args.levels)?;
            } else {
                host_dwt::inverse_2d::<Fixed97>(backend, &mut data, layout, args.levels)?;
            }
            data
        }
        WaveletArg::Cdf97 => {
            let mut data: Vec<f32> = words.map(f32::from_le_bytes).collect();
            host_dwt::inverse_2d::<Cdf97>(backend, &mut data, layout, args.levels)?;
            // Saturating float-to-int conversion; NaN becomes 0.
            data.iter().map(|v| v.round() as i32).collect()
        }
    };
    shift::shift_inverse(&mut samples, bits)?;
    match FileFormat::from_path(&args.output) {
        Some(FileFormat::Png) | Some(FileFormat::Pnm) => {
            let image = Image {
                width: w,
                height: h,
                bit_depth: args.bits,
                signed: false,
                planes: vec![samples],
            };
            image_io::save(&image, &args.output)?;
        }
        _ => {
            let bytes: Vec<u8> = samples.iter().flat_map(|v| v.to_le_bytes()).collect();
            wavelane::output::write_atomic(&args.output, &bytes)?;
        }
    }
    if !args.json {
        eprintln!(
            "{w}x{h} inverse {} levels on {} -> {}",
            args.levels,
            backend.describe(),
            args.output.display()
        );
    } else {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "width": w, "height": h, "levels": args.levels, "bit_depth": args.bits,
                "wavelet": format!("{:?}", args.wavelet.wavelet()), "backend": backend.describe(),
            }))?
        );
    }
    Ok(())
}

/// 8-bit picture of the coefficients: the LL band stretched to 0..255, each
/// detail band as mid-grey plus its signed values scaled by the band's peak
/// magnitude (square-root companded so that small details stay visible).
fn write_view(path: &Path, coeffs: &[f64], w: usize, h: usize, levels: u32) -> CliResult {
    let mut pixels = vec![0i32; w * h];
    for band in dwt::subbands(w, h, levels)? {
        let r = band.rect;
        let at = |x: usize, y: usize| (r.y + y) * w + r.x + x;
        let values = (0..r.height).flat_map(|y| (0..r.width).map(move |x| (x, y)));
        if band.orientation == Orientation::LL {
            let (lo, hi) = values
                .clone()
                .fold((f64::MAX, f64::MIN), |(lo, hi), (x, y)| {
                    let v = coeffs[at(x, y)];
                    (lo.min(v), hi.max(v))
                });
            let span = (hi - lo).max(1e-9);
            for (x, y) in values {
                pixels[at(x, y)] = ((coeffs[at(x, y)] - lo) / span * 255.0).round() as i32;
            }
        } else {
            let peak = values
                .clone()
                .fold(1e-9f64, |m, (x, y)| m.max(coeffs[at(x, y)].abs()));
            for (x, y) in values {
                let v = coeffs[at(x, y)] / peak;
                pixels[at(x, y)] = (128.0 + 127.0 * v.signum() * v.abs().sqrt()).round() as i32;
            }
        }
    }
    let image = Image {
        width: w,
        height: h,
        bit_depth: 8,
        signed: false,
        planes: vec![pixels],
    };
    image_io::save(&image, path)?;
    Ok(())
}
