//! Unit and property tests of the DWT module (std allowed here).

use super::block::{
    forward_level_blocked, inverse_level_blocked, BlockGeometry, LevelShape,
    STRIP_MAX_OUT_PAIR_ROWS,
};
use super::volume::{forward_3d, inverse_3d, volume_subbands, VolumeLayout};
use super::*;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::vec;
use std::vec::Vec;

fn random_image(rng: &mut ChaCha8Rng, n: usize, bits: u32) -> Vec<i32> {
    let half = 1i32 << (bits - 1);
    (0..n).map(|_| rng.random_range(-half..half)).collect()
}

fn round_trip_int<W: Lifting<Sample = i32>>(w: usize, h: usize, levels: u32, bits: u32, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let stride = w + (seed % 3) as usize;
    let layout = ImageLayout::with_stride(w, h, stride);
    let original = random_image(&mut rng, layout.required_len(), bits);
    let mut data = original.clone();
    let mut scratch = vec![0; scratch_len_2d(w, h)];
    forward_2d::<W>(&mut data, layout, levels, &mut scratch).unwrap();
    inverse_2d::<W>(&mut data, layout, levels, &mut scratch).unwrap();
    assert_eq!(data, original, "{w}x{h} levels {levels} bits {bits}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn cdf53_round_trip(w in 1usize..40, h in 1usize..40, l in 0u32..7, bits in 1u32..=16, seed: u64) {
        let levels = l.min(max_levels(w, h));
        round_trip_int::<Cdf53>(w, h, levels, bits, seed);
    }

    #[test]
    fn fixed97_round_trip(w in 1usize..40, h in 1usize..40, l in 0u32..7, bits in 1u32..=16, seed: u64) {
        let levels = l.min(max_levels(w, h));
        round_trip_int::<Fixed97>(w, h, levels, bits, seed);
    }

    #[test]
    fn cdf97_round_trip(w in 1usize..40, h in 1usize..40, l in 0u32..7, seed: u64) {
        let levels = l.min(max_levels(w, h));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let original: Vec<f32> = (0..w * h).map(|_| rng.random_range(-128.0..128.0f32)).collect();
        let mut data = original.clone();
        let layout = ImageLayout::new(w, h);
        let mut scratch = vec![0.0; scratch_len_2d(w, h)];
        forward_2d::<Cdf97>(&mut data, layout, levels, &mut scratch).unwrap();
        inverse_2d::<Cdf97>(&mut data, layout, levels, &mut scratch).unwrap();
        for (a, b) in data.iter().zip(&original) {
            prop_assert!((a - b).abs() < 1e-3, "{a} vs {b}");
        }
    }

    #[test]
    fn volume_round_trip(w in 1usize..12, h in 1usize..12, d in 1usize..12, lx in 0u32..5, ly in 0u32..5, lz in 0u32..5, seed: u64) {
        let levels = [lx.min(max_levels(w, 1)), ly.min(max_levels(h, 1)), lz.min(max_levels(d, 1))];
        volume::check_levels([w, h, d], levels).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let layout = VolumeLayout::new(w, h, d);
        let original = random_image(&mut rng, w * h * d, 12);
        for pass in 0..2 {
            let mut data = original.clone();
            let mut scratch = vec![0; volume::scratch_len_3d(w, h, d) * (1 + pass * 20)];
            if pass == 0 {
                forward_3d::<Cdf53>(&mut data, layout, levels, &mut scratch).unwrap();
                inverse_3d::<Cdf53>(&mut data, layout, levels, &mut scratch).unwrap();
            } else {
                forward_3d::<Fixed97>(&mut data, layout, levels, &mut scratch).unwrap();
                inverse_3d::<Fixed97>(&mut data, layout, levels, &mut scratch).unwrap();
            }
            prop_assert_eq!(&data, &original);
        }
    }
}

#[test]
fn mirror_is_whole_sample_symmetric() {
    let n = 5;
    let got: Vec<usize> = (-9i64..14).map(|i| mirror(i, n)).collect();
    assert_eq!(
        got,
        vec![1, 0, 1, 2, 3, 4, 3, 2, 1, 0, 1, 2, 3, 4, 3, 2, 1, 0, 1, 2, 3, 4, 3]
    );
    assert_eq!(mirror(-7, 1), 0);
    assert_eq!(mirror(3, 2), 1);
}

/// Hand-computed 5/3 on a short line (Annex F formulas).
#[test]
fn cdf53_line_by_hand() {
    let mut x = [10, 20, 30, 25, 5];
    Cdf53::forward_lines(&mut x, 5, 1).unwrap();
    // d0 = 20 - floor(40/2) = 0; d1 = 25 - floor(35/2) = 8
    // s0 = 10 + floor((0+0+2)/4) = 10; s1 = 30 + floor((0+8+2)/4) = 32; s2 = 5 + floor((8+8+2)/4) = 9
    assert_eq!(x, [10, 0, 32, 8, 9]);
}

#[test]
fn strip_width_does_not_change_results() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (w, h) = (37, 29);
    let layout = ImageLayout::new(w, h);
    let original = random_image(&mut rng, w * h, 10);
    let mut reference = original.clone();
    let mut scratch = vec![0; scratch_len_2d(w, h)];
    forward_2d::<Fixed97>(&mut reference, layout, 4, &mut scratch).unwrap();
    for extra in [2, 5, 64] {
        let mut data = original.clone();
        let mut scratch = vec![0; scratch_len_2d(w, h) * extra];
        forward_2d::<Fixed97>(&mut data, layout, 4, &mut scratch).unwrap();
        assert_eq!(data, reference);
    }
}

#[test]
fn errors_are_reported() {
    let mut data = vec![0i32; 20];
    let mut scratch = vec![0i32; 5];
    let l = ImageLayout::new(5, 4);
    assert_eq!(
        forward_2d::<Cdf53>(&mut data, l, 4, &mut scratch),
        Err(DwtError::TooManyLevels)
    );
    assert_eq!(
        forward_2d::<Cdf53>(&mut data, l, 1, &mut scratch[..4]),
        Err(DwtError::ScratchTooSmall)
    );
    assert_eq!(
        forward_2d::<Cdf53>(&mut data[..19], l, 1, &mut scratch),
        Err(DwtError::BufferTooSmall)
    );
    let bad = ImageLayout::with_stride(5, 4, 4);
    assert_eq!(
        forward_2d::<Cdf53>(&mut data, bad, 1, &mut scratch),
        Err(DwtError::BadStride)
    );
    assert_eq!(
        forward_2d::<Cdf53>(&mut data, ImageLayout::new(0, 4), 0, &mut scratch),
        Err(DwtError::EmptyDimension)
    );
    assert_eq!(max_levels(5, 4), 3);
    assert_eq!(max_levels(1, 1), 0);
    assert_eq!(max_levels(1024, 3), 10);
    assert_eq!(max_levels(1025, 3), 11);
}

#[test]
fn subbands_tile_the_image_and_hold_the_details() {
    for &(w, h, levels) in &[
        (13usize, 7usize, 3u32),
        (1, 9, 4),
        (64, 64, 6),
        (5, 1, 3),
        (2, 2, 1),
    ] {
        let mut owner = vec![usize::MAX; w * h];
        let bands: Vec<Subband> = subbands(w, h, levels).unwrap().collect();
        assert_eq!(bands.len(), 1 + 3 * levels as usize);
        assert_eq!(bands[0].orientation, Orientation::LL);
        for (i, b) in bands.iter().enumerate() {
            for y in b.rect.y..b.rect.y + b.rect.height {
                for x in b.rect.x..b.rect.x + b.rect.width {
                    assert_eq!(owner[y * w + x], usize::MAX, "overlap at {x},{y}");
                    owner[y * w + x] = i;
                }
            }
        }
        assert!(
            owner.iter().all(|&o| o != usize::MAX),
            "{w}x{h}: not covered"
        );
        // A constant image has zero 5/3 details everywhere.
        let mut data = vec![77i32; w * h];
        let mut scratch = vec![0; scratch_len_2d(w, h)];
        forward_2d::<Cdf53>(&mut data, ImageLayout::new(w, h), levels, &mut scratch).unwrap();
        for b in &bands[1..] {
            for y in b.rect.y..b.rect.y + b.rect.height {
                for x in b.rect.x..b.rect.x + b.rect.width {
                    assert_eq!(data[y * w + x], 0);
                }
            }
        }
        let ll = bands[0].rect;
        assert!(data[..ll.width].iter().all(|&v| v == 77));
    }
    // One-pixel axes give empty high bands.
    let b: Vec<Subband> = subbands(1, 9, 2).unwrap().collect();
    assert!(b[1].rect.is_empty() && b[3].rect.is_empty() && !b[2].rect.is_empty());
}

fn blocked_multilevel<W: Lifting>(
    image: &[W::Sample],
    w: usize,
    h: usize,
    levels: u32,
    geometry: impl Fn(usize, usize) -> BlockGeometry,
) -> Vec<W::Sample> {
    let mut out = vec![W::Sample::default(); w * h];
    let mut src: Vec<W::Sample> = image.to_vec();
    let mut src_stride = w;
    for level in 0..levels {
        let (lw, lh) = level_size(w, h, level);
        let g = geometry(lw, lh);
        let mut block = vec![W::Sample::default(); g.block_len()];
        let shape = LevelShape::level_2d(lw, lh);
        let (llw, llh) = shape.ll_size();
        let mut ll = vec![W::Sample::default(); llw * llh];
        forward_level_blocked::<W>(
            (&src, src_stride),
            shape,
            (&mut out, w),
            Some((&mut ll, llw)),
            g,
            &mut block,
        )
        .unwrap();
        src = ll;
        src_stride = llw;
    }
    let (lw, lh) = level_size(w, h, levels);
    for y in 0..lh {
        out[y * w..y * w + lw].copy_from_slice(&src[y * src_stride..y * src_stride + lw]);
    }
    out
}

fn blocked_inverse<W: Lifting>(
    coeffs: &[W::Sample],
    w: usize,
    h: usize,
    levels: u32,
    g: BlockGeometry,
) -> Vec<W::Sample> {
    let mut block = vec![W::Sample::default(); g.block_len()];
    let mut ll: Option<(Vec<W::Sample>, usize)> = None;
    for level in (0..levels).rev() {
        let (lw, lh) = level_size(w, h, level);
        let mut dst = vec![W::Sample::default(); lw * lh];
        let ll_plane = ll.as_ref().map(|(v, s)| (v.as_slice(), *s));
        inverse_level_blocked::<W>(
            (coeffs, w),
            ll_plane,
            LevelShape::level_2d(lw, lh),
            (&mut dst, lw),
            g,
            &mut block,
        )
        .unwrap();
        ll = Some((dst, lw));
    }
    match ll {
        Some((v, _)) => v,
        None => coeffs.to_vec(),
    }
}

fn check_blocked<W: Lifting>(image: &[W::Sample], w: usize, h: usize, levels: u32) {
    let mut plain = image.to_vec();
    let mut scratch = vec![W::Sample::default(); scratch_len_2d(w, h)];
    forward_2d::<W>(&mut plain, ImageLayout::new(w, h), levels, &mut scratch).unwrap();
    for sg in [4, 8, 16, 32] {
        // Strip heights from the minimum (many strips) to the maximum (one
        // strip per column of strips on these small images), with the
        // heights the GPU driver picks for large levels (4, 6, 8) between.
        for rows in [1, 4, 5, 6, 8, STRIP_MAX_OUT_PAIR_ROWS] {
            let strip = |_, _| BlockGeometry::forward_strip_rows(W::WAVELET, sg, rows).unwrap();
            let blocked = blocked_multilevel::<W>(image, w, h, levels, strip);
            assert_eq!(
                blocked,
                plain,
                "{:?} forward {w}x{h} L{levels} subgroup {sg} strip rows {rows:?}",
                W::WAVELET
            );
        }
        let g = BlockGeometry::for_subgroup(W::WAVELET, sg).unwrap();
        let back = blocked_inverse::<W>(&plain, w, h, levels, g);
        let mut expect = plain.clone();
        inverse_2d::<W>(&mut expect, ImageLayout::new(w, h), levels, &mut scratch).unwrap();
        assert_eq!(
            back,
            expect,
            "{:?} inverse {w}x{h} L{levels} subgroup {sg}",
            W::WAVELET
        );
    }
    // A deliberately small block (halo-dominated) still gives the same result.
    let g = BlockGeometry::new(
        W::WAVELET,
        2 * W::WAVELET.halo_pairs() + 1,
        2 * W::WAVELET.halo_pairs() + 1,
    )
    .unwrap();
    assert_eq!(
        blocked_multilevel::<W>(image, w, h, levels, |_, _| g),
        plain
    );
}

#[test]
fn blocked_form_equals_plain_form() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for &(w, h) in &[
        (1usize, 1usize),
        (1, 37),
        (37, 1),
        (2, 3),
        (67, 45),
        (130, 71),
        // Taller than the largest strip.
        (9, 300),
    ] {
        let levels = max_levels(w, h).min(4);
        let img = random_image(&mut rng, w * h, 12);
        check_blocked::<Cdf53>(&img, w, h, levels);
        check_blocked::<Fixed97>(&img, w, h, levels);
        let imgf: Vec<f32> = img.iter().map(|&v| v as f32).collect();
        check_blocked::<Cdf97>(&imgf, w, h, levels);
    }
    assert_eq!(
        BlockGeometry::new(Wavelet::Cdf97, 4, 16),
        Err(DwtError::BadBlockGeometry)
    );
    // Shader blocks start each lane's 4 columns on a multiple of 4 (the
    // shaders' 16-byte vectors) for every wavelet and subgroup size.
    for wavelet in [Wavelet::Cdf53, Wavelet::Cdf97, Wavelet::Fixed97] {
        for sg in [4, 8, 16, 32, 64] {
            let strip = BlockGeometry::forward_strip_rows(wavelet, sg, 4);
            for g in [
                strip.unwrap(),
                BlockGeometry::for_subgroup(wavelet, sg).unwrap(),
            ] {
                assert!(g.halo_x >= g.halo && g.halo_x.is_multiple_of(2));
                assert!((2 * g.out_pairs_x()).is_multiple_of(4));
            }
        }
    }
}

#[test]
fn volume_without_z_levels_is_per_slice_2d() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let (w, h, d) = (19, 11, 5);
    let original = random_image(&mut rng, w * h * d, 10);
    let mut vol = original.clone();
    let mut scratch = vec![0; 64];
    forward_3d::<Cdf53>(
        &mut vol,
        VolumeLayout::new(w, h, d),
        [3, 3, 0],
        &mut scratch,
    )
    .unwrap();
    for z in 0..d {
        let mut slice = original[z * w * h..(z + 1) * w * h].to_vec();
        forward_2d::<Cdf53>(&mut slice, ImageLayout::new(w, h), 3, &mut scratch).unwrap();
        assert_eq!(&vol[z * w * h..(z + 1) * w * h], &slice[..]);
    }
}

#[test]
fn volume_subbands_tile_the_volume() {
    for &(dims, levels) in &[
        ([9usize, 6usize, 5usize], [3u32, 2u32, 1u32]),
        ([4, 4, 1], [2, 2, 0]),
        ([1, 7, 8], [0, 3, 2]),
    ] {
        let [w, h, d] = dims;
        let mut seen = vec![false; w * h * d];
        let mut count = 0;
        for b in volume_subbands(dims, levels).unwrap() {
            count += 1;
            for z in b.origin[2]..b.origin[2] + b.size[2] {
                for y in b.origin[1]..b.origin[1] + b.size[1] {
                    for x in b.origin[0]..b.origin[0] + b.size[0] {
                        let i = (z * h + y) * w + x;
                        assert!(!seen[i]);
                        seen[i] = true;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&s| s), "{dims:?}");
        let expected: usize = (0..volume::total_levels(levels))
            .map(|l| (1usize << volume::axes_at(levels, l).iter().filter(|&&a| a).count()) - 1)
            .sum();
        assert_eq!(count, 1 + expected);
    }
}

#[test]
fn level_shift_round_trips_and_clamps() {
    for bits in 1..=16u32 {
        let max = (1u32 << bits) - 1;
        let src: Vec<u16> = (0..=max.min(3000)).map(|v| v as u16).collect();
        let mut shifted = vec![0i32; src.len()];
        shift::shift_in_u16(&src, bits, &mut shifted).unwrap();
        assert_eq!(shifted[0], -(1 << (bits - 1)));
        let mut back = vec![0u16; src.len()];
        shift::shift_out_u16(&shifted, bits, &mut back).unwrap();
        assert_eq!(back, src);
    }
    let mut v = vec![-200, 0, 500];
    shift::shift_inverse(&mut v, 8).unwrap();
    assert_eq!(v, vec![0, 128, 255]);
    assert_eq!(shift::shift_forward(&mut v, 0), Err(DwtError::BadBitDepth));
    assert_eq!(shift::shift_forward(&mut v, 17), Err(DwtError::BadBitDepth));
}

#[test]
fn fixed_point_constants_are_rounded_lifting_constants() {
    let q = |c: f64| (c * 65536.0 + 0.5).floor() as i32;
    assert_eq!(fixed97::Q_ALPHA, q(lift97::ALPHA));
    assert_eq!(fixed97::Q_BETA, q(lift97::BETA));
    assert_eq!(fixed97::Q_GAMMA, q(lift97::GAMMA));
    assert_eq!(fixed97::Q_DELTA, q(lift97::DELTA));
}

/// Energy of the image reconstructed from a single unit coefficient in the
/// middle of a subband, against the gain recurrence.
#[test]
fn gains_match_reconstructed_energy() {
    let (w, h, levels) = (128usize, 128usize, 4u32);
    for band in subbands(w, h, levels).unwrap() {
        let r = band.rect;
        let at = (r.y + r.height / 2) * w + r.x + r.width / 2;
        let mut scratch = vec![0.0f32; 256];
        let mut img = vec![0.0f32; w * h];
        img[at] = 1.0;
        inverse_2d::<Cdf97>(&mut img, ImageLayout::new(w, h), levels, &mut scratch).unwrap();
        let energy: f64 = img.iter().map(|&v| (v as f64) * (v as f64)).sum();
        let expect = gains::subband_energy(Wavelet::Cdf97, band.level as u32, band.orientation);
        assert!(
            (energy - expect).abs() < 1e-4 * expect,
            "9/7 {band:?}: {energy} vs {expect}"
        );

        let amp = 1 << 16;
        for (wavelet, inv) in [
            (
                Wavelet::Cdf53,
                inverse_2d::<Cdf53>
                    as fn(&mut [i32], ImageLayout, u32, &mut [i32]) -> Result<(), DwtError>,
            ),
            (Wavelet::Fixed97, inverse_2d::<Fixed97>),
        ] {
            let mut img = vec![0i32; w * h];
            img[at] = amp;
            let mut scratch = vec![0i32; 256];
            inv(&mut img, ImageLayout::new(w, h), levels, &mut scratch).unwrap();
            let energy: f64 = img.iter().map(|&v| (v as f64 / amp as f64).powi(2)).sum();
            let expect = gains::subband_energy(wavelet, band.level as u32, band.orientation);
            assert!(
                (energy - expect).abs() < 2e-3 * expect,
                "{wavelet:?} {band:?}: {energy} vs {expect}"
            );
        }
    }
    assert!((gains::subband_norm(Wavelet::Cdf53, 0, Orientation::HH) - 0.71875).abs() < 1e-12);
}
