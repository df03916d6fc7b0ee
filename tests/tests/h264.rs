//! The H.264 intra encoder against ffmpeg: every stream we write must decode
//! (with `-err_detect explode`) to exactly our `--recon`, across QPs, odd
//! sizes, gray and colour, both luma mode families, single images and
//! multi-frame y4m, through the library and through the CLI. Our own
//! parser must read every stream back to the levels the encoder coded, and
//! the GPU entropy coder must write the same bytes as the CPU.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Parser;
use rand::Rng;
use wavelane::h264::decode::parse_stream;
use wavelane::h264::encode::{code_picture, encode_sequence, CpuEntropy, EncodeOptions};
use wavelane::h264::gpu::GpuEntropy;
use wavelane::h264::input::{from_image, parse_y4m, write_y4m};
use wavelane::h264::{MbModes, Picture, Plane};
use wavelane_tests::{assert_same, for_random_cases, gpu, TestRng};

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wavelane-h264-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Decodes an Annex B file with ffmpeg to raw I420; fails loudly without ffmpeg.
fn ffmpeg_decode(stream: &Path) -> Vec<u8> {
    let out = stream.with_extension("ffmpeg.yuv");
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
        .args(["-f", "rawvideo", "-pix_fmt", "yuv420p"])
        .arg(&out)
        .status()
        .unwrap_or_else(|e| {
            panic!("these tests need ffmpeg on PATH (apt-get install ffmpeg): {e}")
        });
    assert!(status.success(), "ffmpeg rejected {}", stream.display());
    std::fs::read(&out).unwrap()
}

/// A synthetic picture: smooth gradients, a sharp-edged rectangle and noise
/// of random strength, so that every prediction mode and coefficient range
/// occurs. `gray` gives neutral chroma.
fn test_picture(rng: &mut TestRng, w: usize, h: usize, gray: bool) -> Picture {
    let noise: i32 = [0, 4, 30, 255][rng.random_range(0..4)];
    let (fx, fy) = (rng.random_range(0..7), rng.random_range(0..7));
    let (rx, ry) = (rng.random_range(0..w.max(1)), rng.random_range(0..h.max(1)));
    let mut plane = |pw: usize, ph: usize, k: i32| {
        let mut p = Plane::filled(pw, ph, 0);
        for y in 0..ph {
            for x in 0..pw {
                let inside = x * w / pw.max(1) > rx && y * h / ph.max(1) > ry;
                let base =
                    (x as i32 * fx + y as i32 * fy + 60 * k) % 256 + if inside { 70 } else { 0 };
                let n = if noise > 0 {
                    rng.random_range(-noise..=noise) / 2
                } else {
                    0
                };
                p.data[y * pw + x] = (base + n).clamp(0, 255) as u8;
            }
        }
        p
    };
    let (cw, ch) = (w.div_ceil(2), h.div_ceil(2));
    let y = plane(w, h, 0);
    if gray {
        Picture {
            y,
            cb: Plane::filled(cw, ch, 128),
            cr: Plane::filled(cw, ch, 128),
        }
    } else {
        Picture {
            y,
            cb: plane(cw, ch, 1),
            cr: plane(cw, ch, 2),
        }
    }
}

fn to_i420(frames: &[Picture]) -> Vec<u8> {
    let mut v = Vec::new();
    for f in frames {
        f.write_i420(&mut v);
    }
    v
}

/// Encodes, decodes with ffmpeg and with our parser, and checks both.
fn check_stream(dir: &Path, name: &str, frames: &[Picture], opts: &EncodeOptions) -> Vec<u8> {
    let enc = encode_sequence(frames, opts, &CpuEntropy, &|| {}).unwrap();
    let path = dir.join(format!("{name}.264"));
    std::fs::write(&path, &enc.stream).unwrap();
    let decoded = ffmpeg_decode(&path);
    assert_same(
        &format!("{name}: ffmpeg output vs recon"),
        &to_i420(&enc.recon),
        &decoded,
    );
    let parsed = parse_stream(&enc.stream).unwrap();
    assert_eq!(
        (parsed.sps.width, parsed.sps.height),
        (frames[0].width(), frames[0].height())
    );
    assert_eq!(parsed.pictures.len(), frames.len());
    for (f, pic) in frames.iter().zip(&parsed.pictures) {
        let coded = code_picture(f, opts);
        assert_eq!(pic.mbs, coded.mbs, "{name}: macroblock types");
        assert_same(
            &format!("{name}: parsed levels"),
            &coded.coeffs,
            &pic.coeffs,
        );
        assert!(pic.qps.iter().all(|&q| q == opts.qp));
    }
    enc.stream
}

#[test]
fn h264_ffmpeg_decodes_every_qp_size_and_mode() {
    let dir = scratch_dir("qps");
    let sizes = [(16, 16), (33, 17), (2, 2), (75, 41), (176, 144)];
    for_random_cases("h264 vs ffmpeg", 1, |rng| {
        for qp in [0u8, 10, 26, 40, 51] {
            for (i, &(w, h)) in sizes.iter().enumerate() {
                for (modes, gray) in [
                    (MbModes::Auto, false),
                    (MbModes::Intra16x16, i % 2 == 0),
                    (MbModes::Intra4x4, i % 2 == 1),
                ] {
                    let pic = wavelane::h264::input::pad_even(test_picture(rng, w, h, gray));
                    let opts = EncodeOptions { qp, modes };
                    check_stream(&dir, &format!("q{qp}-{w}x{h}-{modes:?}"), &[pic], &opts);
                }
            }
        }
    });
}

#[test]
fn h264_multi_frame_y4m_through_the_cli() {
    let dir = scratch_dir("y4m");
    for_random_cases("h264 y4m cli", 1, |rng| {
        // 4 frames of an odd size: the reader pads to 38x22.
        let frames: Vec<Picture> = (0..4).map(|i| test_picture(rng, 37, 21, i == 2)).collect();
        let y4m = dir.join("in.y4m");
        let mut text = b"YUV4MPEG2 W37 H21 F25:1 Ip A1:1 C420jpeg XYSCSS=420JPEG\n".to_vec();
        for f in &frames {
            text.extend_from_slice(b"FRAME\n");
            f.write_i420(&mut text);
        }
        std::fs::write(&y4m, &text).unwrap();
        let (out, recon) = (dir.join("out.264"), dir.join("recon.yuv"));
        let cli = wavelane_cli::Cli::parse_from([
            "wavelane",
            "h264",
            y4m.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--qp",
            "30",
            "--recon",
            recon.to_str().unwrap(),
            "--backend",
            "cpu",
        ]);
        wavelane_cli::run(cli).unwrap();
        let recon = std::fs::read(&recon).unwrap();
        assert_eq!(recon.len(), 4 * (38 * 22 + 2 * 19 * 11));
        assert_same("ffmpeg vs --recon", &recon, &ffmpeg_decode(&out));
        let parsed = parse_stream(&std::fs::read(&out).unwrap()).unwrap();
        assert_eq!(parsed.pictures.len(), 4);
        assert_eq!((parsed.sps.width, parsed.sps.height), (38, 22));
    });
}

#[test]
fn h264_png_and_gray_pgm_inputs() {
    let dir = scratch_dir("png");
    for_random_cases("h264 png", 1, |rng| {
        let (w, h) = (29u32, 35u32);
        let rgb = image::RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x * 8) as u8, (y * 7) as u8, rng.random()])
        });
        let png = dir.join("c.png");
        rgb.save(&png).unwrap();
        let gray = image::GrayImage::from_fn(w, h, |x, y| image::Luma([((x * y) % 256) as u8]));
        let pgm = dir.join("g.pgm");
        gray.save(&pgm).unwrap();
        for (input, is_gray) in [(&png, false), (&pgm, true)] {
            let read = wavelane::h264::input::read_input(input).unwrap();
            assert_eq!(read.gray, is_gray);
            let f = &read.frames[0];
            assert_eq!((f.width(), f.height()), (30, 36));
            if is_gray {
                assert!(f.cb.data.iter().chain(&f.cr.data).all(|&c| c == 128));
                // Gray 30 is BT.601 limited-range luma 42, as the colour
                // (30, 30, 30) is: a decoder shows both alike.
                assert_eq!(f.y.at(5, 6), 42);
                let (black, white) = (image::Luma([0u8]), image::Luma([255u8]));
                let ends =
                    image::GrayImage::from_fn(2, 2, |x, _| if x == 0 { black } else { white });
                let ends = from_image(&image::DynamicImage::ImageLuma8(ends)).unwrap();
                assert_eq!(
                    (ends.frames[0].y.at(0, 0), ends.frames[0].y.at(1, 0)),
                    (16, 235)
                );
            }
            let out = dir.join("img.264");
            let recon = dir.join("img.yuv");
            let cli = wavelane_cli::Cli::parse_from([
                "wavelane",
                "h264",
                input.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--recon",
                recon.to_str().unwrap(),
                "--backend",
                "cpu",
                "--json",
            ]);
            wavelane_cli::run(cli).unwrap();
            assert_same(
                "ffmpeg vs --recon",
                &std::fs::read(&recon).unwrap(),
                &ffmpeg_decode(&out),
            );
        }
    });
}

#[test]
fn h264_y4m_reader_round_trips_and_rejects_bad_input() {
    let mut rng = <TestRng as rand::SeedableRng>::seed_from_u64(9);
    let frames: Vec<Picture> = (0..3)
        .map(|_| test_picture(&mut rng, 20, 10, false))
        .collect();
    let back = parse_y4m(&write_y4m(&frames)).unwrap();
    assert_eq!(back.frames, frames);
    for bad in [
        &b"YUV4MPEG2 W8 H8 C444\nFRAME\n"[..],
        b"YUV4MPEG2 W8 H8\nFRAME\nabc",
        b"YUV4MPEG2 H8\n",
        b"NOTY4M W8 H8\n",
        b"YUV4MPEG2 W8 H8\n",
        b"YUV4MPEG2 W8 H8\nFRAMX\n",
    ] {
        assert!(
            parse_y4m(bad).is_err(),
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
    let mono = b"YUV4MPEG2 W3 H1 Cmono\nFRAME\n\x01\x02\x03";
    let m = parse_y4m(mono).unwrap();
    assert!(m.gray);
    assert_eq!(m.frames[0].y.data, [1, 2, 3, 3, 1, 2, 3, 3]);
    let _ = from_image;
}

#[test]
fn h264_parser_survives_hostile_streams() {
    let mut rng = <TestRng as rand::SeedableRng>::seed_from_u64(11);
    let pic = test_picture(&mut rng, 40, 24, false);
    let good = encode_sequence(
        &[pic],
        &EncodeOptions {
            qp: 12,
            modes: MbModes::Auto,
        },
        &CpuEntropy,
        &|| {},
    )
    .unwrap()
    .stream;
    assert!(parse_stream(&good).is_ok());
    let mut errors = 0;
    for i in 0..400 {
        let mut s = good.clone();
        match i % 3 {
            0 => s.truncate(rng.random_range(0..s.len())),
            1 => {
                for _ in 0..rng.random_range(1..5) {
                    let at = rng.random_range(5..s.len());
                    s[at] ^= 1 << rng.random_range(0..8);
                }
            }
            _ => {
                s = (0..rng.random_range(0..200))
                    .map(|_| rng.random())
                    .collect()
            }
        }
        errors += usize::from(parse_stream(&s).is_err());
    }
    assert!(
        errors > 100,
        "hostile streams should mostly be rejected, {errors} were"
    );
}

#[test]
fn h264_gpu_streams_equal_cpu() {
    let entropy = GpuEntropy::new(gpu());
    for_random_cases("h264 gpu = cpu", 2, |rng| {
        for (qp, w, h) in [(0u8, 48, 32), (26, 75, 41), (51, 18, 30)] {
            let frames: Vec<Picture> = (0..2)
                .map(|i| wavelane::h264::input::pad_even(test_picture(rng, w, h, i == 1)))
                .collect();
            let opts = EncodeOptions {
                qp,
                modes: MbModes::Auto,
            };
            let cpu = encode_sequence(&frames, &opts, &CpuEntropy, &|| {}).unwrap();
            let gpu = encode_sequence(&frames, &opts, &entropy, &|| {}).unwrap();
            assert_same(&format!("stream qp {qp} {w}x{h}"), &cpu.stream, &gpu.stream);
        }
    });
}
