//! The sequential encoder: symbols in canonical order (bitplane, pass,
//! step, phase, lane), one lane at a time. This is the reference model the
//! lane-parallel form and the shaders must equal, and the firmware path.

use super::observe::{SymbolClass, SymbolObserver};
use super::planes::{lane_magnitudes, BitPlanes, FromCoefficients, LaneBits};
use super::prepare;
use crate::bpc::coder::LaneEncoders;
use crate::bpc::context::{sign_symbol, CountPlanes, Neighbours, SignNeighbours};
use crate::bpc::lut::PlaneTables;
use crate::bpc::record::{refinement_decrease, significance_decrease};
use crate::bpc::state::lanes;
use crate::bpc::{
    Codeblock, CodingParams, EncodeError, Encoded, Mode, PassKind, PassRecord, PassSchedule,
    Scratch, LANES,
};

/// Phases with at most this many coding lanes are coded lane by lane;
/// denser ones all 32 lanes at once ([`LaneEncoders::code_phase`]), which
/// costs the same whatever the number of lanes.
const SPARSE_LANES: u32 = 2;

/// Phases with at least this many coding lanes look their probabilities up
/// for all 32 lanes at once ([`CountPlanes::probabilities`]), sparser ones
/// lane by lane (always branch-free measured the same: docs/history/codec.md,
/// lossless speed round 3).
const DENSE_LANES: u32 = 8;

/// Encodes one codeblock in canonical order into `out` (codeword `k` at
/// `out[k]`), writing one [`PassRecord`] per pass to `records` if given.
///
/// Errors: [`EncodeError::OutputTooSmall`] if `out` cannot hold the stream
/// ([`max_codewords`](crate::bpc::max_codewords) always can),
/// [`EncodeError::RecordsTooSmall`] if `records` is shorter than the pass
/// count ([`MAX_PASSES`](crate::bpc::MAX_PASSES) always suffices),
/// [`EncodeError::CoefficientTooLarge`], [`EncodeError::BadGroup`],
/// [`EncodeError::HeightExceedsScratch`].
#[inline(always)]
pub fn encode_sequential<const ROWS: usize>(
    block: &Codeblock<'_>,
    params: &CodingParams<'_>,
    scratch: &mut Scratch<ROWS>,
    out: &mut [u16],
    records: Option<&mut [PassRecord]>,
) -> Result<Encoded, EncodeError> {
    encode_sequential_observed(block, params, scratch, out, records, &mut ())
}

/// [`encode_sequential`] reporting every coded symbol to `observer`.
#[inline(always)]
pub fn encode_sequential_observed<const ROWS: usize, O: SymbolObserver>(
    block: &Codeblock<'_>,
    params: &CodingParams<'_>,
    scratch: &mut Scratch<ROWS>,
    out: &mut [u16],
    records: Option<&mut [PassRecord]>,
    observer: &mut O,
) -> Result<Encoded, EncodeError> {
    walk::<true, ROWS, O, _>(
        block,
        params,
        scratch,
        &mut FromCoefficients,
        out,
        records,
        observer,
    )
}

/// [`encode_sequential_observed`] reading the magnitudes' bits from
/// `planes`, which it fills first ([`BitPlanes`]): the same stream,
/// records and observed symbols, for the memory of the planes. Errors as
/// [`encode_sequential`]; `planes` bounds the height like `scratch`.
#[inline(always)]
pub fn encode_sequential_planes<const ROWS: usize, O: SymbolObserver>(
    block: &Codeblock<'_>,
    params: &CodingParams<'_>,
    scratch: &mut Scratch<ROWS>,
    planes: &mut BitPlanes<ROWS>,
    out: &mut [u16],
    records: Option<&mut [PassRecord]>,
    observer: &mut O,
) -> Result<Encoded, EncodeError> {
    walk::<true, ROWS, O, _>(block, params, scratch, planes, out, records, observer)
}

/// Reports every symbol [`encode_sequential_observed`] would code, in the
/// same order and with the same classes, bitplanes and contexts, without
/// coding them. The symbols and their contexts depend only on the
/// coefficients, never on the arithmetic coder, so counting them (what
/// table training and the codec's table fit do) needs no coder, no output
/// and no distortion records, and costs about half as much. The result's
/// `codewords` is 0.
#[inline(always)]
pub fn observe_symbols<const ROWS: usize, O: SymbolObserver>(
    block: &Codeblock<'_>,
    params: &CodingParams<'_>,
    scratch: &mut Scratch<ROWS>,
    observer: &mut O,
) -> Result<Encoded, EncodeError> {
    walk::<false, ROWS, O, _>(
        block,
        params,
        scratch,
        &mut FromCoefficients,
        &mut [],
        None,
        observer,
    )
}

/// [`observe_symbols`] reading the magnitudes' bits from `planes`, which
/// it fills first ([`BitPlanes`]).
#[inline(always)]
pub fn observe_symbols_planes<const ROWS: usize, O: SymbolObserver>(
    block: &Codeblock<'_>,
    params: &CodingParams<'_>,
    scratch: &mut Scratch<ROWS>,
    planes: &mut BitPlanes<ROWS>,
    observer: &mut O,
) -> Result<Encoded, EncodeError> {
    walk::<false, ROWS, O, _>(block, params, scratch, planes, &mut [], None, observer)
}

/// The passes of the sequential encoder; `CODE` false only observes.
#[inline(always)]
fn walk<const CODE: bool, const ROWS: usize, O: SymbolObserver, B: LaneBits>(
    block: &Codeblock<'_>,
    params: &CodingParams<'_>,
    scratch: &mut Scratch<ROWS>,
    bits: &mut B,
    out: &mut [u16],
    mut records: Option<&mut [PassRecord]>,
    observer: &mut O,
) -> Result<Encoded, EncodeError> {
    let prepared = prepare(block, params, scratch, records.as_deref())?;
    let Some(top) = prepared.top else {
        return Ok(Encoded {
            top_bitplane: None,
            codewords: 0,
            passes: 0,
        });
    };
    bits.start(block, top);
    let mut enc = Sequential::<O, B, ROWS, CODE> {
        block,
        scratch,
        bits,
        coders: LaneEncoders::new(),
        out,
        observer,
        present: prepared.present,
        three_pass: params.mode() == Mode::ThreePass,
    };
    let schedule = PassSchedule::new(params.mode(), Some(top));
    let passes = schedule.len();
    for (i, (kind, j)) in schedule.enumerate() {
        let plane = params.tables.plane(params.group, j);
        let decrease = match kind {
            PassKind::Significance => enc.significance_pass(j, &plane)?,
            PassKind::Refinement => enc.refinement_pass(j, &plane)?,
            PassKind::Cleanup => enc.cleanup_pass(j, &plane)?,
        };
        if let Some(r) = records.as_deref_mut() {
            r[i] = PassRecord {
                kind,
                bitplane: j,
                codewords: enc.coders.next,
                distortion_decrease: decrease,
            };
        }
    }
    if CODE {
        enc.coders.flush(enc.out);
    }
    Ok(Encoded {
        top_bitplane: Some(top),
        codewords: enc.coders.next as usize,
        passes,
    })
}

/// `CODE`: code the symbols (the encoder) or only report them (the
/// observer walk); a constant, so the observer walk compiles without the
/// coder.
struct Sequential<'a, 'b, O, B, const ROWS: usize, const CODE: bool> {
    block: &'a Codeblock<'b>,
    scratch: &'a mut Scratch<ROWS>,
    bits: &'a B,
    coders: LaneEncoders,
    out: &'a mut [u16],
    observer: &'a mut O,
    present: [u32; 2],
    three_pass: bool,
}

impl<O: SymbolObserver, B: LaneBits, const ROWS: usize, const CODE: bool>
    Sequential<'_, '_, O, B, ROWS, CODE>
{
    /// Codes `symbol` on lane `t` with probability `p` (nothing when only
    /// observing).
    #[inline]
    fn code(&mut self, t: usize, symbol: bool, p: u8) -> Result<(), EncodeError> {
        if CODE {
            if O::TRACE && self.coders.needs_slot(t) {
                self.observer.slot(self.coders.next);
            }
            self.coders.encode(t, symbol, p, self.out)
        } else {
            Ok(())
        }
    }

    /// Distortion decrease of the lanes in `newly`, which became significant
    /// at bitplane `j` (`mags`: the step's lane magnitudes); summed after
    /// the step's symbols so that coding them needs no branch on the
    /// (unpredictable) bit.
    #[inline(always)]
    fn significance_decreases(mags: &[u32; LANES], newly: u32, j: u8) -> i128 {
        lanes(newly)
            .map(|t| significance_decrease(mags[t], j) as i128)
            .sum()
    }

    /// Distortion decrease of refining the lanes in `refining` at bitplane
    /// `j`, over all 32 lanes without a branch (vectorizes). Each term is
    /// below `2^56` (magnitudes are below `2^28`), so 32 of them fit an
    /// `i64`.
    #[inline(always)]
    fn refinement_decreases(mags: &[u32; LANES], refining: u32, j: u8) -> i128 {
        let mut sum = 0i64;
        for (t, &m) in mags.iter().enumerate() {
            let d = refinement_decrease(m, j);
            sum += if refining >> t & 1 != 0 { d } else { 0 };
        }
        sum as i128
    }

    /// Phase A of a step: codes the significance of the lanes in
    /// `candidates` (`ones`: the lanes whose magnitude has the bitplane's
    /// bit) with the probabilities `table` gives their contexts; returns
    /// the lanes that became significant.
    #[inline(always)]
    fn significance_phase(
        &mut self,
        ones: u32,
        candidates: u32,
        around: &CountPlanes,
        table: &[u8; 9],
    ) -> Result<u32, EncodeError> {
        let newly = ones & candidates;
        if !CODE {
            return Ok(newly);
        }
        // A tracing observer learns each slot opening from `code`, lane by
        // lane (same bytes as the 32-lane form).
        if O::TRACE || candidates.count_ones() <= SPARSE_LANES {
            for t in lanes(candidates) {
                self.code(t, newly >> t & 1 != 0, table[around.get(t) as usize])?;
            }
        } else {
            let probs = if candidates.count_ones() >= DENSE_LANES {
                around.probabilities(table)
            } else {
                let mut probs = [0u8; LANES];
                for t in lanes(candidates) {
                    probs[t] = table[around.get(t) as usize];
                }
                probs
            };
            self.coders
                .code_phase(candidates, newly, &probs, self.out)?;
        }
        Ok(newly)
    }

    /// Phase B of a step: the signs of the lanes in `newly`, in lane order.
    #[inline(always)]
    fn signs(
        &mut self,
        y: usize,
        x: usize,
        newly: u32,
        j: u8,
        table: &[u8; 4],
        class: SymbolClass,
    ) -> Result<(), EncodeError> {
        let h = self.block.height();
        let s = &self.scratch;
        let around = SignNeighbours::of(&s.sig[..h], &s.negative[..h], h, y, x);
        let negative = s.negative[y][x];
        let (by_context, predicted_negative) = around.context_masks();
        self.observer.phase(
            class,
            j,
            &by_context.map(|m| m & newly),
            negative ^ predicted_negative,
        );
        if CODE {
            if O::TRACE {
                // Lane by lane, so that the observer learns each slot
                // opening and each decrease in canonical order.
                let mags = lane_magnitudes(self.block.row(y), x);
                for t in lanes(newly) {
                    let (k, predicted) = around.context(t);
                    let symbol = sign_symbol(negative >> t & 1 != 0, predicted);
                    self.code(t, symbol, table[k as usize])?;
                    if O::DISTORTION {
                        self.observer.decrease(significance_decrease(mags[t], j));
                    }
                }
            } else if newly.count_ones() <= SPARSE_LANES {
                for t in lanes(newly) {
                    let (k, predicted) = around.context(t);
                    let symbol = sign_symbol(negative >> t & 1 != 0, predicted);
                    self.code(t, symbol, table[k as usize])?;
                }
            } else {
                let probs = SignNeighbours::probabilities(&by_context, table);
                let symbols = (negative ^ predicted_negative) & newly;
                self.coders.code_phase(newly, symbols, &probs, self.out)?;
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn significance_pass(&mut self, j: u8, plane: &PlaneTables) -> Result<i128, EncodeError> {
        let h = self.block.height();
        let mut decrease = 0i128;
        for y in 0..h {
            for x in 0..2 {
                let candidates = self.present[x] & !self.scratch.sig[y][x];
                if candidates == 0 {
                    continue;
                }
                // Every lane's context at once: the significance map does not
                // change within the phase (lanes of a step are not neighbours).
                let around = Neighbours::of(&self.scratch.sig[..h], h, y, x).count_planes();
                let candidates = if self.three_pass {
                    // 3-pass: lanes without a significant neighbour are left
                    // to the cleanup pass.
                    let isolated = candidates & around.zero();
                    self.scratch.pending[y][x] |= isolated;
                    candidates & !isolated
                } else {
                    candidates
                };
                if candidates == 0 {
                    continue;
                }
                let ones = self.bits.mask(self.block, y, x, j);
                let newly = self.significance_phase(ones, candidates, &around, &plane.sig)?;
                self.observer.phase(
                    SymbolClass::Significance,
                    j,
                    &around.by_count().map(|m| m & candidates),
                    newly,
                );
                if newly != 0 {
                    if CODE && O::DISTORTION {
                        let mags = lane_magnitudes(self.block.row(y), x);
                        decrease += Self::significance_decreases(&mags, newly, j);
                    }
                    self.scratch.sig[y][x] |= newly;
                    self.signs(y, x, newly, j, &plane.sign, SymbolClass::Sign)?;
                }
            }
        }
        Ok(decrease)
    }

    #[inline(always)]
    fn refinement_pass(&mut self, j: u8, plane: &PlaneTables) -> Result<i128, EncodeError> {
        let mut decrease = 0i128;
        for y in 0..self.block.height() {
            for x in 0..2 {
                let refining = self.scratch.refine[y][x];
                if refining != 0 {
                    let ones = self.bits.mask(self.block, y, x, j) & refining;
                    if CODE {
                        // The magnitudes only where decreases are wanted.
                        let mags = || lane_magnitudes(self.block.row(y), x);
                        if O::TRACE {
                            let mags = mags();
                            // Lane by lane: each slot opening and each
                            // decrease in canonical order.
                            for t in lanes(refining) {
                                self.code(t, ones >> t & 1 != 0, plane.refine)?;
                                if O::DISTORTION {
                                    self.observer.decrease(refinement_decrease(mags[t], j));
                                }
                            }
                        } else if refining.count_ones() <= SPARSE_LANES {
                            for t in lanes(refining) {
                                self.code(t, ones >> t & 1 != 0, plane.refine)?;
                            }
                        } else {
                            let probs = [plane.refine; LANES];
                            self.coders.code_phase(refining, ones, &probs, self.out)?;
                        }
                        if O::DISTORTION {
                            decrease += Self::refinement_decreases(&mags(), refining, j);
                        }
                    }
                    self.observer
                        .phase(SymbolClass::Refinement, j, &[refining], ones);
                }
                // Significant but not yet refining: refine from the next bitplane on.
                self.scratch.refine[y][x] |= self.scratch.sig[y][x];
            }
        }
        Ok(decrease)
    }

    #[inline(always)]
    fn cleanup_pass(&mut self, j: u8, plane: &PlaneTables) -> Result<i128, EncodeError> {
        let h = self.block.height();
        let mut decrease = 0i128;
        for y in 0..h {
            for x in 0..2 {
                let candidates = self.scratch.pending[y][x];
                if candidates == 0 {
                    continue;
                }
                self.scratch.pending[y][x] = 0;
                let around = Neighbours::of(&self.scratch.sig[..h], h, y, x).count_planes();
                let ones = self.bits.mask(self.block, y, x, j);
                let newly = self.significance_phase(ones, candidates, &around, &plane.cp_sig)?;
                self.observer.phase(
                    SymbolClass::CleanupSignificance,
                    j,
                    &around.by_count().map(|m| m & candidates),
                    newly,
                );
                if newly != 0 {
                    if CODE && O::DISTORTION {
                        let mags = lane_magnitudes(self.block.row(y), x);
                        decrease += Self::significance_decreases(&mags, newly, j);
                    }
                    self.scratch.sig[y][x] |= newly;
                    self.scratch.refine[y][x] |= newly;
                    self.signs(y, x, newly, j, &plane.cp_sign, SymbolClass::CleanupSign)?;
                }
            }
        }
        Ok(decrease)
    }
}
