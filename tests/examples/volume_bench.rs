//! The volume benchmark of docs/benchmarks.md ("Volumes"): on the real MRI
//! volumes of the tests (nibabel's, in .venv/: scripts/setup.sh --test)
//! and a synthetic 256x256x128 CT-like phantom, compares
//!
//! - lossless bytes of the volume coder against our 2-D codec and
//!   `opj_compress` (OpenJPEG, reversible 5/3) applied slice by slice;
//! - PSNR at 0.5 and 1 bit/voxel against `opj_compress -r` slice by slice at
//!   the same rate;
//! - CPU encode time per voxel against `ojph_compress` (OpenJPH, reversible)
//!   on the slices stacked into one tall image (one process start).
//!
//! `cargo run --release -p wavelane-tests --example volume_bench` (the
//! machine's cores should be otherwise idle for the times).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use wavelane::backend::Backend;
use wavelane::codec::{self, EncodeOptions, Image};
use wavelane::volume::io::nifti;
use wavelane::volume::{self, SampleType, Volume, VolumeDecodeOptions, VolumeOptions};

fn nibabel_data() -> PathBuf {
    let lib = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/lib");
    std::fs::read_dir(&lib)
        .expect("no .venv: run scripts/setup.sh --test")
        .filter_map(|d| d.ok())
        .map(|d| d.path().join("site-packages/nibabel/tests/data"))
        .find(|p| p.join("anatomical.nii").is_file())
        .expect("nibabel test data missing: run scripts/setup.sh --test")
}

fn volumes() -> Vec<(&'static str, Volume)> {
    let dir = nibabel_data();
    let anat = wavelane::volume::io::load(&dir.join("anatomical.nii"), None, 1 << 28).unwrap();
    let mut gz = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(
            std::fs::File::open(dir.join("example4d.nii.gz")).unwrap(),
        ),
        &mut gz,
    )
    .unwrap();
    gz[40..42].copy_from_slice(&3i16.to_le_bytes());
    gz[48..50].copy_from_slice(&1i16.to_le_bytes());
    let offset = f32::from_le_bytes(gz[108..112].try_into().unwrap()) as usize;
    gz.truncate(offset + 128 * 96 * 24 * 2);
    let fmri = nifti::read(&gz[..], 1 << 28).unwrap();
    // A CT-like phantom: air, a soft-tissue ellipsoid with texture, bone rim.
    let (w, h, d) = (256, 256, 128);
    let phantom = Volume::from_fn(w, h, d, SampleType::I16, |x, y, z| {
        let (fx, fy, fz) = (
            x as f64 / w as f64 - 0.5,
            y as f64 / h as f64 - 0.5,
            z as f64 / d as f64 - 0.5,
        );
        let r = (fx * fx / 0.16 + fy * fy / 0.12 + fz * fz / 0.2).sqrt();
        let n = ((x * 7919 + y * 104_729 + z * 1_299_709) % 31) as i32 - 15;
        if r > 1.0 {
            -1000 + n
        } else if r > 0.92 {
            900 + 4 * n
        } else {
            (40.0 + 30.0 * (fx * 40.0).sin() * (fz * 25.0).cos()) as i32 + n
        }
    });
    vec![
        ("anatomical (MRI T1)", anat),
        ("example4d vol 0 (fMRI)", fmri),
        ("phantom (CT-like)", phantom),
    ]
}

/// Slice `z` as an unsigned 16-bit PGM (signed samples offset by 32768).
fn pgm(v: &Volume, z: usize, path: &Path) {
    let off = if v.sample.signed() { 32768 } else { 0 };
    let mut b = format!("P5\n{} {}\n65535\n", v.width, v.height).into_bytes();
    for &s in v.slice(z) {
        b.extend_from_slice(&((s + off) as u16).to_be_bytes());
    }
    std::fs::write(path, b).unwrap();
}

fn read_pgm(path: &Path, v: &Volume) -> Vec<i32> {
    let b = std::fs::read(path).unwrap();
    let off = if v.sample.signed() { 32768 } else { 0 };
    let data = &b[b.len() - v.width * v.height * 2..];
    data.chunks_exact(2)
        .map(|p| u16::from_be_bytes([p[0], p[1]]) as i32 - off)
        .collect()
}

fn run(cmd: &str, args: &[&str]) -> f64 {
    let t = Instant::now();
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    t.elapsed().as_secs_f64()
}

fn psnr(a: &[i32], b: &[i32], peak: f64) -> f64 {
    let mse = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| ((x - y) as f64).powi(2))
        .sum::<f64>()
        / a.len() as f64;
    10.0 * (peak * peak / mse.max(1e-12)).log10()
}

fn main() {
    let tmp = std::env::temp_dir().join(format!("wavelane-volume-bench-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    println!("| volume | voxels | 3-D lossless bytes | 2-D codec per slice | opj per slice | 3-D / 2-D | 3-D / opj |");
    println!("|---|---|---|---|---|---|---|");
    let vols = volumes();
    let mut lossy_rows = Vec::new();
    let mut speed_rows = Vec::new();
    for (name, v) in &vols {
        let t = Instant::now();
        let ours = volume::encode_volume(v, &VolumeOptions::lossless(), &Backend::Cpu).unwrap();
        let ours_s = t.elapsed().as_secs_f64();
        let mut slices_2d = 0;
        let mut opj = 0;
        for z in 0..v.depth {
            let mut img = Image::from_fn(v.width, v.height, 1, 16, |x, y, _| {
                v.slice(z)[y * v.width + x]
            });
            img.signed = v.sample.signed();
            slices_2d += codec::encode(&img, &EncodeOptions::lossless(), &Backend::Cpu)
                .unwrap()
                .bytes
                .len();
            let p = tmp.join(format!("s{z}.pgm"));
            pgm(v, z, &p);
            let j = tmp.join(format!("s{z}.j2k"));
            run(
                "opj_compress",
                &["-i", p.to_str().unwrap(), "-o", j.to_str().unwrap()],
            );
            opj += std::fs::metadata(&j).unwrap().len() as usize;
        }
        let b = ours.bytes.len();
        println!(
            "| {name} {}x{}x{} | {} | {b} | {slices_2d} | {opj} | {:.3} | {:.3} |",
            v.width,
            v.height,
            v.depth,
            v.voxels(),
            b as f64 / slices_2d as f64,
            b as f64 / opj as f64
        );
        let (lo, hi) = (
            v.samples.iter().min().unwrap(),
            v.samples.iter().max().unwrap(),
        );
        let peak = (hi - lo) as f64;
        for bpp in [0.5, 1.0] {
            let enc = volume::encode_volume(v, &VolumeOptions::bpp(bpp), &Backend::Cpu).unwrap();
            let dec =
                volume::decode_volume(&enc.bytes, &VolumeDecodeOptions::default(), &Backend::Cpu)
                    .unwrap();
            let ours_p = psnr(&v.samples, &dec.volume.samples, peak);
            let mut opj_bytes = 0;
            let mut opj_rec = Vec::with_capacity(v.voxels());
            for z in 0..v.depth {
                let p = tmp.join(format!("s{z}.pgm"));
                let j = tmp.join(format!("l{z}.j2k"));
                let r = format!("{}", 16.0 / bpp);
                run(
                    "opj_compress",
                    &[
                        "-i",
                        p.to_str().unwrap(),
                        "-o",
                        j.to_str().unwrap(),
                        "-r",
                        &r,
                        "-I",
                    ],
                );
                opj_bytes += std::fs::metadata(&j).unwrap().len() as usize;
                let o = tmp.join(format!("l{z}.pgm"));
                run(
                    "opj_decompress",
                    &["-i", j.to_str().unwrap(), "-o", o.to_str().unwrap()],
                );
                opj_rec.extend(read_pgm(&o, v));
            }
            let opj_p = psnr(&v.samples, &opj_rec, peak);
            lossy_rows.push(format!(
                "| {name} | {bpp} | {} | {ours_p:.2} | {opj_bytes} | {opj_p:.2} | {:+.2} |",
                enc.bytes.len(),
                ours_p - opj_p
            ));
        }
        // ojph_compress on the slices stacked into one tall image.
        let tall = tmp.join("tall.pgm");
        let off = if v.sample.signed() { 32768 } else { 0 };
        let mut pb = format!("P5\n{} {}\n65535\n", v.width, v.height * v.depth).into_bytes();
        for &s in &v.samples {
            pb.extend_from_slice(&((s + off) as u16).to_be_bytes());
        }
        std::fs::write(&tall, pb).unwrap();
        let j = tmp.join("tall.j2c");
        let ojph_s = (0..3)
            .map(|_| {
                run(
                    "ojph_compress",
                    &[
                        "-i",
                        tall.to_str().unwrap(),
                        "-o",
                        j.to_str().unwrap(),
                        "-reversible",
                        "true",
                    ],
                )
            })
            .fold(f64::MAX, f64::min);
        let ours_s = (0..2)
            .map(|_| {
                let t = Instant::now();
                volume::encode_volume(v, &VolumeOptions::lossless(), &Backend::Cpu).unwrap();
                t.elapsed().as_secs_f64()
            })
            .fold(ours_s, f64::min);
        let ns = |s: f64| s * 1e9 / v.voxels() as f64;
        speed_rows.push(format!(
            "| {name} | {:.1} | {:.1} | {:.2} |",
            ns(ours_s),
            ns(ojph_s),
            ours_s / ojph_s
        ));
    }
    println!(
        "\n| volume | bits/voxel | ours bytes | ours PSNR | opj bytes | opj PSNR | ours - opj dB |"
    );
    println!("|---|---|---|---|---|---|---|");
    for r in lossy_rows {
        println!("{r}");
    }
    println!("\n| volume | ours lossless encode ns/voxel | ojph_compress ns/voxel | ratio |");
    println!("|---|---|---|---|");
    for r in speed_rows {
        println!("{r}");
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
