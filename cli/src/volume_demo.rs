//! `wavelane volume demo`: the volume coder on a built-in synthetic CT-like
//! phantom (air, a textured soft-tissue ellipsoid, a bone rim, i16 in
//! Hounsfield-like units), lossless and at several rates: a table of bytes,
//! PSNR and times, and a PNG of the orthogonal mid slices before and after.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::CliResult;
use crate::args::BackendArg;
use wavelane::backend::Backend;
use wavelane::codec::Image;
use wavelane::image_io;
use wavelane::output::AtomicFile;
use wavelane::volume::{
    self, SampleType, Volume, VolumeDecodeOptions, VolumeOptions, VolumeTarget,
};

/// Arguments of `wavelane volume demo`.
#[derive(Debug, Args)]
pub struct VolumeDemoArgs {
    /// Folder for the .wl files and slices.png.
    #[arg(short, long, default_value = "wavelane-demo")]
    pub output: PathBuf,
    /// Lossy rates in bits per voxel, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [0.25, 0.5, 1.0])]
    pub rates: Vec<f64>,
    /// Where the transform and coder run.
    #[arg(long, value_enum, default_value_t = BackendArg::Cpu)]
    pub backend: BackendArg,
}

/// The built-in phantom, `w x h x d`.
pub fn phantom(w: usize, h: usize, d: usize) -> Volume {
    Volume::from_fn(w, h, d, SampleType::I16, |x, y, z| {
        let fx = x as f64 / w as f64 - 0.5;
        let fy = y as f64 / h as f64 - 0.5;
        let fz = z as f64 / d as f64 - 0.5;
        let r = (fx * fx / 0.16 + fy * fy / 0.12 + fz * fz / 0.2).sqrt();
        let n = ((x * 7919 + y * 104_729 + z * 1_299_709) % 31) as i32 - 15;
        if r > 1.0 {
            -1000 + n
        } else if r > 0.92 {
            900 + 4 * n
        } else {
            (40.0 + 30.0 * (fx * 40.0).sin() * (fz * 25.0).cos()) as i32 + n
        }
    })
}

fn psnr(a: &Volume, b: &Volume) -> f64 {
    let (lo, hi) = (a.samples.iter().min(), a.samples.iter().max());
    let peak = (*hi.unwrap_or(&0) - *lo.unwrap_or(&0)).max(1) as f64;
    let se: f64 = (a.samples.iter().zip(&b.samples))
        .map(|(&x, &y)| ((x - y) as f64).powi(2))
        .sum();
    let mse = se / a.samples.len() as f64;
    if mse == 0.0 {
        f64::INFINITY
    } else {
        10.0 * (peak * peak / mse).log10()
    }
}

/// The axial (z), coronal (y) and sagittal (x) mid slices of each volume
/// side by side, one row per volume, windowed to 8 bits over the first
/// volume's range.
fn orthogonal_slices(volumes: &[&Volume]) -> Image {
    let v0 = volumes[0];
    let (w, h, d) = (v0.width, v0.height, v0.depth);
    let lo = *v0.samples.iter().min().unwrap_or(&0);
    let hi = *v0.samples.iter().max().unwrap_or(&1);
    let span = (hi - lo).max(1) as f64;
    let row_h = h.max(d);
    let width = w + 2 + w + 2 + h;
    let mut plane = vec![0i32; width * row_h * volumes.len()];
    for (r, v) in volumes.iter().enumerate() {
        let at = |x: usize, y: usize, z: usize| v.samples[(z * h + y) * w + x];
        let mut put = |px: usize, py: usize, s: i32| {
            plane[(r * row_h + py) * width + px] =
                (((s - lo) as f64 / span) * 255.0).round().clamp(0.0, 255.0) as i32;
        };
        for y in 0..h {
            for x in 0..w {
                put(x, y, at(x, y, d / 2));
            }
        }
        for z in 0..d {
            for x in 0..w {
                put(w + 2 + x, z, at(x, h / 2, z));
            }
            for y in 0..h {
                put(2 * w + 4 + y, z, at(w / 2, y, z));
            }
        }
    }
    Image {
        width,
        height: row_h * volumes.len(),
        bit_depth: 8,
        signed: false,
        planes: vec![plane],
    }
}

/// Runs `wavelane volume demo`.
pub fn run(args: VolumeDemoArgs) -> CliResult {
    std::fs::create_dir_all(&args.output)?;
    let backend = Backend::select(args.backend.into())?;
    let v = phantom(96, 80, 48);
    println!(
        "volume demo: a {}x{}x{} i16 CT-like phantom ({} voxels) on {}",
        v.width,
        v.height,
        v.depth,
        v.voxels(),
        backend.describe()
    );
    println!(
        "{:<10} {:>9} {:>10} {:>9} {:>10} {:>10}",
        "target", "bytes", "bits/vox", "PSNR dB", "encode s", "decode s"
    );
    let mut targets = vec![VolumeTarget::Lossless];
    targets.extend(args.rates.iter().map(|&r| VolumeTarget::Bpp(r)));
    let mut shown = None;
    for target in targets {
        let o = VolumeOptions {
            target,
            ..VolumeOptions::lossless()
        };
        let t = Instant::now();
        let enc = volume::encode_volume(&v, &o, &backend)?;
        let enc_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let dec = volume::decode_volume(&enc.bytes, &VolumeDecodeOptions::default(), &backend)?;
        let dec_s = t.elapsed().as_secs_f64();
        let name = match target {
            VolumeTarget::Lossless => "lossless".to_string(),
            VolumeTarget::Bpp(b) => format!("{b} bpv"),
        };
        let p = psnr(&v, &dec.volume);
        println!(
            "{name:<10} {:>9} {:>10.4} {:>9.2} {enc_s:>10.3} {dec_s:>10.3}",
            enc.bytes.len(),
            enc.report.bits_per_voxel,
            p
        );
        let file = args
            .output
            .join(format!("phantom-{}.wl", name.replace(' ', "")));
        let mut out = AtomicFile::create(&file)?;
        out.write_all(&enc.bytes)?;
        out.commit()?;
        if target == VolumeTarget::Bpp(0.5) || (shown.is_none() && target != VolumeTarget::Lossless)
        {
            shown = Some((name, dec.volume));
        }
    }
    if let Some((name, decoded)) = shown {
        let png = args.output.join("slices.png");
        image_io::save(&orthogonal_slices(&[&v, &decoded]), &png)?;
        println!(
            "{}: axial, coronal and sagittal mid slices; top the phantom, bottom {name}",
            png.display()
        );
    }
    Ok(())
}
