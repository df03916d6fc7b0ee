//! Peer and reference checks of our reversible 5/3 ([`Cdf53`]), for even and
//! odd sizes, 8-, 12- and 16-bit samples, up to [`max_levels`]:
//!
//! - every coefficient of every subband (LL and all detail bands of all
//!   levels) equals a 5/3 written in this test from JPEG 2000 Part 1 Annex F
//!   ([`ref53`]), and our inverse equals its inverse on random coefficients;
//! - that reference's LL band after each level `k`, plus the DC offset,
//!   equals `opj_decompress -r k` and `ojph_expand -skip_res k,k` of the
//!   image compressed losslessly by the same tool (OpenJPEG caps the levels
//!   at `floor(log2(min(w, h)))`, OpenJPH goes to our maximum);
//! - our inverse of our coefficients and both tools' full-resolution
//!   decodes give the image back.
//!
//! Peer images keep their samples in the middle half of the range so that
//! reduced-resolution decodes are never clamped (asserted). The tools must
//! be installed (scripts/setup.sh installs libopenjp2-tools and
//! openjph-tools); a missing tool fails the test.

mod ref53;

use std::path::{Path, PathBuf};
use std::process::Command;

use rand::Rng;
use wavelane_core::dwt::{
    forward_2d, inverse_2d, level_size, max_levels, scratch_len_2d, subbands, Cdf53, ImageLayout,
};
use wavelane_tests::{for_random_cases, TestRng};

const BITS: [u32; 3] = [8, 12, 16];

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

/// A binary PGM of `bits`-bit samples (two big-endian bytes above 8 bits):
/// both tools take the precision from the maximum value.
fn write_pgm(path: &Path, w: usize, h: usize, bits: u32, pixels: &[i64]) {
    let mut bytes = format!("P5\n{w} {h}\n{}\n", (1u32 << bits) - 1).into_bytes();
    for &p in pixels {
        if bits <= 8 {
            bytes.push(p as u8);
        } else {
            bytes.extend_from_slice(&(p as u16).to_be_bytes());
        }
    }
    std::fs::write(path, bytes).unwrap();
}

/// Reads a binary PGM (any header layout and comments): size, maximum
/// value and samples.
fn read_pgm(path: &Path) -> (usize, usize, u32, Vec<i64>) {
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
    let (w, h): (usize, usize) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    let max: u32 = fields[3].parse().unwrap();
    let payload = &bytes[i + 1..];
    let samples: Vec<i64> = if max < 256 {
        payload.iter().map(|&v| v as i64).collect()
    } else {
        let pairs = payload.chunks_exact(2);
        pairs
            .map(|p| u16::from_be_bytes([p[0], p[1]]) as i64)
            .collect()
    };
    assert_eq!(samples.len(), w * h, "{}: payload size", path.display());
    (w, h, max, samples)
}

fn scratch_dir(tag: String) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wavelane-dwt-peer-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Our forward transform of DC-shifted samples, `levels` levels.
fn ours_forward(shifted: &[i64], w: usize, h: usize, levels: u32) -> Vec<i64> {
    let mut data: Vec<i32> = shifted.iter().map(|&v| v as i32).collect();
    let mut scratch = vec![0; scratch_len_2d(w, h)];
    forward_2d::<Cdf53>(&mut data, ImageLayout::new(w, h), levels, &mut scratch).unwrap();
    data.into_iter().map(i64::from).collect()
}

fn ours_inverse(coefficients: &[i64], w: usize, h: usize, levels: u32) -> Vec<i64> {
    let mut data: Vec<i32> = coefficients.iter().map(|&v| v as i32).collect();
    let mut scratch = vec![0; scratch_len_2d(w, h)];
    inverse_2d::<Cdf53>(&mut data, ImageLayout::new(w, h), levels, &mut scratch).unwrap();
    data.into_iter().map(i64::from).collect()
}

/// Panics at the first difference, naming the subband it lies in.
fn assert_bands_equal(what: &str, ours: &[i64], reference: &[i64], w: usize, h: usize, l: u32) {
    let Some(i) = ours.iter().zip(reference).position(|(a, b)| a != b) else {
        return;
    };
    let (x, y) = (i % w, i / w);
    // The last band listed that holds (x, y): bands are listed coarsest
    // first and LL is inside every coarser region, so the last hit is the
    // finest, which is the one that holds it.
    let band = subbands(w, h, l)
        .unwrap()
        .filter(|b| {
            let r = b.rect;
            (r.x..r.x + r.width).contains(&x) && (r.y..r.y + r.height).contains(&y)
        })
        .last()
        .map_or("no band".to_owned(), |b| {
            format!("{} of level {}", b.orientation.name(), b.level)
        });
    panic!(
        "{w}x{h}, {l} levels: {what} differs at ({x}, {y}), {band}: ours {}, reference {}",
        ours[i], reference[i]
    );
}

/// Every band against the Annex F reference, forward and inverse, on
/// full-range samples; random coefficients through both inverses.
fn check_reference(rng: &mut TestRng, w: usize, h: usize, bits: u32) {
    let half = 1i64 << (bits - 1);
    let levels = max_levels(w, h);
    let image: Vec<i64> = (0..w * h).map(|_| rng.random_range(-half..half)).collect();
    for l in [levels, rng.random_range(0..=levels)] {
        let ours = ours_forward(&image, w, h, l);
        assert_bands_equal("forward", &ours, &ref53::forward(&image, w, h, l), w, h, l);
        assert_eq!(
            ours_inverse(&ours, w, h, l),
            image,
            "{w}x{h}, {l} levels: no round trip"
        );
        let coefficients: Vec<i64> = (0..w * h)
            .map(|_| rng.random_range(-4 * half..4 * half))
            .collect();
        assert_bands_equal(
            "inverse",
            &ours_inverse(&coefficients, w, h, l),
            &ref53::inverse(&coefficients, w, h, l),
            w,
            h,
            l,
        );
    }
}

#[test]
fn cdf53_every_band_equals_the_annex_f_reference() {
    for_random_cases("cdf53_every_band_equals_the_annex_f_reference", 4, |rng| {
        for bits in BITS {
            for _ in 0..40 {
                let (w, h) = (rng.random_range(1..=90), rng.random_range(1..=90));
                check_reference(rng, w, h, bits);
            }
        }
    });
}

/// One peer image: `w x h`, `bits`-bit, samples in the middle half.
fn check_peers(rng: &mut TestRng, w: usize, h: usize, bits: u32) {
    let dc = 1i64 << (bits - 1);
    let pixels: Vec<i64> = (0..w * h)
        .map(|_| rng.random_range(dc / 2..dc + dc / 2))
        .collect();
    let shifted: Vec<i64> = pixels.iter().map(|&p| p - dc).collect();
    let levels = max_levels(w, h);
    // OpenJPEG refuses more levels than halve the smaller side to 1.
    let opj_levels = levels.min(w.min(h).ilog2());

    let ours = ours_forward(&shifted, w, h, levels);
    let reference = ref53::forward(&shifted, w, h, levels);
    assert_bands_equal("forward", &ours, &reference, w, h, levels);
    assert_eq!(
        ours_inverse(&ours, w, h, levels),
        shifted,
        "{w}x{h}: no round trip"
    );

    let dir = scratch_dir(format!("{w}x{h}-{bits}"));
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let pgm = dir.join("in.pgm");
    write_pgm(&pgm, w, h, bits, &pixels);
    let (j2k, j2c) = (dir.join("a.j2k"), dir.join("a.j2c"));
    // Reversible 5/3 is the default of both; -n counts resolutions.
    let resolutions = (opj_levels + 1).to_string();
    run(
        "opj_compress",
        &["-i", &s(&pgm), "-o", &s(&j2k), "-n", &resolutions],
    );
    let decomps = levels.to_string();
    let args = ["-reversible", "true", "-num_decomps", &decomps];
    run(
        "ojph_compress",
        &[&["-i", &s(&pgm), "-o", &s(&j2c)][..], &args].concat(),
    );

    let expect = |tool: &str, path: &Path, k: u32, want: &[i64]| {
        let (pw, ph, max, peer) = read_pgm(path);
        let (lw, lh) = level_size(w, h, k);
        let ctx = format!("{tool}, {w}x{h} {bits}-bit, {k} levels");
        assert_eq!(
            (pw, ph, max),
            (lw, lh, (1 << bits) - 1),
            "{ctx}: size or depth"
        );
        if let Some(i) = want.iter().zip(&peer).position(|(a, b)| a != b) {
            let (x, y) = (i % lw, i / lw);
            panic!(
                "{ctx}: LL differs at ({x}, {y}): reference {}, peer {}",
                want[i], peer[i]
            );
        }
    };
    // k = 0 is the full-resolution decode, which must be the image.
    for k in 0..=levels {
        let (lw, lh) = level_size(w, h, k);
        let reference_k = ref53::forward(&shifted, w, h, k);
        let ll: Vec<i64> = (0..lh)
            .flat_map(|y| reference_k[y * w..y * w + lw].iter().map(|&v| v + dc))
            .collect();
        assert!(
            ll.iter().all(|v| (0..2 * dc).contains(v)),
            "LL left the sample range: the clamp would hide differences"
        );
        let ojph = dir.join(format!("ojph{k}.pgm"));
        let skip = format!("{k},{k}");
        run(
            "ojph_expand",
            &["-i", &s(&j2c), "-o", &s(&ojph), "-skip_res", &skip],
        );
        expect("OpenJPH", &ojph, k, &ll);
        if k <= opj_levels {
            let opj = dir.join(format!("opj{k}.pgm"));
            run(
                "opj_decompress",
                &["-i", &s(&j2k), "-o", &s(&opj), "-r", &k.to_string()],
            );
            expect("OpenJPEG", &opj, k, &ll);
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cdf53_equals_openjpeg_and_openjph_at_every_level() {
    for_random_cases(
        "cdf53_equals_openjpeg_and_openjph_at_every_level",
        2,
        |rng| {
            for bits in BITS {
                for (odd_w, odd_h) in [(false, false), (true, true), (false, true), (true, false)] {
                    let side =
                        |rng: &mut TestRng, odd: bool| 2 * rng.random_range(1..=50) - odd as usize;
                    let (w, h) = (side(rng, odd_w), side(rng, odd_h));
                    check_peers(rng, w, h, bits);
                }
            }
        },
    );
}
