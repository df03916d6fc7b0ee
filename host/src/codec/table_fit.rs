//! Fitting the probability tables to the image being coded
//! (docs/codec.md, "Probability tables").
//!
//! A preset's rows can move by one bitplane and single cells can change
//! (a change list in the header, [`adapt`]); both pay only where the bits
//! they save on this image's symbols exceed what they cost in the header.
//! Lossless files fit to the symbols of a sample of the codeblocks before
//! coding ([`fit_sampled`]); `--bpp` and `--psnr` files fit to the symbols
//! of the passes a first allocation keeps ([`truncation_fit`]), recode, and
//! keep the fit only where rate control predicts a better file
//! ([`improves`]): a fit on every symbol did not pay there
//! (docs/history/codec.md).

use wavelane_core::bpc::{PassRecord, GROUPS};

use super::adapt;
use super::error::CodecError;
use super::header::{Header, Tables};
use super::index::BlockIndex;
use super::options::RateTarget;
use super::points::RatePoints;
use super::rate::{allocate, Allocation, LayerTarget, SizeModel};
use super::stages::codeblocks::Formed;
use super::stages::entropy;
use super::weights::size_model;
use crate::bpc::train::{sampled, BlockSymbols, Trainer};
use crate::bpc::BlockDesc;

/// One codeblock in how many the default lossless encoder counts symbols
/// on to fit its preset, for an image of `samples` samples (width x height
/// x components): all up to 2^16 samples, where a fraction of the blocks is
/// too few to speak for the rest and the extra pass is short; one in 2 up
/// to 2^21; one in 4 above (docs/history/codec.md has the sizes and times: on
/// a 384x384 gray image one in 2 costs 0.12% of the file and halves the
/// counting, about 5% of the encode's wall time).
pub fn lossless_fit_sample(samples: usize) -> usize {
    match samples {
        0..=0x1_0000 => 1,
        0x1_0001..=0x20_0000 => 2,
        _ => 4,
    }
}

/// `current` (a preset chosen by the encoder) fitted to the symbols
/// `trainer` counted, which stand for `scale[g]` times as many coded ones
/// in group `g`: the row offset within one of the current one that codes
/// them in the fewest bits (unless `fixed_offset`), then the changes of
/// [`adapt::adjust`] if they save more than they cost.
pub fn fitted(
    current: &Tables,
    trainer: &Trainer,
    fixed_offset: Option<i8>,
    scale: &[f64; GROUPS],
) -> Tables {
    let (Some(id), mode) = (current.base_preset(), current.mode()) else {
        return current.clone();
    };
    let k = current.row_offset();
    let candidates = match fixed_offset {
        Some(_) => vec![k],
        None => vec![k, k.saturating_sub(1), k.saturating_add(1)],
    };
    let best = candidates
        .into_iter()
        .filter_map(|k| Tables::preset(id, mode, k))
        .map(|t| (adapt::coded_bits(t.probability_tables(), trainer, scale), t))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, t)| t)
        .unwrap_or_else(|| current.clone());
    let adjusted = adapt::adjust(best.probability_tables(), trainer, scale);
    if adjusted.saved_bits > 0.0 {
        Tables::Adjusted {
            base: id,
            row_offset: best.row_offset(),
            tables: Box::new(adjusted.tables),
        }
    } else {
        best
    }
}

/// `header`'s preset fitted to the symbols of one codeblock in `every` of
/// `formed` (the counts scaled up to the whole batch), unless
/// `fixed_offset` pins the row offset. Indices on the device stay there:
/// the symbols are counted there ([`Formed::count_symbols`]), and the
/// counts of each block add up to the same trainer in any order.
pub(crate) fn fit_sampled(
    header: &Header,
    formed: &mut Formed,
    every: usize,
    fixed_offset: Option<i8>,
) -> Result<Tables, CodecError> {
    let which: Vec<BlockSymbols> = (0..formed.descs().len())
        .map(|i| match sampled(i, every) {
            true => BlockSymbols::All,
            false => BlockSymbols::None,
        })
        .collect();
    let trainer = formed.count_symbols(header.mode(), &which)?;
    let scale = sample_scale(formed.descs(), every);
    Ok(fitted(&header.tables, &trainer, fixed_offset, &scale))
}

/// Per table group, the coefficients of all codeblocks over those of the
/// codeblocks a trainer counting one block in `every` saw (1 where it saw
/// none: there are no counts to scale).
fn sample_scale(blocks: &[BlockDesc], every: usize) -> [f64; GROUPS] {
    let mut all = [0u64; GROUPS];
    let mut counted = [0u64; GROUPS];
    for (i, b) in blocks.iter().enumerate() {
        let n = (b.width * b.height) as u64;
        all[b.group] += n;
        if sampled(i, every) {
            counted[b.group] += n;
        }
    }
    core::array::from_fn(|g| match counted[g] {
        0 => 1.0,
        c => all[g] as f64 / c as f64,
    })
}

/// The allocation of a single-layer file for `target` (lossy targets only;
/// for `--psnr`, the first of the encoder's rounds): where the lossy table
/// fit learns which passes each block will code.
pub(crate) fn first_allocation(
    header: &Header,
    coded: &entropy::Coded,
    points: &RatePoints,
    target: RateTarget,
) -> Result<Allocation, CodecError> {
    let pixels = header.width as usize * header.height as usize;
    let mut index = BlockIndex::new(coded.encoded.tops.len(), 1);
    index.tops.clone_from(&coded.encoded.tops);
    let model = SizeModel {
        layers: 1,
        ..size_model(header, &index)?
    };
    let peak = ((1u64 << header.bit_depth) - 1) as f64;
    let layer = match target {
        RateTarget::Bpp(bpp) => LayerTarget::Bytes((bpp * pixels as f64 / 8.0).floor() as u64),
        RateTarget::Psnr(p) => {
            let samples = pixels * header.components as usize;
            let wanted = peak * peak * samples as f64 / 10f64.powf(p / 10.0);
            LayerTarget::Distortion((wanted - points.noise).max(0.0))
        }
        RateTarget::Lossless | RateTarget::AllPasses => LayerTarget::All,
    };
    let total = points.total - points.noise;
    Ok(allocate(&points.hulls, &[layer], model, total))
}

/// Whether allocation `second` is better than `first` for `target`: less
/// distortion left for a byte target, fewer bytes for a distortion target.
pub(crate) fn improves(first: &Allocation, second: &Allocation, target: RateTarget) -> bool {
    let last = |a: &Allocation| {
        (
            a.remaining.last().copied().unwrap_or(0.0),
            a.bytes.last().copied().unwrap_or(0),
        )
    };
    let ((d1, b1), (d2, b2)) = (last(first), last(second));
    match target {
        RateTarget::Psnr(_) => b2 < b1,
        _ => d2 < d1,
    }
}

/// The preset fitted to the symbols `first` would code (each block's passes
/// through its last complete one), or `None` when the fit does not pay.
/// The symbols are counted where the indices are
/// ([`Formed::count_symbols`]).
pub(crate) fn truncation_fit(
    header: &Header,
    formed: &mut Formed,
    records: &[Vec<PassRecord>],
    first: &Allocation,
    fixed_offset: Option<i8>,
) -> Result<Option<Tables>, CodecError> {
    let which: Vec<BlockSymbols> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let kept = first.counts[i];
            match r.iter().take_while(|p| p.codewords <= kept).last() {
                Some(p) if kept > 0 => BlockSymbols::Through {
                    kind: p.kind,
                    bitplane: p.bitplane,
                },
                _ => BlockSymbols::None,
            }
        })
        .collect();
    let trainer = formed.count_symbols(header.mode(), &which)?;
    let fitted = fitted(&header.tables, &trainer, fixed_offset, &[1.0; GROUPS]);
    Ok((fitted != header.tables).then_some(fitted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_samples_shrink_with_the_image() {
        assert_eq!(lossless_fit_sample(45 * 29 * 3), 1);
        assert_eq!(lossless_fit_sample(256 * 256), 1);
        assert_eq!(lossless_fit_sample(384 * 384), 2);
        assert_eq!(lossless_fit_sample(384 * 384 * 3), 2);
        assert_eq!(lossless_fit_sample(1536 * 1536 * 3), 4);
    }
}
