//! Probability tables: the built-in presets (`presets`), fitting
//! them to an image (`table_fit`), and training tables on a set
//! of images. Tables fitted to an image or a training set
//! (`TableChoice::Trained`, `wavelane train-lut`) are embedded in the file
//! (3-6 KB of header).
//!
//! Training runs the encoder's front end, so this module sits on top of the
//! pipeline ([`super::encode`]); nothing inside the pipeline imports it.

use wavelane_core::bpc::{Mode, ProbabilityTables};

use super::encode::codeblock_batch;
use super::error::{CodecError, OptionsError};
use super::header::write_tables;
use super::image::Image;
use super::options::EncodeOptions;
use crate::bpc::train::Trainer;

pub use super::presets::{
    default_preset, preset, preset_name, row_offset, MAX_ROW_OFFSET, PRESET_NATURAL_LOSSLESS,
    PRESET_NATURAL_LOSSY, PRESET_REFERENCE,
};
pub use super::table_fit::{fitted, lossless_fit_sample};

/// Tables trained on `images` coded with `options` (the codec's transform,
/// quantization and codeblocks; the rate target only picks the lossless or
/// lossy path).
pub fn train(images: &[Image], options: &EncodeOptions) -> Result<ProbabilityTables, CodecError> {
    let mode =
        Mode::from_passes(options.passes).ok_or(OptionsError::TrainingPasses(options.passes))?;
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
    codeblock_batch(image, options)
}

/// The bytes of `tables` in the preset (and embedded-table) layout.
pub fn to_bytes(tables: &ProbabilityTables) -> Vec<u8> {
    let mut out = Vec::new();
    write_tables(tables, &mut out);
    out
}
