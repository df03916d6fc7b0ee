//! `wavelane bench codec`: the arguments and the printing of
//! [`wavelane::bench::codec`], which measures (and documents what each
//! figure times and how every run is checked).

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use indicatif::ProgressBar;

use super::batch::{parse_devices, DeviceList};
use super::encode::WaveletArg;
use super::CliResult;
use crate::args::BackendArg;
use wavelane::backend::Backend;
use wavelane::bench::codec::{self as bench, CodecConfig};
use wavelane::codec::{EncodeOptions, RateTarget};
use wavelane::image_io;

/// Arguments of `wavelane bench codec`.
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  wavelane bench codec --size 7680x4320 --bpp 1 --backend gpu --json
  wavelane bench codec --input photo.png --lossless --repeats 10
  wavelane bench codec --size 1024x1024 --components 1 --bit-depth 12 --bpp 0.5 --layers 4 --backend cpu
  wavelane bench codec --size 7680x4320 --lossless --frames 64 --backend gpu --json
  wavelane bench codec --size 7680x4320 --bpp 1 --frames 64 --devices all   # one worker per GPU
  wavelane bench codec --size 3840x2160 --lossless --frames 64 --devices 0,0 # two workers on GPU 0

With --frames N, N copies of the image go through the pipeline of a batch of
files (encode and decode batches: readers, one coder per worker, writers) and
the report gives steady-state frames/s, G samples/s, and GB/s of transfers.")]
#[command(group = clap::ArgGroup::new("rate").args(["lossless", "bpp"]))]
pub struct CodecBenchArgs {
    /// The image to code (PNG, PGM/PPM, TIFF); a generated one by default.
    #[arg(long)]
    input: Option<PathBuf>,
    /// The generated image's size, WxH.
    #[arg(long, default_value = "2048x2048", conflicts_with = "input")]
    size: String,
    /// The generated image's components.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=4),
          conflicts_with = "input")]
    components: u8,
    /// The generated image's bits per sample.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(1..=16),
          conflicts_with = "input")]
    bit_depth: u8,
    /// Bit-exact coding (the default when no rate is given).
    #[arg(long)]
    lossless: bool,
    /// Target size in bits per pixel of the whole file.
    #[arg(long, value_name = "X")]
    bpp: Option<f64>,
    /// Quality layers.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=32))]
    layers: u8,
    /// Wavelet (default: 53 lossless, 97i lossy).
    #[arg(long, value_enum)]
    wavelet: Option<WaveletArg>,
    /// Timed repeats of the encode and of the decode (after one warm-up).
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    /// Where to run; the device is opened once, before any timing, and its
    /// start-up is reported apart.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Time a batch of N frames through the batch pipeline instead of single calls:
    /// steady-state frames/s, G samples/s and GB/s of transfers.
    #[arg(long, value_name = "N", conflicts_with = "repeats")]
    frames: Option<usize>,
    /// With --frames: code on these GPUs (`all`, or indices as `wavelane devices`
    /// lists them; one listed twice runs two workers on it).
    #[arg(long, value_name = "all|0,1,...", value_parser = parse_devices, requires = "frames")]
    devices: Option<DeviceList>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_size(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--size: {s:?} is not WxH with positive sides");
    let (w, h) = s.split_once('x').ok_or_else(bad)?;
    let (w, h): (usize, usize) = (w.parse().map_err(|_| bad())?, h.parse().map_err(|_| bad())?);
    if w == 0 || h == 0 {
        return Err(bad());
    }
    Ok((w, h))
}

/// Runs `wavelane bench codec`.
pub fn run(a: CodecBenchArgs) -> CliResult {
    if a.repeats == 0 {
        return Err("--repeats must be positive".into());
    }
    let image = match &a.input {
        Some(path) => image_io::load(path)?,
        None => {
            let (w, h) = parse_size(&a.size)?;
            bench::synthetic_image(w, h, a.components.into(), a.bit_depth)
        }
    };
    let options = EncodeOptions {
        target: match a.bpp {
            Some(b) => RateTarget::Bpp(b),
            None => RateTarget::Lossless,
        },
        wavelet: a.wavelet.map(WaveletArg::wavelet),
        layers: a.layers,
        ..EncodeOptions::default()
    };
    if let Some(frames) = a.frames {
        return crate::bench_batch::run(crate::bench_batch::BatchBench {
            image,
            options,
            frames,
            backend: a.backend.into(),
            devices: a.devices.as_ref(),
            json: a.json,
        });
    }
    // Opened once, before any timing; no clock warm-up (it would add busy
    // work before every submission of a whole encode, unlike a real one).
    let t = Instant::now();
    let backend = Backend::select(a.backend.into())?;
    let device_start_seconds = t.elapsed().as_secs_f64();
    let bar = if a.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new_spinner()
    };
    let config = CodecConfig {
        image,
        options,
        repeats: a.repeats,
    };
    let mut report = bench::run(&config, &backend, |m| bar.set_message(m.to_owned()))?;
    bar.finish_and_clear();
    if backend.gpu().is_some() {
        report.device_start_seconds = device_start_seconds;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "codec {}x{}x{} {}-bit, {:?}, {} layer(s), {}: {} bytes ({:.4} bpp) on {}; device start-up {:.3} s",
        report.width,
        report.height,
        report.components,
        report.bit_depth,
        report.target,
        report.layers,
        report.wavelet,
        report.file_bytes,
        report.bpp,
        report.backend,
        report.device_start_seconds
    );
    for r in &report.results {
        let kernel = r
            .kernel_ms
            .map_or("-".to_string(), |k| format!("{:.3}", k.best));
        println!(
            "{}: wall best {:.3} ms, median {:.3} ms; kernel {kernel} ms; {:.2} frames/s, {:.3} GS/s; \
             upload {} B, download {} B",
            r.op,
            r.best_ms,
            r.median_ms,
            r.frames_per_s,
            r.gsamples_per_s,
            r.transfers.upload_bytes,
            r.transfers.download_bytes
        );
        for s in &r.stages {
            println!(
                "  {:<13} {:>4} {:>10.3} ms (median {:.3}){}",
                s.name,
                format!("{:?}", s.device).to_lowercase(),
                s.best_ms,
                s.median_ms,
                if s.kernel_ms > 0.0 {
                    format!(", kernels {:.3} ms", s.kernel_ms)
                } else {
                    String::new()
                }
            );
        }
        // The longest shaders of the best repeat: where the kernel time goes.
        for k in r.kernels.iter().take(8) {
            println!(
                "    kernel {:<28} {:>4} x {:>8.3} ms",
                k.shader, k.dispatches, k.ms
            );
        }
    }
    Ok(())
}
