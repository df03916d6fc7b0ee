//! The sequential encoder: symbols in canonical order (bitplane, pass,
//! step, phase, lane), one lane at a time. This is the reference model the
//! lane-parallel form and the shaders must equal, and the firmware path.

use super::coder::LaneEncoders;
use super::context::{sign_symbol, CountPlanes, Neighbours, SignNeighbours};
use super::lut::PlaneTables;
use super::record::{refinement_decrease, significance_decrease};
use super::state::present_mask;
use super::{
    most_significant_bitplane, pass_count, Codeblock, CodingParams, EncodeError, Encoded, Mode,
    PassKind, PassRecord, PassSchedule, Scratch, GROUPS, LANES,
};

/// Which table a coded symbol's probability came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum SymbolClass {
    /// Significance in the SPP (`sig` table, context 0..=8).
    Significance,
    /// Sign after SPP significance (`sign` table, context 0..=3).
    Sign,
    /// Refinement (`ref` table, context 0).
    Refinement,
    /// Significance in the CP (`cp_sig` table).
    CleanupSignificance,
    /// Sign after CP significance (`cp_sign` table).
    CleanupSign,
}

/// Sees every symbol the sequential encoder codes, in canonical order: what
/// the table trainer counts. `()` observes nothing.
///
/// An observer with [`SymbolObserver::TRACE`] also learns, while the
/// encoder codes ([`encode_sequential_observed`]; not [`observe_symbols`]),
/// where each codeword slot is opened and what each symbol removes from the
/// squared error: enough for rate control to know the distortion of the
/// stream cut after any number of codewords (spec section 8), not only at
/// pass ends.
pub trait SymbolObserver {
    /// Whether the encoder calls [`SymbolObserver::slot`] and
    /// [`SymbolObserver::decrease`] (a constant, so that other observers
    /// cost nothing for them).
    const TRACE: bool = false;

    /// Whether the encoder computes what each symbol removes from the
    /// squared error: the pass records' `distortion_decrease` and, for a
    /// tracing observer, [`SymbolObserver::decrease`]. Rate control that
    /// keeps every pass (a lossless single-layer file) needs only the pass
    /// ends; an observer that sets this false gets records whose
    /// `distortion_decrease` is 0 and no `decrease` calls, the same
    /// codewords, and an encoder that skips the decrease arithmetic (a
    /// constant, so that it costs nothing when true).
    const DISTORTION: bool = true;

    /// One symbol: its table, bitplane, context and value.
    fn symbol(&mut self, class: SymbolClass, bitplane: u8, context: u8, symbol: bool);

    /// The symbols of one phase of a step at once: lane `t` codes bit `t`
    /// of `ones` in context `k` when bit `t` of `by_context[k]` is set (the
    /// masks are disjoint; their union is the lanes that code). The default
    /// reports them to [`Self::symbol`] in lane order, which is the
    /// canonical order within a phase; an observer that only counts can
    /// override it with a popcount per context instead of an update per
    /// symbol.
    #[inline]
    fn phase(&mut self, class: SymbolClass, bitplane: u8, by_context: &[u32], ones: u32) {
        let coding = by_context.iter().fold(0, |all, m| all | m);
        for t in lanes(coding) {
            let context = by_context.iter().take_while(|m| *m >> t & 1 == 0).count();
            self.symbol(class, bitplane, context as u8, ones >> t & 1 != 0);
        }
    }

    /// The symbol about to be coded opens codeword slot `slot` (slots open
    /// in increasing order from 0): a decoder given `slot` codewords stops
    /// right before this symbol, with the decreases reported so far.
    #[inline]
    fn slot(&mut self, _slot: u32) {}

    /// The symbol just coded lowered the squared error of the spec's
    /// reconstruction by `decrease` (index units; negative when a
    /// refinement moves a coefficient off an exact reconstruction). A
    /// significance becomes a decrease with its sign symbol: until the sign
    /// is decoded the decoder keeps the coefficient at 0.
    #[inline]
    fn decrease(&mut self, _decrease: i64) {}
}

impl SymbolObserver for () {
    #[inline]
    fn symbol(&mut self, _: SymbolClass, _: u8, _: u8, _: bool) {}

    #[inline]
    fn phase(&mut self, _: SymbolClass, _: u8, _: &[u32], _: u32) {}
}

/// Observes nothing and spares the encoder the distortion decreases
/// ([`SymbolObserver::DISTORTION`] false): pass records with the pass ends
/// only (`distortion_decrease` 0), for rate control that keeps every pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WithoutDistortion;

impl SymbolObserver for WithoutDistortion {
    const DISTORTION: bool = false;

    #[inline]
    fn symbol(&mut self, _: SymbolClass, _: u8, _: u8, _: bool) {}

    #[inline]
    fn phase(&mut self, _: SymbolClass, _: u8, _: &[u32], _: u32) {}
}

/// Phases with at most this many coding lanes are coded lane by lane;
/// denser ones all 32 lanes at once ([`LaneEncoders::code_phase`]), which
/// costs the same whatever the number of lanes.
const SPARSE_LANES: u32 = 2;

/// Phases with at least this many coding lanes look their probabilities up
/// for all 32 lanes at once ([`CountPlanes::probabilities`]), sparser ones
/// lane by lane (always branch-free measured the same: docs/history/codec.md,
/// lossless speed round 3).
const DENSE_LANES: u32 = 8;

/// The magnitudes of the coefficients the lanes visit in step `(y, x)`,
/// `row` being row `y` (0 for lanes past the codeblock's width). A full
/// row is a fixed-size copy the compiler vectorizes.
#[inline(always)]
fn lane_magnitudes(row: &[i32], x: usize) -> [u32; LANES] {
    let mut mags = [0u32; LANES];
    if let Ok(full) = <&[i32; 2 * LANES]>::try_from(row) {
        for (t, m) in mags.iter_mut().enumerate() {
            *m = full[2 * t + (x & 1)].unsigned_abs();
        }
    } else {
        for (m, v) in mags.iter_mut().zip(row.iter().skip(x).step_by(2)) {
            *m = v.unsigned_abs();
        }
    }
    mags
}

/// Bit `t` set when bit `j` of `mags[t]` is set: a phase's symbols as one
/// mask. Branch-free over the 32 lanes; LLVM keeps it scalar (a shift, mask
/// and OR per lane: about 11% of the lossless encode when profiled,
/// docs/history/codec.md, lossless speed round 3), which is why the encoders that can afford the memory read
/// [`BitPlanes`] instead.
#[inline(always)]
fn bitplane_mask(mags: &[u32; LANES], j: u8) -> u32 {
    let mut mask = 0u32;
    for (t, m) in mags.iter().enumerate() {
        mask |= ((m >> j) & 1) << t;
    }
    mask
}

/// Iterates the set bits of `mask`, lowest (lane 0) first.
#[inline]
pub(super) fn lanes(mut mask: u32) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let t = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        Some(t)
    })
}

/// Transposes a 32x32 bit matrix in place: afterwards bit `t` of `m[j]` is
/// what bit `j` of `m[t]` was. Applied to a step's lane magnitudes it gives
/// [`bitplane_mask`] of every bitplane at once, in about 5 word operations
/// per bitplane (five rounds of block swaps, halving the block each round)
/// instead of a shift, mask and OR per lane and bitplane.
#[inline(always)]
fn transpose32(m: &mut [u32; LANES]) {
    // Round `s` swaps, in every pair of rows `(k, k + s)` with bit `s` of
    // `k` clear, the columns with bit `s` set in row `k` with the columns
    // with bit `s` clear in row `k + s`: the off-diagonal blocks of each
    // 2s x 2s block.
    let mut s = 16;
    let mut low: u32 = 0x0000_ffff;
    while s != 0 {
        for k in 0..LANES {
            if k & s == 0 {
                let swap = ((m[k] >> s) ^ m[k + s]) & low;
                m[k] ^= swap << s;
                m[k + s] ^= swap;
            }
        }
        s >>= 1;
        low ^= low << s;
    }
}

/// Where the walk reads a step's bits of one bitplane: bit `t` of
/// `mask(block, y, x, j)` is bit `j` of the magnitude lane `t` visits in
/// step `(y, x)`, i.e. [`bitplane_mask`] of [`lane_magnitudes`]. The walk
/// calls [`LaneBits::start`] once per codeblock, after finding its top
/// bitplane.
pub(super) trait LaneBits {
    /// Sets up for `block`, whose magnitudes are below `2^(top + 1)`.
    fn start(&mut self, block: &Codeblock<'_>, top: u8);

    /// The lanes of step `(y, x)` whose magnitude has bit `j` set.
    fn mask(&self, block: &Codeblock<'_>, y: usize, x: usize, j: u8) -> u32;
}

/// The reference [`LaneBits`]: each mask read from the coefficients when
/// asked (no memory beyond the step's 32 magnitudes).
pub(super) struct FromCoefficients;

impl LaneBits for FromCoefficients {
    #[inline(always)]
    fn start(&mut self, _: &Codeblock<'_>, _: u8) {}

    #[inline(always)]
    fn mask(&self, block: &Codeblock<'_>, y: usize, x: usize, j: u8) -> u32 {
        bitplane_mask(&lane_magnitudes(block.row(y), x), j)
    }
}

/// A codeblock of up to `ROWS` rows transposed into bit planes once (a
/// 32x32 bit transpose per step) for [`encode_sequential_planes`] and
/// [`observe_symbols_planes`], instead of a mask of the step's magnitudes
/// at every pass that visits the step (two or three per bitplane). `256 * ROWS` bytes (`BitPlanes<64>` = 16 KiB,
/// `BitPlanes<256>` = 64 KiB): the encoders that read the coefficients
/// need none of it, which is what the firmware uses.
#[derive(Debug, Clone)]
pub struct BitPlanes<const ROWS: usize = 64> {
    /// Bit `t` of `masks[j][y][x]`: bit `j` of the magnitude lane `t`
    /// visits in step `(y, x)`; bitplanes above the codeblock's top are
    /// stale.
    masks: [[[u32; 2]; ROWS]; 32],
}

impl<const ROWS: usize> BitPlanes<ROWS> {
    /// Empty planes.
    pub const fn new() -> Self {
        BitPlanes {
            masks: [[[0; 2]; ROWS]; 32],
        }
    }
}

impl<const ROWS: usize> Default for BitPlanes<ROWS> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const ROWS: usize> LaneBits for BitPlanes<ROWS> {
    /// The caller ([`prepare`]) checked `block.height() <= ROWS`.
    #[inline(always)]
    fn start(&mut self, block: &Codeblock<'_>, top: u8) {
        let planes = &mut self.masks[..=top as usize];
        for y in 0..block.height() {
            let row = block.row(y);
            for x in 0..2 {
                let mut bits = lane_magnitudes(row, x);
                transpose32(&mut bits);
                for (plane, &mask) in planes.iter_mut().zip(&bits) {
                    plane[y][x] = mask;
                }
            }
        }
    }

    #[inline(always)]
    fn mask(&self, _: &Codeblock<'_>, y: usize, x: usize, j: u8) -> u32 {
        self.masks[j as usize][y][x]
    }
}

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

/// Encodes one codeblock in canonical order into `out` (codeword `k` at
/// `out[k]`), writing one [`PassRecord`] per pass to `records` if given.
///
/// Errors: [`EncodeError::OutputTooSmall`] if `out` cannot hold the stream
/// ([`max_codewords`](super::max_codewords) always can),
/// [`EncodeError::RecordsTooSmall`] if `records` is shorter than the pass
/// count ([`MAX_PASSES`](super::MAX_PASSES) always suffices),
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

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The transpose gives every bitplane's mask of the lane magnitudes.
        #[test]
        fn transpose_gives_every_bitplane_mask(mags in proptest::prelude::any::<[u32; LANES]>()) {
            let mut planes = mags;
            transpose32(&mut planes);
            for j in 0..32u8 {
                proptest::prop_assert_eq!(planes[j as usize], bitplane_mask(&mags, j), "bitplane {}", j);
            }
        }
    }
}
