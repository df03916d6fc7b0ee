//! The decoders: [`sequential`] in canonical order (spec sections 6-8),
//! [`lanes`] with all 32 lanes in lock-step as the shaders, [`phases`] with
//! every phase of a step decoded for all lanes in vectorizable loops (the
//! host's CPU decoder). They share the input checks, the one pass loop
//! ([`decode_passes`] over a [`PassDecoder`]) and the reconstruction rules
//! below, so they differ only in how a pass runs.
//!
//! Decoding stops for the whole codeblock at the first symbol whose lane
//! needs a codeword beyond the ones available.
//!
//! Reconstruction: a coefficient found significant at bitplane `j` gets
//! magnitude `2^j + 2^(j-1)` and its decoded sign; refinement at `j` sets
//! bit `j` and puts the half step below it. A coefficient whose sign symbol
//! lies beyond the truncation point stays 0: its significance was decoded,
//! but a value without a sign would be a guess.

pub(super) mod lanes;
mod phase_coders;
pub(super) mod phases;
pub(super) mod sequential;

use super::lut::PlaneTables;
use super::record::half_step;
use super::{
    pass_count, CodingParams, DecodeError, DecodeLimits, Decoded, Mode, PassKind, PassSchedule,
    GROUPS, MAX_BITPLANE,
};

/// Checks the decoder inputs for an output of `height` rows; returns the
/// number of codewords available. The caller clears the output after it
/// (the sequential and lane forms before decoding; the phase form writes
/// every coefficient at the end anyway).
pub(crate) fn prepare_decode<const ROWS: usize>(
    params: &CodingParams<'_>,
    top: Option<u8>,
    codewords: &[u16],
    limits: DecodeLimits,
    height: usize,
) -> Result<usize, DecodeError> {
    if params.group >= GROUPS {
        return Err(DecodeError::BadGroup);
    }
    if height > ROWS {
        return Err(DecodeError::HeightExceedsScratch);
    }
    if let Some(m) = top.filter(|&m| m > MAX_BITPLANE) {
        return Err(DecodeError::BadTopBitplane(m));
    }
    Ok(codewords.len().min(limits.max_codewords))
}

/// A decoder form as the pass loop sees it: the sequential, the lane and
/// the phase forms differ in how they run a pass, not in which passes run
/// or when they stop.
pub(crate) trait PassDecoder {
    /// Decodes a significance pass (a cleanup pass with `cleanup`); false
    /// when the codewords ran out inside it.
    fn significance_pass(&mut self, j: u8, plane: &PlaneTables, cleanup: bool) -> bool;
    /// Decodes a refinement pass; false when the codewords ran out inside it.
    fn refinement_pass(&mut self, j: u8, plane: &PlaneTables) -> bool;
}

/// Runs the passes of a block with top bitplane `m` in schedule order,
/// up to `limits.max_passes` or until the codewords run out; returns the
/// passes completed. The one pass loop of every decoder form.
///
/// Inlined, like the forms' pass methods, so that the whole decode lands
/// in the copy the host's `fastest!` compiles per CPU level: out of line
/// it is compiled once, for the baseline, and the phase decoder's vector
/// loops with it (docs/perf/codec.md, "The CPU decoder's sparse phases").
#[inline(always)]
pub(crate) fn decode_passes(
    dec: &mut impl PassDecoder,
    params: &CodingParams<'_>,
    m: u8,
    limits: DecodeLimits,
) -> usize {
    let mut completed = 0;
    for (kind, j) in PassSchedule::new(params.mode(), Some(m)) {
        if completed >= limits.max_passes {
            break;
        }
        let plane = params.tables.plane(params.group, j);
        let done = match kind {
            PassKind::Significance => dec.significance_pass(j, &plane, false),
            PassKind::Refinement => dec.refinement_pass(j, &plane),
            PassKind::Cleanup => dec.significance_pass(j, &plane, true),
        };
        if !done {
            break;
        }
        completed += 1;
    }
    completed
}

/// The result once the passes ran: checks that a complete decode used every
/// codeword it was given.
pub(crate) fn finish(
    mode: Mode,
    top: Option<u8>,
    completed: usize,
    used: usize,
    available: usize,
) -> Result<Decoded, DecodeError> {
    let complete = completed == pass_count(mode, top);
    if complete && used < available {
        return Err(DecodeError::TrailingCodewords {
            used,
            given: available,
        });
    }
    Ok(Decoded {
        codewords_used: used,
        passes_completed: completed,
        complete,
    })
}

/// Signed value of magnitude `mag`.
#[inline]
pub(crate) fn signed(mag: u32, negative: bool) -> i32 {
    if negative {
        -(mag as i32)
    } else {
        mag as i32
    }
}

/// The value after refining `value` with bit `bit` at bitplane `j`.
#[inline]
pub(crate) fn refined(value: i32, bit: bool, j: u8) -> i32 {
    let mag = value.unsigned_abs();
    let mag = ((mag >> (j + 1)) << (j + 1)) | ((bit as u32) << j) | half_step(j);
    signed(mag, value < 0)
}
