//! The 9/7 transforms against an f64 convolution reference written here from
//! the JPEG 2000 Part 1 analysis filter taps (whole-sample symmetric
//! extension, Mallat layout, vertical and horizontal filtering per level).
//! Checks the f32 lifting (normalization included) and documents the
//! precision of the fixed-point 9/7.

use rand::Rng;
use wavelane_core::dwt::lift97::K;
use wavelane_core::dwt::{forward_2d, mirror, subbands, Cdf97, Fixed97, ImageLayout, Orientation};
use wavelane_tests::{for_random_cases, TestRng};

/// Part 1 analysis low-pass taps h[0], h[±1], ... h[±4].
const LOW: [f64; 5] = [
    0.602949018236360,
    0.266864118442875,
    -0.078223266528990,
    -0.016864118442875,
    0.026748757410810,
];
/// Part 1 analysis high-pass taps g[0], g[±1], g[±2], g[±3].
const HIGH: [f64; 4] = [
    1.115087052457000,
    -0.591271763114250,
    -0.057543526228500,
    0.091271763114250,
];

/// One line by convolution: low `L_k = Σ h_j x[2k+j]`, high
/// `H_k = Σ g_j x[2k+1+j]`, with mirrored indices; Mallat order out.
fn analyze(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    if n < 2 {
        return x.to_vec();
    }
    let at = |i: i64| x[mirror(i, n)];
    let mut out = Vec::with_capacity(n);
    for k in (0..n).step_by(2) {
        let c = k as i64;
        out.push(
            LOW[0] * at(c)
                + (1..5)
                    .map(|j| LOW[j] * (at(c - j as i64) + at(c + j as i64)))
                    .sum::<f64>(),
        );
    }
    for k in (1..n).step_by(2) {
        let c = k as i64;
        out.push(
            HIGH[0] * at(c)
                + (1..4)
                    .map(|j| HIGH[j] * (at(c - j as i64) + at(c + j as i64)))
                    .sum::<f64>(),
        );
    }
    out
}

fn reference(image: &[f64], w: usize, h: usize, levels: u32) -> Vec<f64> {
    let mut data = image.to_vec();
    let (mut lw, mut lh) = (w, h);
    for _ in 0..levels {
        for x in 0..lw {
            let col: Vec<f64> = (0..lh).map(|y| data[y * w + x]).collect();
            for (y, v) in analyze(&col).into_iter().enumerate() {
                data[y * w + x] = v;
            }
        }
        for y in 0..lh {
            let row = analyze(&data[y * w..y * w + lw]);
            data[y * w..y * w + lw].copy_from_slice(&row);
        }
        lw = lw.div_ceil(2);
        lh = lh.div_ceil(2);
    }
    data
}

fn random_case(rng: &mut TestRng, bits: u32) -> (usize, usize, u32, Vec<i32>) {
    let w = rng.random_range(1..=90);
    let h = rng.random_range(1..=90);
    let levels = rng.random_range(1..=wavelane_core::dwt::max_levels(w, h).clamp(1, 5));
    let levels = levels.min(wavelane_core::dwt::max_levels(w, h));
    let half = 1i32 << (bits - 1);
    let img = (0..w * h).map(|_| rng.random_range(-half..half)).collect();
    (w, h, levels, img)
}

#[test]
fn cdf97_matches_f64_convolution() {
    for_random_cases("cdf97_matches_f64_convolution", 25, |rng| {
        let (w, h, levels, img) = random_case(rng, 8);
        let exact = reference(
            &img.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            w,
            h,
            levels,
        );
        let mut ours: Vec<f32> = img.iter().map(|&v| v as f32).collect();
        let mut scratch = vec![0.0f32; w.max(h)];
        forward_2d::<Cdf97>(&mut ours, ImageLayout::new(w, h), levels, &mut scratch).unwrap();
        let scale = exact.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for (i, (&e, &o)) in exact.iter().zip(&ours).enumerate() {
            assert!(
                (e - o as f64).abs() <= 1e-5 * scale,
                "{w}x{h} L{levels}: coefficient {i}: reference {e}, lifting {o}"
            );
        }
    });
}

/// Fixed-point 9/7 = the unnormalized real 9/7 (low band x K, high band
/// x 1/K per level and axis) within the precision documented in
/// `wavelane_core::dwt::fixed97`: at most 3 after one level, 8 after five.
#[test]
fn fixed97_precision_against_f64_reference() {
    for_random_cases("fixed97_precision_against_f64_reference", 20, |rng| {
        let bits = rng.random_range(8..=16);
        let (w, h, levels, img) = random_case(rng, bits);
        let exact = reference(
            &img.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            w,
            h,
            levels,
        );
        let mut ours = img.clone();
        let mut scratch = vec![0i32; w.max(h)];
        forward_2d::<Fixed97>(&mut ours, ImageLayout::new(w, h), levels, &mut scratch).unwrap();
        let bound = if levels == 1 { 3.0 } else { 8.0 };
        for band in subbands(w, h, levels).unwrap() {
            let factor = band_factor(w, h, band.level as u32, band.orientation);
            let r = band.rect;
            for y in r.y..r.y + r.height {
                for x in r.x..r.x + r.width {
                    let i = y * w + x;
                    let expect = exact[i] * factor;
                    assert!(
                        (ours[i] as f64 - expect).abs() <= bound,
                        "{w}x{h} L{levels} {band:?}: ({x},{y}) fixed {} vs scaled reference {expect}",
                        ours[i]
                    );
                }
            }
        }
    });
}

/// How much larger a band of the unnormalized fixed-point transform is than
/// the normalized one: K per axis for every low-pass stage, 1/K for the
/// final high-pass stage, nothing at stages where an axis of length 1 was
/// left alone.
fn band_factor(w: usize, h: usize, level: u32, orientation: Orientation) -> f64 {
    let (hx, hy) = orientation.highpass();
    let stages = if orientation == Orientation::LL {
        level
    } else {
        level + 1
    };
    let mut f = 1.0;
    let (mut lw, mut lh) = (w, h);
    for l in 0..stages {
        let top = l + 1 == stages && orientation != Orientation::LL;
        if lw > 1 {
            f *= if top && hx { 1.0 / K } else { K };
        }
        if lh > 1 {
            f *= if top && hy { 1.0 / K } else { K };
        }
        lw = lw.div_ceil(2);
        lh = lh.div_ceil(2);
    }
    f
}
