//! Sequences through the CLI: Y4M and raw video of every chroma layout and
//! depth to `.wls` and back bit-exact, `--frames`, image outputs, `info`,
//! and the fault rules (truncation at every frame boundary and a flipped
//! byte in every frame through `decode`, `decode --partial` and `verify`);
//! ffmpeg reads our `.y4m` output as the input's frames.

mod common;

use std::path::Path;
use std::process::Command;

use common::{fails, ok, s, wavelane, Scratch};

const W: usize = 64;
const H: usize = 48;

/// Chroma subsampling shifts (x, y), `None` for gray.
type Shifts = Option<(usize, usize)>;

/// (Y4M colour tag, ffmpeg pix_fmt, chroma shifts, depth).
const FORMATS: [(&str, &str, Shifts, u32); 8] = [
    ("mono", "gray", None, 8),
    ("mono12", "gray12le", None, 12),
    ("420jpeg", "yuv420p", Some((1, 1)), 8),
    ("420mpeg2", "yuv420p", Some((1, 1)), 8),
    ("420p10", "yuv420p10le", Some((1, 1)), 10),
    ("422", "yuv422p", Some((1, 0)), 8),
    ("422p10", "yuv422p10le", Some((1, 0)), 10),
    ("444p16", "yuv444p16le", Some((0, 0)), 16),
];

/// The raw planes of frame `t`: moving gradients with hash noise.
fn frame_bytes(shifts: Shifts, depth: u32, t: usize) -> Vec<u8> {
    let mut planes = vec![(W, H)];
    if let Some((sx, sy)) = shifts {
        planes.extend([(W >> sx, H >> sy); 2]);
    }
    let max = (1u64 << depth) - 1;
    let mut out = Vec::new();
    for (c, &(pw, ph)) in planes.iter().enumerate() {
        for y in 0..ph {
            for x in 0..pw {
                let noise = ((x * 7919 + y * 104_729 + t * 13 + c * 31) * 2_654_435_761) >> 7 & 15;
                let v =
                    (((x + 3 * t) * 5 + y * 3 + c * 40 + noise) as u64 * (max + 1) / 512).min(max);
                match depth {
                    8 => out.push(v as u8),
                    _ => out.extend_from_slice(&(v as u16).to_le_bytes()),
                }
            }
        }
    }
    out
}

/// A Y4M clip and its frames' raw bytes.
fn y4m(tag: &str, shifts: Shifts, depth: u32, frames: usize) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut out = format!("YUV4MPEG2 W{W} H{H} F30000:1001 Ip A1:1 C{tag} XCOLORRANGE=LIMITED\n")
        .into_bytes();
    let raw: Vec<Vec<u8>> = (0..frames).map(|t| frame_bytes(shifts, depth, t)).collect();
    for f in &raw {
        out.extend_from_slice(b"FRAME\n");
        out.extend_from_slice(f);
    }
    (out, raw)
}

fn info_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(&["info", s(path), "--json"])).expect("json")
}

#[test]
fn every_layout_and_depth_round_trips_bit_exact_through_y4m() {
    let dir = Scratch::new("sequence", "roundtrip");
    for (tag, pix_fmt, shifts, depth) in FORMATS {
        let (clip, raw) = y4m(tag, shifts, depth, 4);
        let input = dir.file(&format!("{tag}.y4m"), &clip);
        let wls = dir.path(&format!("{tag}.wls"));
        ok(&[
            "encode",
            s(&input),
            "-o",
            s(&wls),
            "--lossless",
            "--backend",
            "cpu",
        ]);
        let back = dir.path(&format!("{tag}-back.y4m"));
        ok(&["decode", s(&wls), "-o", s(&back), "--backend", "cpu"]);
        assert_eq!(std::fs::read(&back).unwrap(), clip, "{tag}");
        ok(&["verify", s(&wls)]);
        let info = info_json(&wls);
        assert_eq!(info["frame_count"], 4, "{tag}");
        assert_eq!(info["format"]["bit_depth"], depth, "{tag}");
        // The same frames as raw video, and back as raw video.
        let rawfile = dir.file(&format!("{tag}.yuv"), &raw.concat());
        let wls2 = dir.path(&format!("{tag}-raw.wls"));
        let size = format!("{W}x{H}");
        ok(&[
            "encode",
            s(&rawfile),
            "-o",
            s(&wls2),
            "--video-size",
            &size,
            "--pix-fmt",
            pix_fmt,
            "--backend",
            "cpu",
        ]);
        let back = dir.path(&format!("{tag}-back.yuv"));
        ok(&[
            "decode",
            s(&wls2),
            "-o",
            s(&back),
            "--frames",
            "1..2",
            "--backend",
            "cpu",
        ]);
        assert_eq!(
            std::fs::read(&back).unwrap(),
            raw[1..3].concat(),
            "{tag} --frames 1..2"
        );
    }
}

#[test]
fn frames_png_outputs_and_bad_requests() {
    let dir = Scratch::new("sequence", "frames");
    let (clip, _) = y4m("420jpeg", Some((1, 1)), 8, 5);
    let input = dir.file("c.y4m", &clip);
    let wls = dir.path("c.wls");
    ok(&[
        "encode",
        s(&input),
        "-o",
        s(&wls),
        "--bpp",
        "2",
        "--backend",
        "cpu",
    ]);
    let info = info_json(&wls);
    for f in info["frames"].as_array().unwrap() {
        // 2 bpp per frame for the codestreams; each record adds 29 bytes.
        assert!(
            f["bytes"].as_u64().unwrap() <= (2 * W * H / 8 + 29 + 3) as u64,
            "{f}"
        );
    }
    let frames = dir.path("f");
    std::fs::create_dir(&frames).unwrap();
    let pattern = frames.join("%03d.png");
    ok(&[
        "decode",
        s(&wls),
        "-o",
        s(&pattern),
        "--frames",
        "3..4",
        "--backend",
        "cpu",
    ]);
    let mut names: Vec<String> = std::fs::read_dir(&frames)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["003.png", "004.png"]);
    let png = image::open(frames.join("003.png")).unwrap();
    assert_eq!(
        (png.width(), png.height(), png.color().channel_count()),
        (W as u32, H as u32, 3)
    );
    fails(&["decode", s(&wls), "-o", s(&frames.join("%d.pgm"))]);
    fails(&["decode", s(&wls), "-o", s(&frames.join("x.png"))]);
    fails(&[
        "decode",
        s(&wls),
        "-o",
        s(&dir.path("o.y4m")),
        "--frames",
        "4..5",
    ]);
    fails(&[
        "decode",
        s(&wls),
        "-o",
        s(&dir.path("o.y4m")),
        "--frames",
        "3..2",
    ]);
    // Gray sequences give gray pictures.
    let (gray, _) = y4m("mono", None, 8, 2);
    let g = dir.file("g.y4m", &gray);
    let gw = dir.path("g.wls");
    ok(&["encode", s(&g), "-o", s(&gw), "--backend", "cpu"]);
    ok(&[
        "decode",
        s(&gw),
        "-o",
        s(&frames.join("g%d.pgm")),
        "--backend",
        "cpu",
    ]);
    let pgm = image::open(frames.join("g1.pgm")).unwrap();
    assert_eq!(pgm.color().channel_count(), 1);
    // Bad inputs: typed errors, no output.
    let odd = dir.file("odd.y4m", b"YUV4MPEG2 W63 H48 C420jpeg\nFRAME\n");
    assert!(fails(&["encode", s(&odd), "-o", s(&dir.path("odd.wls"))]).contains("odd"));
    let mut cut = clip.clone();
    cut.truncate(clip.len() - 7);
    let cut = dir.file("cut.y4m", &cut);
    let err = fails(&[
        "encode",
        s(&cut),
        "-o",
        s(&dir.path("cut.wls")),
        "--backend",
        "cpu",
    ]);
    assert!(err.contains("frame 4 is truncated"), "{err}");
    assert!(!dir.path("cut.wls").exists());
}

#[test]
fn truncation_at_every_frame_boundary_and_a_flipped_byte_in_every_frame() {
    let dir = Scratch::new("sequence", "faults");
    let (clip, raw) = y4m("422", Some((1, 0)), 8, 4);
    let input = dir.file("c.y4m", &clip);
    let wls = dir.path("c.wls");
    ok(&[
        "encode",
        s(&input),
        "-o",
        s(&wls),
        "--lossless",
        "--backend",
        "cpu",
    ]);
    let bytes = std::fs::read(&wls).unwrap();
    let info = info_json(&wls);
    let frames: Vec<(usize, usize)> = info["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["offset"].as_u64().unwrap() as usize,
                f["bytes"].as_u64().unwrap() as usize,
            )
        })
        .collect();
    let out = dir.path("o.yuv");
    for (whole, &(offset, _)) in frames.iter().enumerate() {
        let cut = dir.file("cut.wls", &bytes[..offset]);
        let err = fails(&["decode", s(&cut), "-o", s(&out), "--backend", "cpu"]);
        assert!(
            err.contains("truncated") && err.contains("--partial"),
            "{err}"
        );
        let v = wavelane(&["verify", s(&cut)]);
        assert_eq!(v.status.code(), Some(3));
        assert!(String::from_utf8_lossy(&v.stdout).contains("truncated"));
        let p = wavelane(&[
            "decode",
            s(&cut),
            "-o",
            s(&out),
            "--partial",
            "--backend",
            "cpu",
        ]);
        let err = String::from_utf8_lossy(&p.stderr);
        if whole == 0 {
            assert_eq!(p.status.code(), Some(1), "{err}");
            continue;
        }
        assert!(p.status.success() && err.contains("warning"), "{err}");
        assert_eq!(std::fs::read(&out).unwrap(), raw[..whole].concat());
    }
    for (k, &(offset, len)) in frames.iter().enumerate() {
        let mut bad = bytes.clone();
        bad[offset + len / 2] ^= 0x08;
        let badf = dir.file("bad.wls", &bad);
        let err = fails(&["decode", s(&badf), "-o", s(&out), "--backend", "cpu"]);
        assert!(err.contains(&format!("frame {k}")), "{err}");
        let v = wavelane(&["verify", s(&badf)]);
        assert_eq!(v.status.code(), Some(3));
        assert!(String::from_utf8_lossy(&v.stdout).contains(&format!("frame {k} ")));
        let p = wavelane(&[
            "decode",
            s(&badf),
            "-o",
            s(&out),
            "--partial",
            "--backend",
            "cpu",
        ]);
        assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
        assert!(String::from_utf8_lossy(&p.stderr).contains(&format!("frame {k} left out")));
        let kept: Vec<u8> = (0..4)
            .filter(|&j| j != k)
            .flat_map(|j| raw[j].clone())
            .collect();
        assert_eq!(std::fs::read(&out).unwrap(), kept);
    }
}

/// ffmpeg reads our decoded `.y4m` as exactly the input's frames.
#[test]
fn ffmpeg_reads_the_decoded_y4m_as_the_input() {
    let dir = Scratch::new("sequence", "ffmpeg");
    for (tag, pix_fmt, shifts, depth) in [FORMATS[0], FORMATS[2], FORMATS[4], FORMATS[6]] {
        let (clip, raw) = y4m(tag, shifts, depth, 3);
        let input = dir.file("in.y4m", &clip);
        let wls = dir.path("c.wls");
        let back = dir.path("back.y4m");
        ok(&["encode", s(&input), "-o", s(&wls), "--backend", "cpu"]);
        ok(&["decode", s(&wls), "-o", s(&back), "--backend", "cpu"]);
        let out = dir.path("ff.yuv");
        let status = Command::new("ffmpeg")
            .args([
                "-loglevel",
                "error",
                "-y",
                "-i",
                s(&back),
                "-f",
                "rawvideo",
                "-pix_fmt",
                pix_fmt,
                s(&out),
            ])
            .status()
            .unwrap_or_else(|e| {
                panic!("this test needs ffmpeg on PATH (scripts/setup.sh installs it): {e}")
            });
        assert!(status.success(), "ffmpeg rejected our {tag} .y4m");
        assert_eq!(std::fs::read(&out).unwrap(), raw.concat(), "{tag}");
    }
}

/// Our RGB pictures of a 4:4:4 frame are ffmpeg's (BT.601 limited range
/// below HD sizes; 4:4:4 so that no chroma interpolation differs).
#[test]
fn png_frames_are_ffmpegs_rgb() {
    let dir = Scratch::new("sequence", "rgb");
    let (clip, _) = y4m("444", Some((0, 0)), 8, 2);
    let input = dir.file("in.y4m", &clip);
    let wls = dir.path("c.wls");
    ok(&["encode", s(&input), "-o", s(&wls), "--backend", "cpu"]);
    ok(&[
        "decode",
        s(&wls),
        "-o",
        s(&dir.path("f%d.png")),
        "--backend",
        "cpu",
    ]);
    let ours = image::open(dir.path("f0.png"))
        .unwrap()
        .to_rgb8()
        .into_raw();
    let out = dir.path("ff.rgb");
    let status = Command::new("ffmpeg")
        .args([
            "-loglevel",
            "error",
            "-y",
            "-i",
            s(&input),
            "-frames:v",
            "1",
        ])
        .args(["-f", "rawvideo", "-pix_fmt", "rgb24", s(&out)])
        .status()
        .unwrap_or_else(|e| {
            panic!("this test needs ffmpeg on PATH (scripts/setup.sh installs it): {e}")
        });
    assert!(status.success());
    let theirs = std::fs::read(&out).unwrap();
    assert_eq!(ours.len(), theirs.len());
    let worst = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| a.abs_diff(*b))
        .max()
        .unwrap();
    assert!(worst <= 1, "largest difference from ffmpeg's RGB: {worst}");
}

/// The GPU backend writes the same lossless `.wls` bytes as the CPU and
/// decodes it back bit-exact (lavapipe in the suite).
#[test]
fn sequence_gpu_encode_and_decode_match_the_cpu() {
    let dir = Scratch::new("sequence", "gpu");
    let (clip, _) = y4m("420p10", Some((1, 1)), 10, 3);
    let input = dir.file("in.y4m", &clip);
    let (cpu, gpu) = (dir.path("cpu.wls"), dir.path("gpu.wls"));
    ok(&["encode", s(&input), "-o", s(&cpu), "--backend", "cpu"]);
    ok(&["encode", s(&input), "-o", s(&gpu), "--backend", "gpu"]);
    assert_eq!(std::fs::read(&cpu).unwrap(), std::fs::read(&gpu).unwrap());
    // Frames spread over workers (two on device 0 here) come back in order:
    // the same file.
    let spread = dir.path("spread.wls");
    let report = ok(&[
        "encode",
        s(&input),
        "-o",
        s(&spread),
        "--devices",
        "0,0",
        "--json",
    ]);
    assert!(report.contains("x2 frames in flight"), "{report}");
    assert_eq!(
        std::fs::read(&cpu).unwrap(),
        std::fs::read(&spread).unwrap()
    );
    let back = dir.path("back.y4m");
    ok(&["decode", s(&gpu), "-o", s(&back), "--backend", "gpu"]);
    assert_eq!(std::fs::read(&back).unwrap(), clip);
    // Options that do not apply to sequences are refused, not ignored.
    let err = fails(&["decode", s(&cpu), "-o", s(&back), "--reduce", "1"]);
    assert!(err.contains("do not apply"), "{err}");
    let err = fails(&["encode", s(&input), "-o", s(&cpu), "--bit-depth", "12"]);
    assert!(err.contains("do not apply"), "{err}");
}
