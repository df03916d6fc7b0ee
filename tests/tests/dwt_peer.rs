//! Peer test: our reversible 5/3 equals OpenJPEG's and OpenJPH's. For random
//! odd-sized 8-bit images (samples in 64..=191, so that reduced-resolution
//! decodes are never clamped), the LL band after k = 1..3 levels, plus 128,
//! must equal `opj_decompress -r k` and `ojph_expand -skip_res k,k` of the
//! image compressed losslessly with 3 levels. The tools must be installed
//! (scripts/setup.sh installs libopenjp2-tools and openjph-tools); a missing
//! tool fails the test.

use std::path::{Path, PathBuf};
use std::process::Command;

use rand::Rng;
use wavelane_core::dwt::{forward_2d, level_size, Cdf53, ImageLayout};
use wavelane_tests::{for_random_cases, TestRng};

fn run(tool: &str, args: &[&str]) {
    let out = Command::new(tool).args(args).output().unwrap_or_else(|e| {
        panic!(
            "cannot run `{tool}` ({e}): the DWT peer test needs OpenJPEG and OpenJPH tools \
             (apt-get install libopenjp2-tools openjph-tools, or ./scripts/setup.sh)"
        )
    });
    assert!(
        out.status.success(),
        "`{tool} {}` failed: {}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write_pgm(path: &Path, w: usize, h: usize, pixels: &[u8]) {
    let mut bytes = format!("P5\n{w} {h}\n255\n").into_bytes();
    bytes.extend_from_slice(pixels);
    std::fs::write(path, bytes).unwrap();
}

/// Reads a binary PGM (any header layout and comments), 8-bit samples.
fn read_pgm(path: &Path) -> (usize, usize, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut fields = Vec::new();
    let mut i = 0;
    while fields.len() < 4 {
        while bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if bytes[i] == b'#' {
            while bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        while !bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        fields.push(String::from_utf8_lossy(&bytes[start..i]).into_owned());
    }
    assert_eq!(fields[0], "P5", "{}: not a binary PGM", path.display());
    assert_eq!(fields[3], "255", "{}: not 8-bit", path.display());
    let (w, h): (usize, usize) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    let payload = bytes[i + 1..].to_vec();
    assert_eq!(payload.len(), w * h, "{}: payload size", path.display());
    (w, h, payload)
}

fn scratch_dir(tag: u64) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wavelane-dwt-peer-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn check_image(rng: &mut TestRng, case: u64) {
    let w = 2 * rng.random_range(12..50) + 1;
    let h = 2 * rng.random_range(12..50) + 1;
    let pixels: Vec<u8> = (0..w * h).map(|_| rng.random_range(64..=191)).collect();
    let dir = scratch_dir(case);
    let pgm = dir.join("in.pgm");
    write_pgm(&pgm, w, h, &pixels);
    let j2k = dir.join("a.j2k");
    let j2c = dir.join("a.j2c");
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    // 4 resolutions = 3 decomposition levels; reversible 5/3 is the default.
    run("opj_compress", &["-i", &s(&pgm), "-o", &s(&j2k), "-n", "4"]);
    run(
        "ojph_compress",
        &[
            "-i",
            &s(&pgm),
            "-o",
            &s(&j2c),
            "-reversible",
            "true",
            "-num_decomps",
            "3",
        ],
    );

    for k in 1..=3u32 {
        let mut ours: Vec<i32> = pixels.iter().map(|&p| p as i32 - 128).collect();
        let mut scratch = vec![0; w.max(h)];
        forward_2d::<Cdf53>(&mut ours, ImageLayout::new(w, h), k, &mut scratch).unwrap();
        let (lw, lh) = level_size(w, h, k);
        let ll: Vec<i32> = (0..lh)
            .flat_map(|y| ours[y * w..y * w + lw].iter().map(|&v| v + 128))
            .collect();
        assert!(
            ll.iter().all(|v| (0..=255).contains(v)),
            "LL left 0..=255: the clamp would hide differences"
        );

        let opj = dir.join(format!("opj{k}.pgm"));
        run(
            "opj_decompress",
            &["-i", &s(&j2k), "-o", &s(&opj), "-r", &k.to_string()],
        );
        let ojph = dir.join(format!("ojph{k}.pgm"));
        run(
            "ojph_expand",
            &[
                "-i",
                &s(&j2c),
                "-o",
                &s(&ojph),
                "-skip_res",
                &format!("{k},{k}"),
            ],
        );
        for (tool, path) in [("OpenJPEG", &opj), ("OpenJPH", &ojph)] {
            let (pw, ph, peer) = read_pgm(path);
            assert_eq!(
                (pw, ph),
                (lw, lh),
                "{tool} LL size after {k} levels of {w}x{h}"
            );
            let peer: Vec<i32> = peer.iter().map(|&v| v as i32).collect();
            if let Some(i) = ll.iter().zip(&peer).position(|(a, b)| a != b) {
                panic!(
                    "{w}x{h}, {k} levels: LL differs from {tool} at ({}, {}): ours {}, theirs {}",
                    i % lw,
                    i / lw,
                    ll[i],
                    peer[i]
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cdf53_ll_bands_equal_openjpeg_and_openjph() {
    let mut case = 0;
    for_random_cases("cdf53_ll_bands_equal_openjpeg_and_openjph", 3, |rng| {
        check_image(rng, case);
        case += 1;
    });
}
