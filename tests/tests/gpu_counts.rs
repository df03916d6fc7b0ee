//! The table fit's symbol counts on the device (`bpc::gpu::counts`, the
//! counting build of the encoder, `shaders/bpc/counts.glsl`): cell for
//! cell the counts of the host's `Trainer` (the sequential encoder's
//! `SymbolObserver`), on random and real codeblocks, in 2- and 3-pass
//! mode, for `All`, `None` and `Through` selections at several passes;
//! a coefficient too large to code is the same typed error.
//!
//! GPU tests (names contain `gpu`) run on lavapipe here; scripts/test.sh
//! reruns them at subgroup sizes 4 and 16.

mod bpc_common;

use bpc_common::{random_batch, sample_subset};
use rand::Rng;
use wavelane::bpc::train::{BlockSymbols, Trainer};
use wavelane::bpc::{gpu, BpcError, CodeblockBatch};
use wavelane_core::bpc::{EncodeError, Mode, PassKind, PassSchedule, MAX_BITPLANE};
use wavelane_tests::{for_random_cases, gpu as test_gpu, TestRng};

const MODES: [Mode; 2] = [Mode::TwoPass, Mode::ThreePass];

/// The device's counts of `which` equal the host trainer's; returns how
/// many symbols were counted.
fn assert_counts_equal(
    batch: &CodeblockBatch,
    mode: Mode,
    which: &[BlockSymbols],
    what: &str,
) -> u64 {
    let g = test_gpu();
    let host = Trainer::of_batch_selected(mode, batch, which).unwrap();
    let device = gpu::count_selected(&g, batch, mode, which).unwrap();
    assert!(device.mode() == mode, "{what}: mode");
    if device != host {
        // Name the first cell that differs.
        use wavelane_core::bpc::{SymbolClass as C, GROUPS, TABLE_BITPLANES};
        let classes = [
            C::Significance,
            C::Sign,
            C::Refinement,
            C::CleanupSignificance,
            C::CleanupSign,
        ];
        for g in 0..GROUPS {
            for class in classes {
                for j in 0..TABLE_BITPLANES {
                    for k in 0..9 {
                        let (d, h) = (device.counts(g, class, j, k), host.counts(g, class, j, k));
                        assert_eq!(
                            d, h,
                            "{what}: group {g} {class:?} bitplane {j} context {k} (zeros, total)"
                        );
                    }
                }
            }
        }
        panic!("{what}: the trainers differ");
    }
    host.symbols()
}

/// The top bitplane of codeblock `i` of `batch` (`None` when all zero).
fn top(batch: &CodeblockBatch, i: usize) -> Option<u8> {
    let block = batch.block(i).unwrap();
    let or = (0..block.height())
        .flat_map(|y| block.row(y).iter())
        .fold(0u32, |a, &v| a | v.unsigned_abs());
    (or != 0).then(|| (31 - or.leading_zeros()) as u8)
}

/// A random selection for a block with top bitplane `top`: none, all, or
/// through a random pass of its schedule, or through a pass it does not
/// have (above its top, or a cleanup in 2-pass mode).
fn random_selection(rng: &mut TestRng, mode: Mode, top: Option<u8>) -> BlockSymbols {
    match rng.random_range(0..8) {
        0 => BlockSymbols::None,
        1 => BlockSymbols::All,
        2 => BlockSymbols::Through {
            kind: [
                PassKind::Significance,
                PassKind::Refinement,
                PassKind::Cleanup,
            ][rng.random_range(0..3)],
            bitplane: rng.random_range(0..=MAX_BITPLANE),
        },
        _ => {
            let passes: Vec<(PassKind, u8)> = PassSchedule::new(mode, top).collect();
            if passes.is_empty() {
                return BlockSymbols::All;
            }
            let (kind, bitplane) = passes[rng.random_range(0..passes.len())];
            BlockSymbols::Through { kind, bitplane }
        }
    }
}

#[test]
fn gpu_symbol_counts_equal_the_trainers_on_random_blocks() {
    for_random_cases("GPU symbol counts, random blocks", 3, |rng| {
        for mode in MODES {
            // Short and tall blocks, magnitudes up to 2^27 (bitplanes past
            // the tables' 15 are walked but not counted).
            for max_height in [64, 256] {
                let (batch, _) = random_batch(rng, 20, max_height);
                let which: Vec<BlockSymbols> = (0..batch.len())
                    .map(|i| random_selection(rng, mode, top(&batch, i)))
                    .collect();
                let what = format!("{mode:?}, rows up to {max_height}, {which:?}");
                assert_counts_equal(&batch, mode, &which, &what);
                let all = vec![BlockSymbols::All; batch.len()];
                let n = assert_counts_equal(&batch, mode, &all, &format!("{mode:?} all"));
                assert!(n > 0, "{mode:?}: no symbol counted");
            }
        }
    });
}

#[test]
fn gpu_symbol_counts_equal_the_trainers_on_real_codeblocks() {
    let batch = sample_subset(48);
    for mode in MODES {
        let tops: Vec<Option<u8>> = (0..batch.len()).map(|i| top(&batch, i)).collect();
        let all = vec![BlockSymbols::All; batch.len()];
        let total = assert_counts_equal(&batch, mode, &all, &format!("sample, {mode:?}, all"));
        assert!(total > 0);
        let none = vec![BlockSymbols::None; batch.len()];
        assert_eq!(assert_counts_equal(&batch, mode, &none, "none"), 0);
        // Every block through its pass k (its last where it has fewer),
        // as the lossy fit selects; and one block in 3 (the sampled fit).
        let mut before = 0;
        for k in [0, 1, 2, 5, 11, 40] {
            let which: Vec<BlockSymbols> = tops
                .iter()
                .map(|&t| match PassSchedule::new(mode, t).collect::<Vec<_>>() {
                    p if p.is_empty() => BlockSymbols::None,
                    p => {
                        let (kind, bitplane) = p[k.min(p.len() - 1)];
                        BlockSymbols::Through { kind, bitplane }
                    }
                })
                .collect();
            let n = assert_counts_equal(
                &batch,
                mode,
                &which,
                &format!("sample, {mode:?}, through pass {k}"),
            );
            assert!(n >= before && n <= total, "pass {k}: {n} symbols");
            before = n;
        }
        let sampled: Vec<BlockSymbols> = (0..batch.len())
            .map(|i| {
                if i % 3 == 0 {
                    BlockSymbols::All
                } else {
                    BlockSymbols::None
                }
            })
            .collect();
        let n = assert_counts_equal(
            &batch,
            mode,
            &sampled,
            &format!("sample, {mode:?}, one in 3"),
        );
        assert!(n > 0 && n < total);
    }
}

/// A coefficient the coder cannot code is the CPU's typed error, naming
/// the same block; a selection list of the wrong length is refused.
#[test]
fn gpu_symbol_counts_refuse_what_the_trainer_refuses() {
    let g = test_gpu();
    let mut batch = sample_subset(6);
    let at = batch.blocks[4].offset + 3;
    batch.coefficients[at] = 1 << 28;
    let all = vec![BlockSymbols::All; batch.len()];
    let err = gpu::count_selected(&g, &batch, Mode::ThreePass, &all).unwrap_err();
    assert!(
        matches!(
            err,
            BpcError::Encode {
                block: 4,
                source: EncodeError::CoefficientTooLarge
            }
        ),
        "{err:?}"
    );
    assert!(Trainer::of_batch_selected(Mode::ThreePass, &batch, &all).is_err());
    // Not selected, the block is not read.
    let mut which = all.clone();
    which[4] = BlockSymbols::None;
    assert_counts_equal(&batch, Mode::ThreePass, &which, "the large block left out");
    assert!(gpu::count_selected(&g, &batch, Mode::TwoPass, &all[1..]).is_err());
}
