//! The H.264 encoder against the source picture, not only against its own
//! reconstruction: ffmpeg decodes each stream (converting to RGB or gray
//! with its default BT.601 limited-range matrix, the one the encoder's RGB
//! reader uses: docs/h264.md; gray input is converted as the colour (v, v, v)), and the result
//! must be near the source by
//! PSNR, with a floor per QP, and keep the colour of distinct red, green
//! and blue regions. A consistent colour error (Cb and Cr swapped, a wrong
//! matrix or range) passes every recon-equality test but fails here.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Parser;

const W: usize = 64;
const H: usize = 48;

/// Lowest PSNR (dB, over all RGB samples) of the decoded picture against
/// the source, per QP. This picture measures 1.4 to 1.6 dB above each
/// floor; 4:2:0 chroma and limited range cap even QP 0 near 44.5 dB. A
/// wrong colour conversion lands below 20 dB.
const RGB_FLOORS: [(u8, f64); 5] = [(0, 43.0), (10, 43.0), (30, 37.0), (40, 30.0), (51, 27.0)];

/// Gray input: luma quantization only, so higher floors (QP 0 measures
/// 71 dB against the limited-range reference luma, whose 220 levels leave
/// less headroom than the source's 256).
const GRAY_FLOORS: [(u8, f64); 4] = [(0, 70.0), (10, 58.0), (30, 39.0), (51, 22.0)];

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "wavelane-h264-source-{name}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Red, green and blue stripes (each two chroma blocks wide, on chroma
/// sample boundaries) and a textured fourth stripe.
fn source_rgb(x: usize, y: usize) -> [u8; 3] {
    match x / 16 {
        0 => [220, 30, 30],
        1 => [30, 200, 40],
        2 => [40, 40, 210],
        _ => [((x * 4) % 256) as u8, ((y * 5) % 256) as u8, 128],
    }
}

/// Gray levels per stripe and a ramp.
fn source_gray(x: usize, y: usize) -> u8 {
    match x / 16 {
        0 => 40,
        1 => 128,
        2 => 215,
        _ => ((x * 3 + y * 2) % 256) as u8,
    }
}

fn encode(input: &Path, qp: u8, out: &Path) {
    let cli = wavelane_cli::Cli::parse_from([
        "wavelane",
        "h264",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--qp",
        &qp.to_string(),
        "--backend",
        "cpu",
    ]);
    wavelane_cli::run(cli).unwrap();
}

/// ffmpeg's decode of `stream` as raw `pix_fmt` samples.
fn ffmpeg(stream: &Path, pix_fmt: &str) -> Vec<u8> {
    let out = stream.with_extension(pix_fmt);
    let status = Command::new("ffmpeg")
        .args([
            "-y",
            "-v",
            "error",
            "-err_detect",
            "explode",
            "-xerror",
            "-i",
        ])
        .arg(stream)
        .args(["-f", "rawvideo", "-pix_fmt", pix_fmt])
        .arg(&out)
        .status()
        .unwrap_or_else(|e| {
            panic!("these tests need ffmpeg on PATH (apt-get install ffmpeg): {e}")
        });
    assert!(status.success(), "ffmpeg rejected {}", stream.display());
    std::fs::read(&out).unwrap()
}

fn psnr(a: &[u8], b: &[u8]) -> f64 {
    assert_eq!(a.len(), b.len());
    let se: f64 = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| (x as f64 - y as f64).powi(2))
        .sum();
    10.0 * (255.0f64 * 255.0 / (se / a.len() as f64)).log10()
}

fn rgb_source() -> Vec<u8> {
    (0..W * H).flat_map(|i| source_rgb(i % W, i / W)).collect()
}

/// The centre pixel of each colour stripe keeps its colour: every channel
/// within `tolerance` of the source.
fn check_colours(what: &str, decoded_rgb: &[u8], tolerance: i32) {
    let y = H / 2;
    for stripe in 0..3 {
        let x = stripe * 16 + 8;
        let got = &decoded_rgb[(y * W + x) * 3..][..3];
        let want = source_rgb(x, y);
        assert!(
            got.iter()
                .zip(want)
                .all(|(&g, w)| (g as i32 - w as i32).abs() <= tolerance),
            "{what}: stripe {stripe} is {got:?}, the source {want:?}"
        );
    }
}

#[test]
fn h264_rgb_png_decodes_near_the_source_with_its_colours() {
    let dir = scratch("png");
    let png = dir.join("src.png");
    image::RgbImage::from_raw(W as u32, H as u32, rgb_source())
        .unwrap()
        .save(&png)
        .unwrap();
    for (qp, floor) in RGB_FLOORS {
        let out = dir.join(format!("qp{qp}.264"));
        encode(&png, qp, &out);
        let decoded = ffmpeg(&out, "rgb24");
        let p = psnr(&rgb_source(), &decoded);
        assert!(p >= floor, "QP {qp}: {p:.2} dB, floor {floor}");
        check_colours(
            &format!("PNG QP {qp}"),
            &decoded,
            if qp > 40 { 20 } else { 8 },
        );
    }
}

#[test]
fn h264_gray_pgm_decodes_near_the_source_and_stays_neutral() {
    let dir = scratch("pgm");
    let pgm = dir.join("src.pgm");
    let gray: Vec<u8> = (0..W * H).map(|i| source_gray(i % W, i / W)).collect();
    image::GrayImage::from_raw(W as u32, H as u32, gray.clone())
        .unwrap()
        .save(&pgm)
        .unwrap();
    // docs/h264.md: a gray value v is coded as the colour (v, v, v) is,
    // BT.601 limited-range luma with neutral chroma, so that players show
    // gray and colour inputs alike. The reference luma is the RGB reader's
    // for (v, v, v); the stripes below check it against the independent
    // float conversion.
    let as_rgb = image::RgbImage::from_fn(W as u32, H as u32, |x, y| {
        let v = gray[y as usize * W + x as usize];
        image::Rgb([v, v, v])
    });
    let reference = wavelane::h264::input::from_image(&image::DynamicImage::ImageRgb8(as_rgb))
        .unwrap()
        .frames[0]
        .y
        .data
        .clone();
    assert_eq!(reference.len(), W * H);
    for (qp, floor) in GRAY_FLOORS {
        let out = dir.join(format!("qp{qp}.264"));
        encode(&pgm, qp, &out);
        let yuv = ffmpeg(&out, "yuv420p");
        let (luma, chroma) = yuv.split_at(W * H);
        let p = psnr(&reference, luma);
        assert!(p >= floor, "QP {qp}: {p:.2} dB, floor {floor}");
        // No colour appears: both chroma planes stay neutral.
        assert_eq!(chroma.len(), W * H / 2);
        if let Some(c) = chroma.iter().find(|&&c| c != 128) {
            panic!("QP {qp}: gray input decodes with chroma {c}");
        }
        for stripe in 0..3 {
            let x = stripe * 16 + 8;
            let got = luma[(H / 2) * W + x] as i32;
            let v = gray[(H / 2) * W + x];
            let want = to_ycbcr([v, v, v])[0].round() as i32;
            let tol = if qp > 40 { 12 } else { 3 };
            assert!(
                (got - want).abs() <= tol,
                "QP {qp} stripe {stripe}: {got}, source {want}"
            );
        }
    }
}

/// BT.601 limited range, the conversion y4m producers use (and ffmpeg's
/// default): computed here, independently of the encoder's RGB reader.
fn to_ycbcr([r, g, b]: [u8; 3]) -> [f64; 3] {
    let (r, g, b) = (r as f64, g as f64, b as f64);
    [
        16.0 + (65.481 * r + 128.553 * g + 24.966 * b) / 255.0,
        128.0 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255.0,
        128.0 + (112.0 * r - 93.786 * g - 18.214 * b) / 255.0,
    ]
}

#[test]
fn h264_y4m_input_decodes_near_the_source_with_its_colours() {
    let dir = scratch("y4m");
    let mut y4m = format!("YUV4MPEG2 W{W} H{H} F25:1 Ip A1:1 C420jpeg\nFRAME\n").into_bytes();
    let at = |x: usize, y: usize| to_ycbcr(source_rgb(x, y));
    for y in 0..H {
        for x in 0..W {
            y4m.push(at(x, y)[0].round() as u8);
        }
    }
    for c in 1..3 {
        for y in 0..H / 2 {
            for x in 0..W / 2 {
                let sum: f64 = [(0, 0), (1, 0), (0, 1), (1, 1)]
                    .iter()
                    .map(|(dx, dy)| at(2 * x + dx, 2 * y + dy)[c])
                    .sum();
                y4m.push((sum / 4.0).round() as u8);
            }
        }
    }
    let input = dir.join("src.y4m");
    std::fs::write(&input, &y4m).unwrap();
    for (qp, floor) in RGB_FLOORS {
        let out = dir.join(format!("qp{qp}.264"));
        encode(&input, qp, &out);
        let decoded = ffmpeg(&out, "rgb24");
        let p = psnr(&rgb_source(), &decoded);
        assert!(p >= floor, "QP {qp}: {p:.2} dB, floor {floor}");
        check_colours(
            &format!("y4m QP {qp}"),
            &decoded,
            if qp > 40 { 20 } else { 8 },
        );
    }
}
