//! DWT cross-checks: core (sequential) = CPU backend (rayon) = GPU backend
//! (Vulkan), for every wavelet, forward and inverse, 2-D and 3-D, on random
//! sizes (odd, one-pixel, strided). Integer wavelets must match bit for bit;
//! the f32 9/7 within 1e-5 of the coefficient scale.

use rand::Rng;
use wavelane::backend::Backend;
use wavelane::dwt::gpu::{forward_strip, strip_rows, GpuDwt, STRIP_FILL};
use wavelane::dwt::{self, HostWavelet};
use wavelane_core::dwt::block::{BlockGeometry, STRIP_MAX_OUT_PAIR_ROWS};
use wavelane_core::dwt::volume::{self, VolumeLayout};
use wavelane_core::dwt::{max_levels, Cdf53, Cdf97, Fixed97, ImageLayout, Wavelet};
use wavelane_tests::{assert_same, for_random_cases, gpu, TestRng};

/// Random samples of a random bit depth, level shifted (as the CLI feeds them).
fn samples(rng: &mut TestRng, n: usize) -> Vec<i32> {
    let bits = rng.random_range(1..=16u32);
    let half = 1i32 << (bits - 1);
    (0..n).map(|_| rng.random_range(-half..half)).collect()
}

trait Sample: Copy + PartialEq + std::fmt::Debug + Default {
    fn from_i32(v: i32) -> Self;
    fn compare(what: &str, expected: &[Self], actual: &[Self]);
}

impl Sample for i32 {
    fn from_i32(v: i32) -> Self {
        v
    }
    fn compare(what: &str, expected: &[Self], actual: &[Self]) {
        assert_same(what, expected, actual);
    }
}

impl Sample for f32 {
    fn from_i32(v: i32) -> Self {
        v as f32
    }
    fn compare(what: &str, expected: &[Self], actual: &[Self]) {
        assert_eq!(expected.len(), actual.len());
        let scale = expected.iter().fold(1.0f32, |m, v| m.max(v.abs()));
        for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
            assert!(
                (e - a).abs() <= 1e-5 * scale.max(e.abs()),
                "{what}: index {i}: expected {e}, got {a} (scale {scale})"
            );
        }
    }
}

struct Case {
    layout: VolumeLayout,
    levels: [u32; 3],
}

fn random_image_case(rng: &mut TestRng, max_side: usize) -> Case {
    let w = if rng.random_bool(0.1) {
        1
    } else {
        rng.random_range(1..=max_side)
    };
    let h = if rng.random_bool(0.1) {
        1
    } else {
        rng.random_range(1..=max_side)
    };
    let stride = w + rng.random_range(0..3);
    let levels = rng.random_range(0..=max_levels(w, h).min(6));
    Case {
        layout: VolumeLayout {
            width: w,
            height: h,
            depth: 1,
            row_stride: stride,
            slice_stride: (h - 1) * stride + w,
        },
        levels: [levels, levels, 0],
    }
}

fn random_volume_case(rng: &mut TestRng, max_side: usize) -> Case {
    let dims = [0; 3].map(|_| rng.random_range(1..=max_side));
    let levels = dims.map(|n| rng.random_range(0..=max_levels(n, 1).min(3)));
    Case {
        layout: VolumeLayout::new(dims[0], dims[1], dims[2]),
        levels,
    }
}

fn len(l: &VolumeLayout) -> usize {
    (l.depth - 1) * l.slice_stride + (l.height - 1) * l.row_stride + l.width
}

/// Core forward/inverse (the reference), then every backend must give the
/// same coefficients, and the same reconstruction from them.
fn check<W: HostWavelet>(backend: &Backend, case: &Case, input: &[i32])
where
    W::Sample: Sample,
{
    let l = case.layout;
    let what = format!(
        "{:?} {:?} {}x{}x{} levels {:?}",
        W::WAVELET,
        backend.kind(),
        l.width,
        l.height,
        l.depth,
        case.levels
    );
    let original: Vec<W::Sample> = input.iter().map(|&v| W::Sample::from_i32(v)).collect();
    let mut scratch =
        vec![W::Sample::default(); volume::scratch_len_3d(l.width, l.height, l.depth)];
    let mut expected = original.clone();
    volume::forward_3d::<W>(&mut expected, l, case.levels, &mut scratch).unwrap();
    let mut got = original.clone();
    dwt::forward_3d::<W>(backend, &mut got, l, case.levels).unwrap();
    W::Sample::compare(&format!("forward {what}"), &expected, &got);

    let mut expected_back = expected.clone();
    volume::inverse_3d::<W>(&mut expected_back, l, case.levels, &mut scratch).unwrap();
    let mut back = expected.clone();
    dwt::inverse_3d::<W>(backend, &mut back, l, case.levels).unwrap();
    W::Sample::compare(&format!("inverse {what}"), &expected_back, &back);
}

fn check_all(backend: &Backend, case: &Case, input: &[i32]) {
    check::<Cdf53>(backend, case, input);
    check::<Fixed97>(backend, case, input);
    check::<Cdf97>(backend, case, input);
}

#[test]
fn dwt_cpu_equals_core_2d() {
    for_random_cases("dwt_cpu_equals_core_2d", 40, |rng| {
        let case = random_image_case(rng, 300);
        let input = samples(rng, len(&case.layout));
        check_all(&Backend::Cpu, &case, &input);
    });
}

#[test]
fn dwt_cpu_equals_core_3d() {
    for_random_cases("dwt_cpu_equals_core_3d", 20, |rng| {
        let case = random_volume_case(rng, 40);
        let input = samples(rng, len(&case.layout));
        check_all(&Backend::Cpu, &case, &input);
    });
}

/// The 2-D entry points are the 3-D ones with depth 1.
#[test]
fn dwt_cpu_2d_entry_points() {
    for_random_cases("dwt_cpu_2d_entry_points", 5, |rng| {
        let (w, h) = (rng.random_range(1..200), rng.random_range(1..200));
        let levels = max_levels(w, h).min(5);
        let input = samples(rng, w * h);
        let mut core = input.clone();
        let mut scratch = vec![0; w.max(h)];
        wavelane_core::dwt::forward_2d::<Cdf53>(
            &mut core,
            ImageLayout::new(w, h),
            levels,
            &mut scratch,
        )
        .unwrap();
        let mut host = input.clone();
        dwt::forward_2d::<Cdf53>(&Backend::Cpu, &mut host, ImageLayout::new(w, h), levels).unwrap();
        assert_same("forward_2d", &core, &host);
        dwt::inverse_2d::<Cdf53>(&Backend::Cpu, &mut host, ImageLayout::new(w, h), levels).unwrap();
        assert_same("inverse_2d", &input, &host);
    });
}

#[test]
fn dwt_gpu_equals_core_2d() {
    let backend = Backend::Gpu(gpu());
    for_random_cases("dwt_gpu_equals_core_2d", 12, |rng| {
        let case = random_image_case(rng, 160);
        let input = samples(rng, len(&case.layout));
        check_all(&backend, &case, &input);
    });
}

/// Sizes around the block boundaries of every subgroup size, plus a larger
/// image with 5 levels (many blocks, several subgroups per workgroup).
#[test]
fn dwt_gpu_equals_core_2d_block_edges() {
    let backend = Backend::Gpu(gpu());
    for_random_cases("dwt_gpu_equals_core_2d_block_edges", 1, |rng| {
        for &(w, h, levels) in &[
            (1, 1, 0),
            (2, 2, 1),
            (1, 57, 6),
            (61, 1, 6),
            (57, 29, 3),
            (121, 59, 4),
            (513, 257, 5),
            // Widths of a multiple of 4 at every level: the inner strips of
            // every forward take the lean stream.
            (320, 200, 3),
        ] {
            let case = Case {
                layout: VolumeLayout::new(w, h, 1),
                levels: [levels, levels, 0],
            };
            let input = samples(rng, w * h);
            check_all(&backend, &case, &input);
        }
    });
}

#[test]
fn dwt_gpu_equals_core_3d() {
    let backend = Backend::Gpu(gpu());
    for_random_cases("dwt_gpu_equals_core_3d", 6, |rng| {
        let case = random_volume_case(rng, 40);
        let input = samples(rng, len(&case.layout));
        check_all(&backend, &case, &input);
    });
}

/// A volume wide enough (and with rows of a multiple of 4 samples) that
/// the 2-D levels' inner strips take the forwards' lean stream, whose
/// slice offsets the random volumes above are too narrow to reach.
#[test]
fn dwt_gpu_equals_core_3d_inner_strips() {
    let backend = Backend::Gpu(gpu());
    for_random_cases("dwt_gpu_equals_core_3d_inner_strips", 1, |rng| {
        let case = Case {
            layout: VolumeLayout::new(260, 40, 3),
            levels: [2, 2, 1],
        };
        let input = samples(rng, len(&case.layout));
        check_all(&backend, &case, &input);
    });
}

/// The forward shaders stream strips whose height the host picks per level:
/// the shortest (1 output pair row), a few, the tallest (one strip per
/// column of strips on these images, which are taller than one strip) and
/// the default rule must all give the core's coefficients.
fn check_strips<W: HostWavelet>(input: &[i32], w: usize, h: usize, levels: u32)
where
    W::Sample: Sample,
{
    let layout = VolumeLayout::new(w, h, 1);
    let original: Vec<W::Sample> = input.iter().map(|&v| W::Sample::from_i32(v)).collect();
    let mut expected = original.clone();
    let mut scratch = vec![W::Sample::default(); volume::scratch_len_3d(w, h, 1)];
    volume::forward_3d::<W>(&mut expected, layout, [levels, levels, 0], &mut scratch).unwrap();
    for rows in [Some(1), Some(5), Some(STRIP_MAX_OUT_PAIR_ROWS), None] {
        let mut plan = GpuDwt::new(gpu(), layout, [levels, levels, 0]).unwrap();
        if let Some(rows) = rows {
            plan = plan.with_strip_rows(rows);
        }
        let mut got = original.clone();
        plan.forward_host::<W>(&mut got).unwrap();
        W::Sample::compare(
            &format!(
                "{:?} forward {w}x{h} L{levels} strip rows {rows:?}",
                W::WAVELET
            ),
            &expected,
            &got,
        );
    }
}

#[test]
fn dwt_gpu_equals_core_any_strip_height() {
    for_random_cases("dwt_gpu_equals_core_any_strip_height", 1, |rng| {
        for &(w, h, levels) in &[(37, 300, 3), (300, 131, 2), (1, 260, 2)] {
            let input = samples(rng, w * h);
            check_strips::<Cdf53>(&input, w, h, levels);
            check_strips::<Fixed97>(&input, w, h, levels);
            check_strips::<Cdf97>(&input, w, h, levels);
        }
    });
}

/// The forward strip heights the GPU driver picks for the 8192² benchmark's
/// levels on a 32-lane GPU (no device needed): every wavelet's own height on the large levels; the small levels,
/// which would have fewer than `2 * STRIP_FILL` strips of it, take the
/// height whose strip count is nearest `STRIP_FILL`.
#[test]
fn forward_strips_fill_small_levels() {
    let rows = |wavelet: Wavelet, side: usize| {
        forward_strip(wavelet, 32, side, side)
            .unwrap()
            .out_pair_rows()
    };
    let per_level = |wavelet| [8192, 4096, 2048, 1024, 512].map(|side| rows(wavelet, side));
    assert_eq!(per_level(Wavelet::Cdf53), [4, 4, 6, 2, 1]);
    assert_eq!(per_level(Wavelet::Cdf97), [6, 6, 6, 2, 1]);
    assert_eq!(per_level(Wavelet::Fixed97), [8, 8, 6, 2, 1]);
    assert_eq!(strip_rows(Wavelet::Cdf53), 4);
    // Level 2 (2048²: 18 columns of strips, 1024 pair rows): 4-row strips
    // would be 4608, fewer than twice STRIP_FILL; 6 rows give 3078, the
    // nearest count (5 rows: 3690, 7 rows: 2646).
    let columns = 1024usize.div_ceil(
        forward_strip(Wavelet::Cdf53, 32, 2048, 2048)
            .unwrap()
            .out_pairs_x(),
    );
    assert_eq!(columns, 18);
    assert!(columns * 1024usize.div_ceil(4) < 2 * STRIP_FILL);
    assert_eq!(columns * 1024usize.div_ceil(6), 3078);
    // A one-pixel level still has a valid strip; a short level's strip is
    // no taller than the level.
    assert_eq!(rows(Wavelet::Cdf53, 1), 1);
    assert_eq!(rows(Wavelet::Fixed97, 20), 1);
    // Exact heights are clamped to the valid range.
    let exact = |r| {
        BlockGeometry::forward_strip_rows(Wavelet::Cdf97, 32, r)
            .unwrap()
            .out_pair_rows()
    };
    assert_eq!(
        (exact(0), exact(7), exact(1000)),
        (1, 7, STRIP_MAX_OUT_PAIR_ROWS)
    );
}
