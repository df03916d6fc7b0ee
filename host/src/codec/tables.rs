//! Probability-table presets of the codec and training tables on images.
//!
//! BPC-PaCo codes with stationary probabilities per subband group,
//! bitplane and context, so tables that fit the data matter (a file may
//! embed its own, at 3-6 KB). Besides the reference implementation's
//! tables (preset 0, trained by its authors on 9/7-quantized images), the
//! codec ships tables trained with [`train`] on a small public-domain
//! training set through the codec's own pipeline (provenance in
//! `presets/README.md`): one set for the lossless path (5/3 + RCT) and one
//! for the lossy path (fixed-point 9/7 + ICT), in both pass modes.

use std::sync::OnceLock;

use wavelane_core::bpc::{Mode, ProbabilityTables};

use super::header::{read_tables, Cursor};
use super::{CodecError, EncodeOptions, Image};

/// Preset id of the reference implementation's tables.
pub const PRESET_REFERENCE: u8 = 0;
/// Preset id of the tables trained for the lossless path.
pub const PRESET_LOSSLESS: u8 = 1;
/// Preset id of the tables trained for the lossy path.
pub const PRESET_LOSSY: u8 = 2;

const LOSSLESS_2: &[u8] = include_bytes!("presets/lossless-2pass.bin");
const LOSSLESS_3: &[u8] = include_bytes!("presets/lossless-3pass.bin");
const LOSSY_2: &[u8] = include_bytes!("presets/lossy-2pass.bin");
const LOSSY_3: &[u8] = include_bytes!("presets/lossy-3pass.bin");

fn parse(bytes: &'static [u8], mode: Mode) -> ProbabilityTables {
    let mut r = Cursor::new(bytes, "preset tables");
    read_tables(&mut r, mode).expect("the built-in presets are valid tables")
}

/// The tables of preset `id` for `mode`, or `None` for an unknown id.
pub fn preset(id: u8, mode: Mode) -> Option<&'static ProbabilityTables> {
    static CELLS: [OnceLock<ProbabilityTables>; 4] = [const { OnceLock::new() }; 4];
    let (k, bytes) = match (id, mode) {
        (PRESET_REFERENCE, m) => return Some(ProbabilityTables::reference(m)),
        (PRESET_LOSSLESS, Mode::TwoPass) => (0, LOSSLESS_2),
        (PRESET_LOSSLESS, Mode::ThreePass) => (1, LOSSLESS_3),
        (PRESET_LOSSY, Mode::TwoPass) => (2, LOSSY_2),
        (PRESET_LOSSY, Mode::ThreePass) => (3, LOSSY_3),
        _ => return None,
    };
    Some(CELLS[k].get_or_init(|| parse(bytes, mode)))
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
