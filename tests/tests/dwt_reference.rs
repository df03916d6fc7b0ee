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
    1.115_087_052_457,
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

/// The fixed-point lifting coefficients as exact reals (Q16 / 2^16).
const Q16_STEPS: [(usize, i32); 4] = [
    (1, wavelane_core::dwt::fixed97::Q_ALPHA),
    (0, wavelane_core::dwt::fixed97::Q_BETA),
    (1, wavelane_core::dwt::fixed97::Q_GAMMA),
    (0, wavelane_core::dwt::fixed97::Q_DELTA),
];

/// One line of the unrounded Q16 lifting in f64, carrying beside every
/// sample a worst-case bound on how far the rounded integer lifting can be
/// from it: each step rounds its term by at most 1/2 and scales the error
/// of the two neighbours it reads by |q|. Mallat order out.
fn q16_line(x: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let n = x.len();
    if n < 2 {
        return x.to_vec();
    }
    let mut v = x.to_vec();
    for (parity, q) in Q16_STEPS {
        let c = q as f64 / 65536.0;
        for i in (parity..n).step_by(2) {
            let a = v[mirror(i as i64 - 1, n)];
            let b = v[mirror(i as i64 + 1, n)];
            v[i].0 += c * (a.0 + b.0);
            v[i].1 += c.abs() * (a.1 + b.1) + 0.5;
        }
    }
    let mut out: Vec<_> = v.iter().copied().step_by(2).collect();
    out.extend(v.iter().copied().skip(1).step_by(2));
    out
}

/// The 2-D multi-level unrounded Q16 lifting with its error bounds, in the
/// same order as core (vertical then horizontal per level).
fn q16_reference(image: &[i32], w: usize, h: usize, levels: u32) -> Vec<(f64, f64)> {
    let mut data: Vec<(f64, f64)> = image.iter().map(|&v| (v as f64, 0.0)).collect();
    let (mut lw, mut lh) = (w, h);
    for _ in 0..levels {
        for x in 0..lw {
            let col: Vec<_> = (0..lh).map(|y| data[y * w + x]).collect();
            for (y, v) in q16_line(&col).into_iter().enumerate() {
                data[y * w + x] = v;
            }
        }
        for y in 0..lh {
            let row = q16_line(&data[y * w..y * w + lw]);
            data[y * w..y * w + lw].copy_from_slice(&row);
        }
        lw = lw.div_ceil(2);
        lh = lh.div_ceil(2);
    }
    data
}

/// Fixed-point 9/7 precision, proved rather than sampled: the integer
/// result stays within the worst-case rounding bound propagated through
/// every lifting step by interval arithmetic (conservative: it ignores
/// cancellation between correlated errors, so it is looser than the L1
/// analysis in docs/dwt.md), and the unrounded Q16 lifting equals the unnormalized real 9/7 (low band
/// x K, high band x 1/K per level and axis) to 5e-4 of the image's
/// coefficient scale (the constants are rounded to 2^-16), so the Q16
/// constants are the Part 1 filter.
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
        let q16 = q16_reference(&img, w, h, levels);
        let mut ours = img.clone();
        let mut scratch = vec![0i32; w.max(h)];
        forward_2d::<Fixed97>(&mut ours, ImageLayout::new(w, h), levels, &mut scratch).unwrap();
        let bands: Vec<_> = subbands(w, h, levels).unwrap().collect();
        let scale = bands.iter().fold(1.0f64, |m, band| {
            let factor = band_factor(w, h, band.level as u32, band.orientation);
            let r = band.rect;
            (r.y..r.y + r.height)
                .flat_map(|y| (r.x..r.x + r.width).map(move |x| y * w + x))
                .fold(m, |m, i| m.max((exact[i] * factor).abs()))
        });
        for band in bands {
            let factor = band_factor(w, h, band.level as u32, band.orientation);
            let r = band.rect;
            let index = |x: usize, y: usize| y * w + x;
            for y in r.y..r.y + r.height {
                for x in r.x..r.x + r.width {
                    let i = index(x, y);
                    let (unrounded, bound) = q16[i];
                    assert!(
                        (ours[i] as f64 - unrounded).abs() <= bound + 1e-6,
                        "{w}x{h} L{levels} {band:?}: ({x},{y}) fixed {} vs unrounded {unrounded}, bound {bound}",
                        ours[i]
                    );
                    let expect = exact[i] * factor;
                    assert!(
                        (unrounded - expect).abs() <= 5e-4 * scale,
                        "{w}x{h} L{levels} {band:?}: ({x},{y}) Q16 lifting {unrounded} vs scaled reference {expect}"
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
