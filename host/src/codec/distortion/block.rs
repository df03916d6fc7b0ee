//! What rate control reads of a block's real-valued decreases (made from
//! integer sums in `sums`, or in `f64` for the float 9/7).

/// One block's real-valued decreases per bitplane (in squared steps of
/// the block's effective step `Δ · 2^shift`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct BlockDistortion {
    /// Significance decrease of bitplane `j` at index `j`.
    pub significance: Vec<f64>,
    /// Refinement decrease of bitplane `j` at index `j`.
    pub refinement: Vec<f64>,
    /// `Σ (|c| / Δ)²`: the error with nothing decoded.
    pub energy: f64,
}
