//! What the sequential encoder tells an observer about every symbol it
//! codes: the table behind each probability and the distortion a pass
//! removes (the host's statistics and rate-distortion records).

use crate::bpc::state::lanes;

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
/// encoder codes ([`encode_sequential_observed`](crate::bpc::encode_sequential_observed); not [`observe_symbols`](crate::bpc::observe_symbols)),
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
