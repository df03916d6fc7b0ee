//! The plane-map encoder against the sequential and lane forms: the same
//! `Encoded` and codewords on the random codeblocks of `tests_prop.rs`, on
//! every height up to 256 with every table group, and on empty and full
//! codeblocks; the hand-worked cases of `tests_hand.rs` check it too.

use std::vec::Vec;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::tests_prop::{case, random_block, random_tables};
use super::*;

/// `tables` with 2 passes per bitplane (the same probabilities).
fn two_pass(tables: &ProbabilityTables) -> ProbabilityTables {
    ProbabilityTables::new(Mode::TwoPass, tables.groups().clone()).unwrap()
}

/// Encodes `block` with the sequential form, the lane form at `subgroup`
/// lanes and the plane-map form (with `maps` as left by earlier
/// codeblocks), checks they agree, and returns the stream.
fn encode_three_forms(
    block: &Codeblock<'_>,
    params: &CodingParams<'_>,
    maps: &mut PlaneMaps<256>,
    subgroup: u32,
) -> (Encoded, Vec<u16>) {
    let mut scratch = Scratch::<256>::new();
    let capacity = max_codewords_any(block.width(), block.height());
    let mut want = std::vec![0u16; capacity];
    let enc = encode_sequential(block, params, &mut scratch, &mut want, None).unwrap();
    want.truncate(enc.codewords);
    let mut lanes = std::vec![0u16; capacity];
    let by_lanes = encode_lanes(block, params, &mut scratch, &mut lanes, None, subgroup).unwrap();
    assert_eq!((by_lanes, &lanes[..enc.codewords]), (enc, &want[..]));
    let mut words = std::vec![0u16; capacity];
    let by_maps = encode_plane_maps(block, params, maps, &mut words).unwrap();
    assert_eq!(by_maps, enc, "plane maps: result");
    assert_eq!(&words[..enc.codewords], &want[..], "plane maps: codewords");
    (enc, want)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Random codeblocks (3-pass cases are refused, then coded with their
    /// tables' 2-pass form); the maps are left stale by another codeblock
    /// first. One codeword short is the sequential form's error.
    #[test]
    fn plane_maps_encoder_equals_the_others(seed in any::<u64>(), other in any::<u64>()) {
        let mut maps = std::boxed::Box::new(PlaneMaps::<256>::new());
        let o = case(other, 24);
        let other_block = Codeblock::new(&o.data, o.stride, o.width, o.height).unwrap();
        let other_tables = two_pass(&o.tables);
        let mut other_words = std::vec![0u16; max_codewords_any(o.width, o.height)];
        encode_plane_maps(&other_block, &CodingParams::new(&other_tables, o.group), &mut maps, &mut other_words).unwrap();

        let c = case(seed, 24);
        let block = Codeblock::new(&c.data, c.stride, c.width, c.height).unwrap();
        if c.tables.mode() == Mode::ThreePass {
            let params = CodingParams::new(&c.tables, c.group);
            let mut words = std::vec![0u16; max_codewords_any(c.width, c.height)];
            prop_assert_eq!(encode_plane_maps(&block, &params, &mut maps, &mut words), Err(EncodeError::NeedsTwoPasses));
        }
        let tables = two_pass(&c.tables);
        let params = CodingParams::new(&tables, c.group);
        let (_, want) = encode_three_forms(&block, &params, &mut maps, 1 << (seed % 6));
        if let Some(short) = want.len().checked_sub(1) {
            let mut scratch = Scratch::<256>::new();
            let mut words = std::vec![0u16; short];
            let e1 = encode_sequential(&block, &params, &mut scratch, &mut words, None);
            prop_assert_eq!(e1, Err(EncodeError::OutputTooSmall { capacity: short }));
            prop_assert_eq!(encode_plane_maps(&block, &params, &mut maps, &mut words), e1);
        }
    }
}

/// Every height from 1 to 256, each table group in turn, widths up to 64
/// (every 8th one full width), densities from empty to full.
#[test]
fn every_height_and_group() {
    let mut maps = std::boxed::Box::new(PlaneMaps::<256>::new());
    for height in 1..=256usize {
        let mut rng = ChaCha8Rng::seed_from_u64(height as u64);
        let width = if height % 8 == 0 {
            64
        } else {
            rng.random_range(1..=64)
        };
        let stride = width + rng.random_range(0..3);
        let density = [0.0, 0.05, 0.3, 1.0][height % 4];
        let bits = [1, 4, 9, 16][(height / 4) % 4];
        let mut data = random_block(&mut rng, stride, height, density, bits);
        data.truncate((height - 1) * stride + width);
        let tables = if height % 3 == 0 {
            random_tables(&mut rng, Mode::TwoPass)
        } else {
            ProbabilityTables::reference(Mode::TwoPass).clone()
        };
        let block = Codeblock::new(&data, stride, width, height).unwrap();
        let params = CodingParams::new(&tables, height % GROUPS);
        let (enc, _) = encode_three_forms(&block, &params, &mut maps, 1 << (height % 6));
        assert_eq!(
            enc.top_bitplane.is_none(),
            density == 0.0,
            "height {height}"
        );
    }
}

/// The largest codeblock with every coefficient nonzero, up to 27 bits,
/// then the same all zero (empty: no codewords, no passes).
#[test]
fn full_and_empty_codeblocks() {
    let mut maps = std::boxed::Box::new(PlaneMaps::<256>::new());
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut data = random_block(&mut rng, 64, 256, 1.0, 27);
    data[100] = -((1 << 27) + 5);
    let block = Codeblock::new(&data, 64, 64, 256).unwrap();
    let tables = ProbabilityTables::reference(Mode::TwoPass);
    for group in [0, LL_GROUP] {
        let params = CodingParams::new(tables, group);
        let (enc, _) = encode_three_forms(&block, &params, &mut maps, 8);
        assert_eq!((enc.top_bitplane, enc.passes), (Some(27), 56));
    }
    let zeros = [0i32; 64 * 256];
    let block = Codeblock::new(&zeros, 64, 64, 256).unwrap();
    let params = CodingParams::new(tables, 3);
    let (enc, words) = encode_three_forms(&block, &params, &mut maps, 32);
    assert_eq!((enc.top_bitplane, enc.passes, words.len()), (None, 0, 0));
}

#[test]
fn plane_maps_errors_are_the_sequential_forms() {
    let two = ProbabilityTables::uniform(Mode::TwoPass);
    let three = ProbabilityTables::uniform(Mode::ThreePass);
    let mut maps = PlaneMaps::<4>::new();
    let mut out = [0u16; 64];
    let data = [3i32; 4];
    let block = Codeblock::new(&data, 2, 2, 2).unwrap();
    let params = CodingParams::new(&three, 0);
    assert_eq!(
        encode_plane_maps(&block, &params, &mut maps, &mut out),
        Err(EncodeError::NeedsTwoPasses)
    );
    let mut scratch = Scratch::<4>::new();
    let tall = [1i32; 5];
    let big = [-(1 << 28)];
    let cases = [
        (Codeblock::new(&data, 2, 2, 2).unwrap(), 16),
        (Codeblock::new(&tall, 1, 1, 5).unwrap(), 0),
        (Codeblock::new(&big, 1, 1, 1).unwrap(), 0),
    ];
    for (block, group) in cases {
        let params = CodingParams::new(&two, group);
        let want = encode_sequential(&block, &params, &mut scratch, &mut out, None);
        assert!(want.is_err());
        assert_eq!(
            encode_plane_maps(&block, &params, &mut maps, &mut out),
            want
        );
    }
}
