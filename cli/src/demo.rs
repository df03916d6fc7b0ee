//! `wavelane demo`: the codec on a built-in public-domain photograph (or
//! any image), lossless and at several rates, on every backend that opens,
//! with a table, the decoded images and a rate-distortion plot.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::plot::{rd_plot, Series};
use super::CliResult;
use wavelane::backend::{Backend, Gpu};
use wavelane::codec::{self, DecodeOptions, EncodeOptions, Image, RateTarget};
use wavelane::image_io;

/// The built-in image: a 384x384 crop of NASA's portrait of astronaut
/// Eileen Collins (public domain; provenance in cli/assets/README.md).
pub const DEMO_IMAGE_PNG: &[u8] = include_bytes!("../assets/astronaut-384.png");

/// Arguments of `wavelane demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Folder for the decoded images, the .wl files and rd.png.
    #[arg(short, long, default_value = "wavelane-demo")]
    pub output: PathBuf,
    /// Use this image instead of the built-in one.
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// Lossy rates in bits per pixel, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [0.25, 0.5, 1.0, 2.0])]
    pub rates: Vec<f64>,
    /// Only the CPU backend, even when a GPU opens.
    #[arg(long)]
    pub cpu_only: bool,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// One encode + decode.
#[derive(Debug, serde::Serialize)]
struct Run {
    backend_name: &'static str,
    backend: String,
    target: String,
    bytes: usize,
    bpp: f64,
    psnr_db: Option<f64>,
    exact: bool,
    encode_seconds: f64,
    decode_seconds: f64,
    encode_megasamples_per_second: f64,
    decode_megasamples_per_second: f64,
    file: PathBuf,
    decoded: PathBuf,
}

/// The demo image, decoded.
pub fn demo_image() -> Image {
    image_io::decode_bytes(DEMO_IMAGE_PNG).expect("the built-in demo image is a valid PNG")
}

/// Runs `wavelane demo`.
pub fn run(args: DemoArgs) -> CliResult {
    let image = match &args.input {
        Some(p) => image_io::load(p)?,
        None => demo_image(),
    };
    std::fs::create_dir_all(&args.output)?;
    image_io::save(&image, &args.output.join("original.png"))?;
    let mut backends = vec![("cpu", Backend::Cpu)];
    if !args.cpu_only {
        match Gpu::shared() {
            Ok(g) => backends.push(("gpu", Backend::Gpu(g))),
            Err(e) => eprintln!("wavelane demo: no GPU ({e}); running on the CPU only"),
        }
    }
    let samples = image.samples() as f64;
    let mut targets = vec![("lossless".to_string(), RateTarget::Lossless)];
    targets.extend(
        args.rates
            .iter()
            .map(|&r| (format!("{r}bpp"), RateTarget::Bpp(r))),
    );
    let mut runs = Vec::new();
    for (name, backend) in &backends {
        // One untimed run so that one-off set-up (GPU pipelines) is not billed to the first row.
        codec::encode(&image, &EncodeOptions::lossless(), backend)?;
        for (label, target) in &targets {
            let options = EncodeOptions {
                target: *target,
                ..EncodeOptions::default()
            };
            let t = Instant::now();
            let encoded = codec::encode(&image, &options, backend)?;
            let encode_seconds = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let decoded = codec::decode(&encoded.bytes, &DecodeOptions::default(), backend)?;
            let decode_seconds = t.elapsed().as_secs_f64();
            let file = args.output.join(format!("{name}-{label}.wl"));
            let png = args.output.join(format!("{name}-{label}.png"));
            wavelane::output::write_atomic(&file, &encoded.bytes)?;
            image_io::save(&decoded.image, &png)?;
            let psnr = codec::psnr(&image, &decoded.image).filter(|p| p.is_finite());
            runs.push(Run {
                backend_name: name,
                backend: backend.describe(),
                target: label.clone(),
                bytes: encoded.bytes.len(),
                bpp: encoded.report.bpp,
                psnr_db: psnr,
                exact: decoded.image == image,
                encode_seconds,
                decode_seconds,
                encode_megasamples_per_second: samples / encode_seconds / 1e6,
                decode_megasamples_per_second: samples / decode_seconds / 1e6,
                file,
                decoded: png,
            });
        }
    }
    let colours = [[200, 40, 40], [40, 90, 200]];
    let series: Vec<Series> = backends
        .iter()
        .enumerate()
        .map(|(k, (name, backend))| Series {
            name: name.to_uppercase(),
            colour: colours[k % 2],
            points: runs
                .iter()
                .filter(|r| r.backend == backend.describe() && r.psnr_db.is_some())
                .map(|r| (r.bpp, r.psnr_db.unwrap_or(0.0)))
                .collect(),
        })
        .collect();
    let plot = args.output.join("rd.png");
    // Encoded in memory, then written atomically like every output.
    let mut png = std::io::Cursor::new(Vec::new());
    rd_plot(&series).write_to(&mut png, image::ImageFormat::Png)?;
    wavelane::output::write_atomic(&plot, png.get_ref())?;
    if args.json {
        let v = serde_json::json!({
            "image": { "width": image.width, "height": image.height, "components": image.components(),
                       "bit_depth": image.bit_depth,
                       "source": args.input.as_ref().map_or("built-in astronaut-384.png".into(), |p| p.display().to_string()) },
            "runs": runs, "folder": args.output, "rd_plot": plot,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "wavelane demo: {}x{} {}-component {}-bit image ({})",
        image.width,
        image.height,
        image.components(),
        image.bit_depth,
        args.input.as_ref().map_or(
            "built-in NASA astronaut portrait, public domain".into(),
            |p| p.display().to_string()
        )
    );
    for (name, backend) in &backends {
        println!("  {name}: {}", backend.describe());
    }
    println!(
        "{:<7} {:>9} {:>9} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9}",
        "backend", "target", "bytes", "bpp", "PSNR dB", "enc s", "enc MS/s", "dec s", "dec MS/s"
    );
    for r in &runs {
        let quality = match (r.exact, r.psnr_db) {
            (true, _) => "exact".to_string(),
            (false, Some(p)) => format!("{p:.2}"),
            (false, None) => "-".to_string(),
        };
        println!(
            "{:<7} {:>9} {:>9} {:>8.4} {:>8} {:>9.4} {:>9.2} {:>9.4} {:>9.2}",
            r.backend_name,
            r.target,
            r.bytes,
            r.bpp,
            quality,
            r.encode_seconds,
            r.encode_megasamples_per_second,
            r.decode_seconds,
            r.decode_megasamples_per_second
        );
    }
    println!("(MS/s = million samples per second: width x height x components / time)");
    println!(
        "decoded images, .wl files and the RD plot ({}) are in {}",
        plot.display(),
        args.output.display()
    );
    Ok(())
}
