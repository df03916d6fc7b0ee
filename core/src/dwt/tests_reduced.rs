//! Reduced-resolution 3-D inverses: every reduction the decomposition
//! holds gives exactly the low band of a transform of that many levels,
//! and the others are refused.

use super::subbands::max_levels;
use super::volume::{
    check_levels, forward_3d, inverse_3d_reduced, reduced_dims, reduction_is_held, scratch_len_3d,
    uniform_reduction, VolumeLayout,
};
use super::*;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::vec;
use std::vec::Vec;

/// The corner `dims` of a volume of width `w` and height `h`.
fn corner(data: &[i32], w: usize, h: usize, dims: [usize; 3]) -> Vec<i32> {
    let mut out = Vec::new();
    for z in 0..dims[2] {
        for y in 0..dims[1] {
            let row = (z * h + y) * w;
            out.extend_from_slice(&data[row..row + dims[0]]);
        }
    }
    out
}

/// Reduced inverse of the full transform, and the low band of a transform
/// of `reduce` levels.
fn reduced_against_low_band<W: Lifting<Sample = i32>>(
    original: &[i32],
    dims: [usize; 3],
    levels: [u32; 3],
    reduce: [u32; 3],
) -> (Vec<i32>, Vec<i32>) {
    let layout = VolumeLayout::new(dims[0], dims[1], dims[2]);
    let mut scratch = vec![0; scratch_len_3d(dims[0], dims[1], dims[2])];
    let mut full = original.to_vec();
    forward_3d::<W>(&mut full, layout, levels, &mut scratch).unwrap();
    inverse_3d_reduced::<W>(&mut full, layout, levels, reduce, &mut scratch).unwrap();
    let mut low = original.to_vec();
    forward_3d::<W>(&mut low, layout, reduce, &mut scratch).unwrap();
    let out = reduced_dims(dims, levels, reduce);
    (
        corner(&full, dims[0], dims[1], out),
        corner(&low, dims[0], dims[1], out),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Per-axis levels, the same count left out of each axis (or all it
    /// has): the exact low band, for both integer wavelets.
    #[test]
    fn held_reductions_give_the_low_band_exactly(
        w in 1usize..14, h in 1usize..14, d in 1usize..14,
        l in proptest::array::uniform3(0u32..4), n in 0u32..4, seed: u64,
    ) {
        let dims = [w, h, d];
        let levels = [l[0].min(max_levels(w, 1)), l[1].min(max_levels(h, 1)), l[2].min(max_levels(d, 1))];
        check_levels(dims, levels).unwrap();
        let reduce = uniform_reduction(levels, n);
        prop_assert!(reduction_is_held(levels, reduce));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let original: Vec<i32> = (0..w * h * d).map(|_| rng.random_range(-2048..2048)).collect();
        let (got, want) = reduced_against_low_band::<Cdf53>(&original, dims, levels, reduce);
        prop_assert_eq!(got, want);
        let (got, want) = reduced_against_low_band::<Fixed97>(&original, dims, levels, reduce);
        prop_assert_eq!(got, want);
    }
}

#[test]
fn reductions_the_decomposition_does_not_hold_are_refused() {
    let layout = VolumeLayout::new(8, 8, 8);
    let mut data = vec![0; 512];
    let mut scratch = vec![0; 8];
    // More than an axis has; one axis reduced where another is synthesized.
    for (levels, reduce) in [
        ([2, 2, 1], [0, 0, 2]),
        ([2, 2, 2], [2, 0, 0]),
        ([3, 3, 1], [1, 2, 1]),
    ] {
        assert!(!reduction_is_held(levels, reduce), "{levels:?} {reduce:?}");
        let got = inverse_3d_reduced::<Cdf53>(&mut data, layout, levels, reduce, &mut scratch);
        assert_eq!(got, Err(DwtError::BadReduction), "{levels:?} {reduce:?}");
    }
    // Held though not uniform: z has no levels where x and y are reduced.
    assert!(reduction_is_held([2, 2, 1], [2, 2, 1]));
    assert!(reduction_is_held([3, 3, 1], [1, 1, 1]));
}

/// The float 9/7 (no rounding) on held reductions of unequal per-axis
/// levels: the low band to float precision.
#[test]
fn held_reductions_of_the_float_transform_match_the_low_band() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for (dims, levels, n) in [
        ([13usize, 9, 11], [2u32, 2, 2], 1u32),
        ([16, 16, 8], [3, 3, 1], 2),
        ([10, 12, 14], [2, 1, 3], 2),
        ([7, 7, 7], [2, 2, 0], 1),
    ] {
        let reduce = uniform_reduction(levels, n);
        let count = dims.iter().product();
        let original: Vec<f32> = (0..count)
            .map(|_| rng.random_range(-100.0..100.0f32))
            .collect();
        let layout = VolumeLayout::new(dims[0], dims[1], dims[2]);
        let mut scratch = vec![0.0; scratch_len_3d(dims[0], dims[1], dims[2])];
        let mut full = original.clone();
        forward_3d::<Cdf97>(&mut full, layout, levels, &mut scratch).unwrap();
        inverse_3d_reduced::<Cdf97>(&mut full, layout, levels, reduce, &mut scratch).unwrap();
        let mut low = original.clone();
        forward_3d::<Cdf97>(&mut low, layout, reduce, &mut scratch).unwrap();
        let out = reduced_dims(dims, levels, reduce);
        for z in 0..out[2] {
            for y in 0..out[1] {
                for x in 0..out[0] {
                    let i = (z * dims[1] + y) * dims[0] + x;
                    assert!(
                        (full[i] - low[i]).abs() < 1e-2,
                        "{dims:?} {reduce:?} at {x},{y},{z}: {} vs {}",
                        full[i],
                        low[i]
                    );
                }
            }
        }
    }
}
