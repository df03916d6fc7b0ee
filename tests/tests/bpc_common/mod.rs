//! Inputs shared by the BPC-PaCo tests: the reference sample (stored
//! gzipped in tests/data/bpc, a byte-exact copy of the published sample)
//! and random codeblock batches.

#![allow(dead_code)] // each test file uses its own part of this module

use std::io::Read;
use std::sync::OnceLock;

use rand::Rng;
use wavelane::bpc::{BlockDesc, CodeblockBatch, RefFile};
use wavelane_core::bpc::{Codeblock, GroupTables, Mode, ProbabilityTables, GROUPS};
use wavelane_tests::TestRng;

/// Path of the gzipped `BPCREF01` sample.
pub const SAMPLE_GZ: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/data/bpc/sample-codeblocks.bin.gz"
);

/// The raw bytes of the sample file.
pub fn sample_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| {
        let file = std::fs::File::open(SAMPLE_GZ).unwrap_or_else(|e| panic!("{SAMPLE_GZ}: {e}"));
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(file)
            .read_to_end(&mut bytes)
            .expect("gunzip the sample");
        bytes
    })
}

/// The parsed sample file.
pub fn sample_file() -> RefFile {
    RefFile::parse(sample_bytes()).expect("the sample parses")
}

/// All 1024 codeblocks of the sample.
pub fn sample() -> CodeblockBatch {
    CodeblockBatch::from_ref(&sample_file())
}

/// `n` codeblocks spread over the sample (every subband level included:
/// the file starts with the LL band and the coarse levels).
pub fn sample_subset(n: usize) -> CodeblockBatch {
    let mut file = sample_file();
    let total = file.blocks.len();
    let keep: Vec<usize> = (0..n)
        .map(|i| if i < 8 { i } else { i * total / n })
        .collect();
    file.blocks = keep.into_iter().map(|i| file.blocks[i].clone()).collect();
    CodeblockBatch::from_ref(&file)
}

/// Sum of squares of a codeblock.
pub fn energy(block: &Codeblock<'_>) -> u128 {
    (0..block.height())
        .flat_map(|y| block.row(y).iter())
        .map(|&v| (v as i64 * v as i64) as u128)
        .sum()
}

/// Tables for a random mode: the reference preset or random values (a
/// third of the random ones with zero probabilities).
pub fn random_tables(rng: &mut TestRng) -> ProbabilityTables {
    let mode = if rng.random_bool(0.5) {
        Mode::TwoPass
    } else {
        Mode::ThreePass
    };
    if rng.random_bool(0.4) {
        return ProbabilityTables::reference(mode).clone();
    }
    let low = if rng.random_bool(0.33) { 0 } else { 1 };
    let mut groups = [const { GroupTables::UNIFORM }; GROUPS];
    for g in groups.iter_mut() {
        for p in g.sig.iter_mut().chain(g.cp_sig.iter_mut()).flatten() {
            *p = rng.random_range(low..=127);
        }
        for p in g.sign.iter_mut().chain(g.cp_sign.iter_mut()).flatten() {
            *p = rng.random_range(low..=127);
        }
        for p in g.refine.iter_mut() {
            *p = rng.random_range(low..=127);
        }
    }
    ProbabilityTables::new(mode, groups).unwrap()
}

/// `count` random codeblocks (widths 1..=64, heights 1..=`max_height`,
/// some empty, magnitudes up to 2^27 - 1, strides with garbage padding that
/// the coders must ignore) in one coefficient array, and random tables.
pub fn random_batch(
    rng: &mut TestRng,
    count: usize,
    max_height: usize,
) -> (CodeblockBatch, ProbabilityTables) {
    let mut batch = CodeblockBatch::default();
    for _ in 0..count {
        let width = if rng.random_bool(0.3) {
            64
        } else {
            rng.random_range(1..=64)
        };
        let height = rng.random_range(1..=max_height);
        let stride = width + rng.random_range(0..4);
        let density = [0.0, 0.02, 0.3, 1.0][rng.random_range(0..4)];
        let bits = [1u32, 4, 10, 27][rng.random_range(0..4)];
        let offset = batch.coefficients.len() + rng.random_range(0..3);
        batch.coefficients.resize(offset, 77);
        for y in 0..height {
            for x in 0..stride {
                let v = if x >= width {
                    -12345 // padding: never coded
                } else if rng.random_bool(density) {
                    let top = rng.random_range(1..=bits);
                    let mag = rng.random_range(1..(1i32 << top));
                    if rng.random_bool(0.5) {
                        -mag
                    } else {
                        mag
                    }
                } else {
                    0
                };
                if y + 1 < height || x < width {
                    batch.coefficients.push(v);
                }
            }
        }
        batch.blocks.push(BlockDesc {
            offset,
            stride,
            width,
            height,
            group: rng.random_range(0..GROUPS),
        });
    }
    (batch, random_tables(rng))
}
