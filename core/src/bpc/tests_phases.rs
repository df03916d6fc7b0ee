//! The phase decoder's paths against `decode_sequential` at every codeword
//! cut, on blocks from nearly empty to full: phases of a few lanes decode
//! lane by lane, denser ones all 32 lanes at once, and steps whose lanes
//! are all isolated (or all in sign context 0) with one probability
//! (`decode/phases.rs`, `decode/phase_coders.rs`). `decode_case` compares
//! every decoder form with the sequential one.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::tests_prop::{decode_case, encode_case, random_block, random_tables, Case};
use super::*;

#[test]
fn sparse_and_dense_phases_agree_at_every_cut() {
    let densities = [0.002, 0.01, 0.03, 0.08, 0.3, 0.9, 1.0];
    for (k, &density) in densities.iter().enumerate() {
        for mode in [Mode::TwoPass, Mode::ThreePass] {
            let mut rng = ChaCha8Rng::seed_from_u64(k as u64);
            // An odd width leaves the last lane of the even columns alone.
            let (width, height) = ([64, 63][k % 2], 12);
            let tables = if k % 3 == 2 {
                random_tables(&mut rng, mode)
            } else {
                ProbabilityTables::reference(mode).clone()
            };
            let c = Case {
                data: random_block(&mut rng, width, height, density, 9),
                stride: width,
                width,
                height,
                tables,
                group: k % GROUPS,
            };
            let s = encode_case(&c);
            let (full, d) = decode_case(&c, &s, DecodeLimits::ALL);
            assert!(d.complete && full == c.data, "density {density} {mode:?}");
            for m in 0..s.words.len() {
                decode_case(&c, &s, DecodeLimits::codewords(m));
            }
        }
    }
}

/// Blocks of one magnitude with random signs: every lane of a step turns
/// significant at once, the first steps with no significant neighbour
/// (a dense sign phase all in context 0), the later ones with many.
#[test]
fn whole_steps_turning_significant_agree_at_every_cut() {
    for (k, magnitude) in [1, 6, 255].into_iter().enumerate() {
        for mode in [Mode::TwoPass, Mode::ThreePass] {
            let mut rng = ChaCha8Rng::seed_from_u64(100 + k as u64);
            let (width, height) = (64, 6);
            let data = (0..width * height)
                .map(|_| {
                    if rng.random_bool(0.5) {
                        -magnitude
                    } else {
                        magnitude
                    }
                })
                .collect();
            let c = Case {
                data,
                stride: width,
                width,
                height,
                tables: ProbabilityTables::reference(mode).clone(),
                group: k,
            };
            let s = encode_case(&c);
            let (full, d) = decode_case(&c, &s, DecodeLimits::ALL);
            assert!(
                d.complete && full == c.data,
                "magnitude {magnitude} {mode:?}"
            );
            for m in 0..s.words.len() {
                decode_case(&c, &s, DecodeLimits::codewords(m));
            }
        }
    }
}
