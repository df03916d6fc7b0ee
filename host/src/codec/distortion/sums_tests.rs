//! The integer sums' decreases against the definitions they come from:
//! exactly, in rationals scaled to integers, and against the plain `f64`
//! summation the codec used before them.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wavelane_core::bpc::reconstruct_magnitude;

use super::*;

/// A block's coefficients: mostly small, some near a bin edge, a few large.
fn coefficients(rng: &mut ChaCha8Rng, n: usize, big: i32) -> Vec<i32> {
    (0..n)
        .map(|_| match rng.random_range(0..6) {
            0 => 0,
            1 => rng.random_range(-big..=big),
            _ => rng.random_range(-300..=300),
        })
        .collect()
}

fn sums_of(data: &[i32], q16: u64) -> BlockSums {
    let mut s = BlockSums::default();
    for &c in data {
        s.add(c, q16, quant::half_bin(q16, 0));
    }
    s
}

/// The decreases as exact rationals over the common denominator
/// `(2 · q16 · 2^k)²`, from the definitions in the shifted domain (`v' =
/// v >> k`, its own top bitplane and half-bin rule): `X = 2 · s · 2^16`
/// is the real value and `Q = R'_j · q16 · 2^k` a reconstruction, scaled
/// alike, so each squared error is `(X - Q)²`, an integer.
fn exact(data: &[i32], q16: u64, k: u8) -> (Vec<i128>, Vec<i128>, i128) {
    let half = quant::half_bin(q16, k);
    let (mut sig, mut refine, mut energy) = (vec![], vec![], 0i128);
    for &c in data {
        let x = (2 * c.unsigned_abs() as i128) << 16;
        energy += x * x;
        let v = index_magnitude(c, q16) >> k;
        if v == 0 {
            continue;
        }
        let top = (31 - v.leading_zeros()) as usize;
        if sig.len() <= top {
            sig.resize(top + 1, 0);
            refine.resize(top + 1, 0);
        }
        let q = |j: usize| {
            let r = 2 * reconstruct_magnitude(v, j as u8) as i128 + (j == 0 && half) as i128;
            r * q16 as i128 * (1i128 << k)
        };
        let err = |j: usize| (x - q(j)) * (x - q(j));
        sig[top] += x * x - err(top);
        for (j, r) in refine.iter_mut().enumerate().take(top) {
            *r += err(j + 1) - err(j);
        }
    }
    (sig, refine, energy)
}

/// The old `f64` summation: real values `|c| / Δ'`, reconstructions in
/// the shifted domain.
fn plain_f64(data: &[i32], q16: u64, k: u8) -> BlockDistortion {
    let half = quant::half_bin(q16, k);
    let scale = 65536.0 / (q16 as f64 * (k as f64).exp2());
    let mut out = BlockDistortion::default();
    for &c in data {
        let real = c.unsigned_abs() as f64 * scale;
        out.energy += real * real;
        let v = index_magnitude(c, q16) >> k;
        if v == 0 {
            continue;
        }
        let top = (31 - v.leading_zeros()) as usize;
        if out.significance.len() <= top {
            out.significance.resize(top + 1, 0.0);
            out.refinement.resize(top + 1, 0.0);
        }
        let recon =
            |j: u8| reconstruct_magnitude(v, j) as f64 + if j == 0 && half { 0.5 } else { 0.0 };
        let err = |j: u8| (real - recon(j)).powi(2);
        out.significance[top] += real * real - err(top as u8);
        for j in 0..top as u8 {
            out.refinement[j as usize] += err(j + 1) - err(j);
        }
    }
    out
}

/// Random blocks, steps and shifts: every decrease equals the exact
/// rational to the last bits of an `f64`, and the plain `f64` sum to its
/// own rounding; the vectors have the same length (the top bitplane).
#[test]
fn integer_sums_give_the_exact_decreases() {
    let mut rng = ChaCha8Rng::seed_from_u64(26);
    for case in 0..400 {
        let n = rng.random_range(1..=64 * 8);
        let q16 = match case % 4 {
            0 => UNIT_STEP,
            1 => rng.random_range(1 << 12..1 << 16),
            _ => rng.random_range(1 << 16..1 << 22),
        };
        let big = 1 << rng.random_range(4..20);
        let data = coefficients(&mut rng, n, big);
        let k = if case % 3 == 0 {
            0
        } else {
            rng.random_range(0..5)
        };
        let got = sums_of(&data, q16).distortion(q16, k);
        let (sig, refine, energy) = exact(&data, q16, k);
        let den = ((2 * q16 as u128) << k).pow(2) as f64;
        let what = format!("case {case}: {n} coefficients, q16 {q16}, shift {k}");
        assert_eq!(got.significance.len(), sig.len(), "{what}: planes");
        let scale = got.energy.max(1.0);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * scale + 1e-12 * a.abs();
        assert!(close(got.energy, energy as f64 / den), "{what}: energy");
        for j in 0..sig.len() {
            let (s, r) = (sig[j] as f64 / den, refine[j] as f64 / den);
            assert!(
                close(got.significance[j], s),
                "{what}: significance {j}: {} vs {s}",
                got.significance[j]
            );
            assert!(
                close(got.refinement[j], r),
                "{what}: refinement {j}: {} vs {r}",
                got.refinement[j]
            );
        }
        let plain = plain_f64(&data, q16, k);
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * scale;
        assert!(near(got.energy, plain.energy), "{what}: f64 energy");
        for j in 0..sig.len() {
            assert!(
                near(got.significance[j], plain.significance[j]),
                "{what}: f64 significance {j}"
            );
            assert!(
                near(got.refinement[j], plain.refinement[j]),
                "{what}: f64 refinement {j}"
            );
        }
    }
}

/// The sums do not depend on the order of the coefficients (the device
/// adds them in another order), and the extremes (`i32::MIN`, indices
/// clamped at the unit step, the smallest and largest steps) stay exact.
#[test]
fn integer_sums_are_order_independent_at_the_extremes() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let extremes = [
        i32::MIN,
        i32::MIN + 1,
        i32::MAX,
        1 << 28,
        -(1 << 27),
        1,
        -1,
        0,
    ];
    for q16 in [1, 2, 3, UNIT_STEP, (4095u64 << 20) - 1, 1 << 31] {
        let mut data: Vec<i32> = (0..64 * 256)
            .map(|i| match i % 2 {
                0 => extremes[rng.random_range(0..extremes.len())],
                _ => rng.random(),
            })
            .collect();
        let forward = sums_of(&data, q16);
        data.reverse();
        let mut shuffled = data.clone();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.random_range(0..=i));
        }
        assert_eq!(sums_of(&data, q16), forward, "q16 {q16}: reversed");
        assert_eq!(sums_of(&shuffled, q16), forward, "q16 {q16}: shuffled");
        // The same sums through i128 directly from the definitions: no
        // term was wrapped in i64.
        let mut wide = [0i128; SUMS];
        let half = quant::half_bin(q16, 0);
        for &c in &data {
            let s = c.unsigned_abs() as i128;
            wide[0] += s * s;
            let v = index_magnitude(c, q16);
            if v == 0 {
                continue;
            }
            let top = (31 - v.leading_zeros()) as usize;
            let r =
                |j: usize| 2 * reconstruct_magnitude(v, j as u8) as i128 + (j == 0 && half) as i128;
            wide[1 + 4 * top] += r(top) * s;
            wide[2 + 4 * top] += r(top) * r(top);
            for j in 0..top {
                wide[3 + 4 * j] += (r(j) - r(j + 1)) * s;
                wide[4 + 4 * j] += r(j) * r(j) - r(j + 1) * r(j + 1);
            }
        }
        assert!(forward.0 == wide, "q16 {q16}: i128 definitions");
        // And they convert without overflow to finite decreases.
        let d = forward.distortion(q16, 3);
        assert!(d.energy.is_finite() && d.significance.iter().all(|v| v.is_finite()));
    }
}

/// The device's words (low 64 bits, then high, little-endian u32s) read
/// back as the same 128-bit sums, negative ones included.
#[test]
fn device_words_round_trip() {
    let mut want = BlockSums::default();
    for (i, v) in want.0.iter_mut().enumerate() {
        *v = (i as i128 - 50) * (1i128 << 70) + i as i128 * 12345;
    }
    let words: Vec<u32> = want
        .0
        .iter()
        .flat_map(|&v| (0..4).map(move |w| ((v as u128) >> (32 * w)) as u32))
        .collect();
    assert_eq!(BlockSums::from_words(&words), want);
}
