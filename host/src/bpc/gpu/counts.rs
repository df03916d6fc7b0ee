//! The table fit's symbol statistics gathered on the device: the counting
//! build of the encoder (`bpc_count`, `shaders/bpc/counts.glsl`) walks the
//! selected passes of every codeblock with the encoder's context modelling
//! and adds each symbol to its `(group, class, bitplane, context)` cell,
//! the counts [`Trainer`] makes on the host through the sequential
//! encoder's `SymbolObserver`. Only the cells come down (26,888 bytes in
//! 2-pass mode, 51,848 in 3-pass), never a coefficient.
//!
//! One submission: `bpc_measure` (each block's top bitplane, and the
//! refusal of a coefficient too large to code), `bpc_order` (heaviest
//! blocks first) and `bpc_count`. The blocks that count nothing
//! ([`BlockSymbols::None`]) are left out of it on the host, so that a
//! sampled fit reads only the sampled blocks' coefficients.

use wavelane_core::bpc::{
    EncodeError, Mode, PassKind, ProbabilityTables, SymbolClass, GROUPS, TABLE_BITPLANES,
};

use super::encode::Measured;
use super::{check_range, groups_for, three_pass, Source};
use crate::backend::gpu::{Dispatch, Gpu};
use crate::bpc::train::{BlockSymbols, Trainer};
use crate::bpc::{BpcError, CodeblockBatch};
use crate::shaders;

/// Entries of a bitplane's table row in the shaders (`flatten_tables`).
const ROW: usize = 27;
/// The entries a 2-pass codeblock codes with (sig, sign, ref: the first).
const TWO_PASS_ENTRIES: usize = 14;
/// Cells per table entry: one per group and bitplane.
const PER_ENTRY: usize = GROUPS * TABLE_BITPLANES;
/// Cells: one per table entry, group and bitplane; each two 64-bit
/// counts (zeros, total) in a low and a high word.
const CELLS: usize = ROW * PER_ENTRY;
/// The first low word in the cells buffer (after the two refusal words;
/// layout in `shaders/bpc/counts.glsl`).
const LOW: usize = 2;

/// Counts, of every codeblock `i` of `batch`, the symbols `which[i]`
/// selects, on `gpu`: the same [`Trainer`] as
/// [`Trainer::add_batch_selected`] on a new trainer for `mode`.
///
/// Errors: as [`Trainer::add_batch_selected`]; [`BpcError::Gpu`] with
/// [`crate::backend::GpuError::Limit`] where the coefficients exceed the device's binding
/// limit (the caller may count on the host instead).
pub fn count_selected(
    gpu: &Gpu,
    batch: &CodeblockBatch,
    mode: Mode,
    which: &[BlockSymbols],
) -> Result<Trainer, BpcError> {
    count_on_device(gpu, Source::Host(batch), mode, which)
}

/// [`count_selected`] of the codeblocks of `source`, which may already be
/// on the device (the codec's index planes: then nothing plane-sized
/// crosses the bus).
pub(crate) fn count_on_device(
    gpu: &Gpu,
    source: Source<'_>,
    mode: Mode,
    which: &[BlockSymbols],
) -> Result<Trainer, BpcError> {
    count_from(gpu, source, mode, which, None)
}

/// [`count_on_device`] onto counts that start at `start` (the cells
/// buffer's words, layout in `shaders/bpc/counts.glsl`; zero where
/// `None`), downloading the high words whenever it is given: the test of
/// the carries into them, which counting from zero reaches only past 2^32
/// coefficients.
fn count_from(
    gpu: &Gpu,
    source: Source<'_>,
    mode: Mode,
    which: &[BlockSymbols],
    start: Option<&[u32]>,
) -> Result<Trainer, BpcError> {
    let all = source.descriptors()?;
    if which.len() != source.len() {
        return Err(BpcError::Mismatch(format!(
            "{} symbol selections for {} codeblocks",
            which.len(),
            source.len()
        )));
    }
    let picked: Vec<usize> = (0..which.len())
        .filter(|&i| which[i] != BlockSymbols::None)
        .collect();
    if picked.is_empty() {
        return Ok(Trainer::new(mode));
    }
    let mut desc = Vec::with_capacity(4 * picked.len());
    let mut selection = Vec::with_capacity(picked.len());
    for &i in &picked {
        desc.extend_from_slice(&all[4 * i..4 * i + 4]);
        selection.push(selection_word(which[i]));
    }
    let n = picked.len();
    check_range(gpu, "the coefficients", source.coefficients_len() * 4)?;
    let coefficients = &source.coefficients_on(gpu)?;
    // bpc_measure's minimum probability only sizes codeword capacities,
    // which nothing here uses.
    let tables = ProbabilityTables::uniform(mode);
    let blocks = gpu.upload(&desc)?;
    let selection = gpu.upload(&selection)?;
    let measured = Measured::new(gpu, n)?;
    let cells = match start {
        Some(words) if words.len() == LOW + 4 * CELLS => gpu.upload(words)?,
        Some(words) => {
            return Err(BpcError::Mismatch(format!(
                "{} words of starting counts",
                words.len()
            )))
        }
        None => gpu.zeroed::<u32>((LOW + 4 * CELLS) as u64)?,
    };
    let [measure, order] = measured.dispatches(coefficients, &blocks, tables.min_probability());
    let run = [
        measure,
        order,
        Dispatch::new(&shaders::BPC_COUNT, [groups_for(n), 1, 1])
            .buffer(coefficients)
            .buffer(&blocks)
            .buffer(&measured.tops)
            .buffer(&measured.status)
            .buffer(&measured.order)
            .buffer(&selection)
            .buffer(&cells)
            .push(&[n as u32, three_pass(&tables)]),
    ];
    gpu.run(&run)?;
    // The low words of the mode's table entries (a prefix: the 2-pass
    // entries come first), and the high words only where a cell can
    // reach 2^32: it counts at most one symbol per coefficient of the
    // selected blocks.
    let entries = match mode {
        Mode::TwoPass => TWO_PASS_ENTRIES,
        Mode::ThreePass => ROW,
    };
    let low = gpu.download(
        &cells
            .clone()
            .slice(0..(LOW + 2 * entries * PER_ENTRY) as u64),
    )?;
    let counted: u64 = picked
        .iter()
        .map(|&i| (source.blocks()[i].width * source.blocks()[i].height) as u64)
        .sum();
    let high = if counted >> 32 != 0 || start.is_some() {
        Some(gpu.download(&cells.slice((LOW + 2 * CELLS) as u64..(LOW + 4 * CELLS) as u64))?)
    } else {
        None
    };
    let refused = |w: u32| (w != 0).then(|| picked.get(!w as usize).copied().unwrap_or(usize::MAX));
    if let Some(block) = refused(low[0]) {
        return Err(BpcError::Encode {
            block,
            source: EncodeError::CoefficientTooLarge,
        });
    }
    if let Some(block) = refused(low[1]) {
        return Err(BpcError::Mismatch(format!(
            "GPU symbol counts: the descriptor of codeblock {block} was refused"
        )));
    }
    let word = |k: usize| {
        let lo = low.get(LOW + k).copied().unwrap_or(0) as u64;
        let hi = high.as_ref().map_or(0, |h| h[k]) as u64;
        lo | hi << 32
    };
    Ok(Trainer::from_cells(
        mode,
        |group, class, bitplane, context| {
            entry(class, context).map_or((0, 0), |at| {
                let c = (at * GROUPS + group) * TABLE_BITPLANES + bitplane;
                (word(2 * c), word(2 * c + 1))
            })
        },
    ))
}

/// The shader's word for a selection (`shaders/bpc/counts.glsl`).
fn selection_word(which: BlockSymbols) -> u32 {
    match which {
        BlockSymbols::None => 0,
        BlockSymbols::All => 1,
        BlockSymbols::Through { kind, bitplane } => {
            let order = match kind {
                PassKind::Significance => 0,
                PassKind::Refinement => 1,
                PassKind::Cleanup => 2,
            };
            2 | (bitplane as u32) << 8 | order << 16
        }
    }
}

/// The entry of a bitplane's table row (`flatten_tables`: sig[9],
/// sign[4], ref, cp_sig[9], cp_sign[4]) that codes symbols of `class` in
/// `context`, where the class has that context.
fn entry(class: SymbolClass, context: usize) -> Option<usize> {
    let (first, contexts) = match class {
        SymbolClass::Significance => (0, 9),
        SymbolClass::Sign => (9, 4),
        SymbolClass::Refinement => (13, 1),
        SymbolClass::CleanupSignificance => (14, 9),
        SymbolClass::CleanupSign => (23, 4),
    };
    (context < contexts).then_some(first + context)
}

#[cfg(test)]
mod tests {
    use super::super::flatten_tables;
    use super::*;

    /// The entries are those `flatten_tables` writes each class's
    /// probabilities to, every entry of a row exactly once.
    #[test]
    fn entries_are_the_flattened_tables_positions() {
        let classes = [
            SymbolClass::Significance,
            SymbolClass::Sign,
            SymbolClass::Refinement,
            SymbolClass::CleanupSignificance,
            SymbolClass::CleanupSign,
        ];
        // Tables whose every probability names its own class and context.
        let mut g = wavelane_core::bpc::GroupTables::UNIFORM;
        for k in 0..9 {
            g.sig[0][k] = 10 + k as u8;
            g.cp_sig[0][k] = 40 + k as u8;
        }
        for k in 0..4 {
            g.sign[0][k] = 20 + k as u8;
            g.cp_sign[0][k] = 50 + k as u8;
        }
        g.refine[0] = 30;
        let tables = ProbabilityTables::new(Mode::ThreePass, core::array::from_fn(|_| g.clone()))
            .expect("valid tables");
        let row = &flatten_tables(&tables)[..ROW];
        let base = [10, 20, 30, 40, 50];
        let mut seen = [false; ROW];
        for (c, class) in classes.into_iter().enumerate() {
            for context in 0..9 {
                if let Some(at) = entry(class, context) {
                    assert_eq!(row[at], base[c] + context as u32, "{class:?} {context}");
                    assert!(!seen[at]);
                    seen[at] = true;
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    /// The counts are 64-bit: a low word that wraps carries into its high
    /// word. Counting from 2^32 - 5 in every cell, the result is the host's
    /// counts plus that start, in every cell (past 2^32 in those with
    /// 5 symbols or more).
    #[test]
    fn gpu_counts_carry_into_the_high_words() {
        use crate::bpc::{BlockDesc, CodeblockBatch};
        use wavelane_core::bpc::LL_GROUP;
        let gpu = crate::backend::Gpu::shared().expect("a Vulkan device (lavapipe)");
        // A 64x40 block of mixed magnitudes in the LL group and a 17x9 one in group 2.
        let mut batch = CodeblockBatch::default();
        for (w, h, group) in [(64, 40, LL_GROUP), (17, 9, 2)] {
            let offset = batch.coefficients.len();
            batch.coefficients.extend(
                (0..w * h).map(|i: usize| [0, 7, -300, 1, 0, -2, 45][i % 7] * (i as i32 % 5)),
            );
            batch.blocks.push(BlockDesc {
                offset,
                stride: w,
                width: w,
                height: h,
                group,
            });
        }
        let start_at = u32::MAX - 4;
        let mut start = vec![0u32; LOW + 4 * CELLS];
        start[LOW..LOW + 2 * CELLS].fill(start_at);
        for mode in [Mode::TwoPass, Mode::ThreePass] {
            let which = [BlockSymbols::All, BlockSymbols::All];
            let host = Trainer::of_batch_selected(mode, &batch, &which).unwrap();
            let got = count_from(&gpu, Source::Host(&batch), mode, &which, Some(&start)).unwrap();
            let mut carried = 0;
            for group in 0..GROUPS {
                for class in [
                    SymbolClass::Significance,
                    SymbolClass::Sign,
                    SymbolClass::Refinement,
                    SymbolClass::CleanupSignificance,
                    SymbolClass::CleanupSign,
                ] {
                    for j in 0..TABLE_BITPLANES {
                        for k in 0..9 {
                            let Some(at) = entry(class, k) else { continue };
                            if mode == Mode::TwoPass && at >= TWO_PASS_ENTRIES {
                                continue; // not downloaded: no 2-pass symbol counts there
                            }
                            let (zeros, total) = host.counts(group, class, j, k);
                            let want = (zeros + start_at as u64, total + start_at as u64);
                            assert_eq!(
                                got.counts(group, class, j, k),
                                want,
                                "{mode:?} group {group} {class:?} bitplane {j} context {k}"
                            );
                            carried += (total >= 5) as usize;
                        }
                    }
                }
            }
            assert!(carried > 10, "{mode:?}: {carried} cells carried");
        }
    }
}
