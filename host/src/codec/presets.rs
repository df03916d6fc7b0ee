//! The built-in probability-table presets and the row offset that moves
//! them to an image's scale.
//!
//! BPC-PaCo codes with stationary probabilities per subband group,
//! bitplane and context, so tables that fit the data matter. Built-in
//! presets: id 0, the reference implementation's tables (trained by its
//! authors on 9/7-quantized images), and ids 3 and 4, tables trained with
//! the codec's own lossless and lossy front ends on a corpus of
//! public-domain images (`scripts/train-natural-tables.py`; the default
//! since format version 2). Rows are indexed by absolute bitplane, and the
//! presets are fitted to 8-bit samples at the default steps. The header's
//! table row offset moves a preset's rows to the scale of the indices
//! actually coded ([`row_offset`]).

use wavelane_core::bpc::{Mode, ProbabilityTables};
use wavelane_core::dwt::Wavelet;

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
}
