//! Exclusive prefix sum of a GPU buffer (`shaders/scan/scan.comp`), the GPU twin
//! of [`wavelane_core::scan::exclusive_scan_lanes`] with a workgroup of
//! [`SCAN_WORKGROUP_SIZE`]. Drivers use it to turn per-item output sizes into
//! output offsets, either alone ([`Gpu::exclusive_scan`]) or as dispatches
//! inside their own command buffer ([`Gpu::scan_dispatches`]).

use vulkano::buffer::Subbuffer;

use super::{Dispatch, Gpu, GpuError, Timing};
use crate::shaders;

/// Invocations per workgroup of `scan.comp` (its `WORKGROUP_SIZE`).
pub const SCAN_WORKGROUP_SIZE: u32 = 256;

/// Scratch buffers of a scan: one total per workgroup, and the grand total.
#[derive(Debug, Clone)]
pub struct ScanScratch {
    /// Exclusive scan of the workgroup totals after the run.
    pub totals: Subbuffer<[u32]>,
    /// Element 0 holds the wrapping sum of all values after the run.
    pub result: Subbuffer<[u32]>,
}

impl Gpu {
    /// Allocates the scratch for scanning `n` values (left as it is: the
    /// scan writes every total and the result before it reads them).
    pub fn scan_scratch(&self, n: u32) -> Result<ScanScratch, GpuError> {
        Ok(ScanScratch {
            totals: self.uninit::<u32>(n.div_ceil(SCAN_WORKGROUP_SIZE).max(1) as u64)?,
            result: self.uninit::<u32>(1)?,
        })
    }

    /// The three dispatches that scan the first `n` elements of `values` in
    /// place (exclusive, wrapping) and leave the total in `scratch.result[0]`.
    pub fn scan_dispatches(
        &self,
        values: &Subbuffer<[u32]>,
        n: u32,
        scratch: &ScanScratch,
    ) -> Result<Vec<Dispatch>, GpuError> {
        if values.len() < n as u64 {
            return Err(GpuError::Limit(format!(
                "scan of {n} values over a buffer of {}",
                values.len()
            )));
        }
        let blocks = n.div_ceil(SCAN_WORKGROUP_SIZE).max(1);
        if scratch.totals.len() < blocks as u64 {
            return Err(GpuError::Limit(format!(
                "scan scratch holds {} totals, {blocks} needed",
                scratch.totals.len()
            )));
        }
        let with_buffers = |d: Dispatch| {
            d.buffer(values)
                .buffer(&scratch.totals)
                .buffer(&scratch.result)
        };
        Ok(vec![
            with_buffers(Dispatch::new(&shaders::SCAN, [blocks, 1, 1])).push(&[n, 0]),
            with_buffers(Dispatch::new(&shaders::SCAN, [1, 1, 1])).push(&[blocks, 1]),
            with_buffers(Dispatch::new(&shaders::SCAN, [blocks, 1, 1])).push(&[n, 2]),
        ])
    }

    /// Scans the first `n` elements of `values` in place; returns the total
    /// and the GPU time of the three dispatches.
    pub fn exclusive_scan(
        &self,
        values: &Subbuffer<[u32]>,
        n: u32,
    ) -> Result<(u32, Timing), GpuError> {
        let scratch = self.scan_scratch(n)?;
        let timing = self.run(&self.scan_dispatches(values, n, &scratch)?)?;
        let total = self.download(&scratch.result)?[0];
        Ok((total, timing))
    }
}
