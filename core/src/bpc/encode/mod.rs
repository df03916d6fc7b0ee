//! The encoders: [`sequential`] codes symbols in canonical order (bitplane,
//! pass, step, phase, lane), the reference model and the firmware path;
//! [`lanes`] codes all 32 lanes in lock-step as the shaders do. Both start
//! from [`prepare`] and give the same codewords and records.
//! [`plane_maps`] is the 2-pass plane-map form of
//! `shaders/bpc/encode_planes.glsl`: the same codewords, from maps rebuilt
//! per bitplane instead of a [`Scratch`], and no records.

pub(super) mod lanes;
pub(super) mod observe;
pub(super) mod plane_maps;
pub(super) mod planes;
pub(super) mod sequential;

use super::state::present_mask;
use super::{
    most_significant_bitplane, pass_count, Codeblock, CodingParams, EncodeError, Mode, PassRecord,
    Scratch, GROUPS,
};

/// What both encoders set up before the passes.
pub(super) struct Prepared {
    pub top: Option<u8>,
    pub present: [u32; 2],
}

/// Validates the inputs, computes `M` and initialises `scratch` (the sign
/// map of every coefficient, and the CP flags in 3-pass mode).
#[inline(always)]
pub(super) fn prepare<const ROWS: usize>(
    block: &Codeblock<'_>,
    params: &CodingParams<'_>,
    scratch: &mut Scratch<ROWS>,
    records: Option<&[PassRecord]>,
) -> Result<Prepared, EncodeError> {
    if params.group >= GROUPS {
        return Err(EncodeError::BadGroup);
    }
    if block.height() > ROWS {
        return Err(EncodeError::HeightExceedsScratch);
    }
    let top = most_significant_bitplane(block)?;
    let needed = pass_count(params.mode(), top);
    if records.is_some_and(|r| r.len() < needed) {
        return Err(EncodeError::RecordsTooSmall { needed });
    }
    let present = present_mask(block.width());
    scratch.reset(block.height(), present, params.mode() == Mode::ThreePass);
    for y in 0..block.height() {
        for (c, v) in block.row(y).iter().enumerate() {
            scratch.negative[y][c % 2] |= ((*v < 0) as u32) << (c / 2);
        }
    }
    Ok(Prepared { top, present })
}
