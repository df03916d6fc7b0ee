//! The CPU backend: work spread over all cores with rayon.
//!
//! It holds no state of its own beyond rayon's global pool; algorithms call
//! core functions per work item (codeblock, row block, chunk) inside
//! `rayon` iterators. This module adds the helpers those drivers share.

/// Number of worker threads rayon will use.
pub fn threads() -> usize {
    rayon::current_num_threads()
}

/// Exclusive prefix sum of `values` in place on the CPU, returning the total
/// (wrapping, like the GPU). Sequential: at the sizes we scan (per-item output
/// lengths) it is memory-bound and faster than a parallel pass.
pub fn exclusive_scan(values: &mut [u32]) -> u32 {
    wavelane_core::scan::exclusive_scan(values)
}
