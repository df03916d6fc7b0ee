//! Probability-table presets of the codec and training tables on images.
//!
//! BPC-PaCo codes with stationary probabilities per subband group,
//! bitplane and context, so tables that fit the data matter. Built-in
//! presets: id 0, the reference implementation's tables (trained by its
//! authors on 9/7-quantized images), and ids 3 and 4, tables trained with
//! the codec's own lossless and lossy front ends on a corpus of
//! public-domain images (`scripts/train-natural-tables.py`; the default
//! since format version 2). Tables fitted to an image or a training set
//! ([`train`], `TableChoice::Trained`, `wavelane train-lut`) are embedded in
//! the file (3-6 KB of header).
//!
//! Rows are indexed by absolute bitplane, and the presets are fitted to
//! 8-bit samples at the default steps. The header's table row offset moves
//! a preset's rows to the scale of the indices actually coded
//! ([`row_offset`]).

use wavelane_core::bpc::{Mode, ProbabilityTables, GROUPS};
use wavelane_core::dwt::Wavelet;

use super::header::Tables;
use super::{adapt, CodecError, EncodeOptions, Image};
use crate::bpc::train::Trainer;

/// Preset id of the reference implementation's tables.
pub const PRESET_REFERENCE: u8 = 0;
/// Preset id of the natural-image tables of the lossless path (5/3, step 1).
/// (Ids 1 and 2 were written by an unreleased build and stay unused.)
pub const PRESET_NATURAL_LOSSLESS: u8 = 3;
/// Preset id of the natural-image tables of the lossy (9/7) path.
pub const PRESET_NATURAL_LOSSY: u8 = 4;
/// Largest magnitude of a table row offset: beyond it every row is clamped
/// to the preset's first or last row anyway.
pub const MAX_ROW_OFFSET: i8 = 14;

/// The tables of preset `id` for `mode`, or `None` for an unknown id.
pub fn preset(id: u8, mode: Mode) -> Option<&'static ProbabilityTables> {
    match id {
        PRESET_REFERENCE => Some(ProbabilityTables::reference(mode)),
        PRESET_NATURAL_LOSSLESS => Some(ProbabilityTables::natural_lossless(mode)),
        PRESET_NATURAL_LOSSY => Some(ProbabilityTables::natural_lossy(mode)),
        _ => None,
    }
}

/// Short name of preset `id` (`wavelane info`).
pub fn preset_name(id: u8) -> &'static str {
    match id {
        PRESET_REFERENCE => "reference",
        PRESET_NATURAL_LOSSLESS => "natural-lossless",
        PRESET_NATURAL_LOSSY => "natural-lossy",
        _ => "unknown",
    }
}

/// The preset the encoder uses by default: the natural-image tables fitted
/// to the wavelet's path (the 5/3 codes integer coefficients at step 1,
/// even for a lossy target).
pub fn default_preset(wavelet: Wavelet) -> u8 {
    match wavelet {
        Wavelet::Cdf53 => PRESET_NATURAL_LOSSLESS,
        Wavelet::Cdf97 | Wavelet::Fixed97 => PRESET_NATURAL_LOSSY,
    }
}

/// The table row offset that puts a preset fitted to 8-bit samples at the
/// scale of this image's indices: the 5/3 at step 1 codes a `b`-bit image's
/// coefficients `2^(b-8)` times larger (offset `b - 8`); the 9/7 divides by
/// `base_step` where the presets saw `2^(b-8)`, so the offset is
/// `log2(2^(b-8) / base_step)`, rounded. Clamped to +-[`MAX_ROW_OFFSET`].
pub fn row_offset(bit_depth: u8, wavelet: Wavelet, base_step: f64) -> i8 {
    let depth = bit_depth as f64 - 8.0;
    let offset = match wavelet {
        Wavelet::Cdf53 => depth,
        Wavelet::Cdf97 | Wavelet::Fixed97 => (depth - base_step.log2()).round(),
    };
    let max = MAX_ROW_OFFSET as f64;
    if offset.is_nan() {
        0
    } else {
        offset.clamp(-max, max) as i8
    }
}

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
/// [`super::adapt::adjust`] if they save more than they cost.
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

/// Tables trained on `images` coded with `options` (the codec's transform,
/// quantization and codeblocks; the rate target only picks the lossless or
/// lossy path).
pub fn train(images: &[Image], options: &EncodeOptions) -> Result<ProbabilityTables, CodecError> {
    let mode = Mode::from_passes(options.passes)
        .ok_or(CodecError::Options("passes must be 2 or 3".into()))?;
    let mut trainer = Trainer::new(mode);
    for image in images {
        trainer.add_batch(&training_batch(image, options)?)?;
    }
    Ok(trainer.tables())
}

/// The codeblocks of an 8-bit `image` as `options` would code them, for
/// training. Other bit depths are refused: preset rows are indexed by
/// absolute bitplane for 8-bit samples, and a 12-bit image's statistics
/// would land four rows too high.
pub fn training_batch(
    image: &Image,
    options: &EncodeOptions,
) -> Result<crate::bpc::CodeblockBatch, CodecError> {
    if image.bit_depth != 8 {
        return Err(CodecError::Image(format!(
            "training needs 8-bit images, this one has {} bits",
            image.bit_depth
        )));
    }
    super::encode::codeblock_batch(image, options)
}

/// The bytes of `tables` in the preset (and embedded-table) layout.
pub fn to_bytes(tables: &ProbabilityTables) -> Vec<u8> {
    let mut out = Vec::new();
    super::header::write_tables(tables, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_exists_in_both_modes_and_unknown_ids_do_not() {
        for id in [
            PRESET_REFERENCE,
            PRESET_NATURAL_LOSSLESS,
            PRESET_NATURAL_LOSSY,
        ] {
            for mode in [Mode::TwoPass, Mode::ThreePass] {
                assert_eq!(preset(id, mode).map(|t| t.mode()), Some(mode));
            }
            assert_ne!(preset_name(id), "unknown");
        }
        for id in [1, 2, 5, 254, 255] {
            assert!(preset(id, Mode::TwoPass).is_none(), "id {id}");
        }
    }

    #[test]
    fn defaults_follow_the_wavelet() {
        assert_eq!(default_preset(Wavelet::Cdf53), PRESET_NATURAL_LOSSLESS);
        assert_eq!(default_preset(Wavelet::Fixed97), PRESET_NATURAL_LOSSY);
        assert_eq!(default_preset(Wavelet::Cdf97), PRESET_NATURAL_LOSSY);
    }

    #[test]
    fn row_offsets_follow_bit_depth_and_step() {
        // Lossless: the sample scale alone.
        assert_eq!(row_offset(8, Wavelet::Cdf53, 1.0), 0);
        assert_eq!(row_offset(12, Wavelet::Cdf53, 1.0), 4);
        assert_eq!(row_offset(16, Wavelet::Cdf53, 1.0), 8);
        assert_eq!(row_offset(1, Wavelet::Cdf53, 1.0), -7);
        // Lossy at the default step 2^(b-8): none, whatever the depth.
        for b in [1, 8, 12, 16] {
            assert_eq!(row_offset(b, Wavelet::Fixed97, (b as f64 - 8.0).exp2()), 0);
        }
        // A step half the default makes indices twice as large.
        assert_eq!(row_offset(8, Wavelet::Fixed97, 0.5), 1);
        assert_eq!(row_offset(8, Wavelet::Fixed97, 0.7), 1);
        assert_eq!(row_offset(8, Wavelet::Cdf97, 4.0), -2);
        // Extreme steps clamp.
        assert_eq!(row_offset(8, Wavelet::Fixed97, 1e-9), MAX_ROW_OFFSET);
        assert_eq!(row_offset(8, Wavelet::Fixed97, 1e9), -MAX_ROW_OFFSET);
    }

    #[test]
    fn fit_samples_shrink_with_the_image() {
        assert_eq!(lossless_fit_sample(45 * 29 * 3), 1);
        assert_eq!(lossless_fit_sample(256 * 256), 1);
        assert_eq!(lossless_fit_sample(384 * 384), 2);
        assert_eq!(lossless_fit_sample(384 * 384 * 3), 2);
        assert_eq!(lossless_fit_sample(1536 * 1536 * 3), 4);
    }
}
