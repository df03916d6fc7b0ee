//! Probability-table presets of the codec and training tables on images.
//!
//! BPC-PaCo codes with stationary probabilities per subband group,
//! bitplane and context, so tables that fit the data matter. The one
//! built-in preset (id 0) is the reference implementation's tables,
//! trained by its authors on 9/7-quantized images. Tables fitted to an
//! image or a training set ([`train`], `TableChoice::Trained`,
//! `wavelane train-lut`) are embedded in the file (3-6 KB of header).

use wavelane_core::bpc::{Mode, ProbabilityTables};

use super::{CodecError, EncodeOptions, Image};

/// Preset id of the reference implementation's tables.
pub const PRESET_REFERENCE: u8 = 0;

/// The tables of preset `id` for `mode`, or `None` for an unknown id.
pub fn preset(id: u8, mode: Mode) -> Option<&'static ProbabilityTables> {
    match id {
        PRESET_REFERENCE => Some(ProbabilityTables::reference(mode)),
        _ => None,
    }
}

/// Tables trained on `images` coded with `options` (the codec's transform,
/// quantization and codeblocks; the rate target only picks the lossless or
/// lossy path).
pub fn train(images: &[Image], options: &EncodeOptions) -> Result<ProbabilityTables, CodecError> {
    let mode = Mode::from_passes(options.passes)
        .ok_or(CodecError::Options("passes must be 2 or 3".into()))?;
    let mut trainer = crate::bpc::train::Trainer::new(mode);
    for image in images {
        let batch = super::encode::codeblock_batch(image, options)?;
        trainer.add_batch(&batch)?;
    }
    Ok(trainer.tables())
}

/// The bytes of `tables` in the preset (and embedded-table) layout.
pub fn to_bytes(tables: &ProbabilityTables) -> Vec<u8> {
    let mut out = Vec::new();
    super::header::write_tables(tables, &mut out);
    out
}
