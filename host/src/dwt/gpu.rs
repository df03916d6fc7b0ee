//! The GPU driver of the DWT: one dispatch of a `dwt*_{fwd,inv}` shader
//! (`shaders/dwt/block.glsl`) per level (plus one Z-pass dispatch per level
//! that transforms Z), all recorded into one command buffer by [`Gpu::run`].
//!
//! Data flow of a forward transform (inverse mirrors it): level 0 reads the
//! samples buffer; every level writes its detail subbands straight to their
//! Mallat positions in the coefficients buffer and its LL band, compact, into
//! one of two ping-pong LL buffers that the next level reads; the last level
//! writes its LL band into the coefficients buffer too. A level that
//! transforms Z first runs the Z pass into a Z buffer, which the 2-D level
//! then reads. Each level is a single pass over memory (read once plus halo,
//! written once), the register-block design (docs/dwt.md) that
//! [`wavelane_core::dwt::block`] models: forward levels stream tall strips
//! ([`forward_strip`], height per level as a push constant), inverse levels
//! lift whole register blocks.
//!
//! The device tuning of those shapes lives here, not in core, whose model
//! takes any strip height: [`strip_rows`] and [`STRIP_FILL`] pick each
//! level's strip height. The inverse block's 8 pair rows
//! ([`SHADER_PAIR_ROWS`]) are tuning too: with 16 the 32 x 4 register block
//! spilled on an NVIDIA H200 and the 9/7 ran 3 to 10 times slower
//! (docs/history/dwt.md).

use std::sync::Arc;

use vulkano::buffer::{BufferContents, Subbuffer};
use wavelane_core::dwt::block::{
    BlockGeometry, PAIRS_PER_LANE, SHADER_PAIR_ROWS, STRIP_MAX_OUT_PAIR_ROWS,
};

/// Pair rows per block of the z-axis shaders (`shaders/dwt/z.glsl`).
const Z_PAIR_ROWS: usize = 16;
use wavelane_core::dwt::volume::{axes_at, check_levels, region_at, total_levels, VolumeLayout};
use wavelane_core::dwt::{DwtError, Wavelet};

use super::{DwtHostError, HostWavelet};
use crate::backend::gpu::{Dispatch, Timing};
use crate::backend::Gpu;

/// Output pair rows of a forward strip on a large level, per wavelet
/// ([`forward_strip`]). Each strip is one subgroup: shorter strips put more
/// subgroups to work and finish the level's last wave sooner, taller ones
/// load less vertical halo (3 rows per strip for the 5/3, 7 for the 9/7s)
/// and, since odd strip rows walk up, most of that halo comes from the L2,
/// so the balance sits at short strips. Measured on an H100 at 8192², level
/// 0, 3 to 18 rows (docs/history/dwt.md): the 5/3 ran fastest with 3-4
/// rows (-4% against 9), the float 9/7 with 4-6 (-12% against 35), the
/// fixed-point 9/7, whose steps cost more per halo row, with 8-12 (-2%
/// against 18; 8 is also its level 1's best).
pub const fn strip_rows(wavelet: Wavelet) -> usize {
    match wavelet {
        Wavelet::Cdf53 => 4,
        Wavelet::Cdf97 => 6,
        Wavelet::Fixed97 => 8,
    }
}

/// Strips a small level aims at. A level is small when it would have fewer
/// than twice this many strips of [`strip_rows`]; it then takes the strip
/// height whose strip count is nearest this. About three quarters of the
/// subgroups an H100 or H200 holds at once (132 SMs x 32 at the forwards'
/// 60-64 registers): such a level runs as one wave, and its time is one
/// strip's chain of dependent steps, so the strips should be as few and
/// tall as still keep the GPU busy, and never one more wave. Measured at
/// 8192², 5 levels, H100 (docs/history/dwt.md): level 2 (2048², 18
/// columns of strips) ran fastest with 6 rows (3078 strips; 4 rows, 4608
/// strips, are just over one wave and took 10-15% longer), level 3 with 2
/// (2304; 1 row, 4608, lost 12%), level 4 with 1 (1280), for every wavelet.
pub const STRIP_FILL: usize = 3072;

/// The forward shaders' strip for a `width x height` level: [`strip_rows`]
/// output pair rows tall, unless the level is small (fewer than
/// `2 * STRIP_FILL` such strips); then the height (at most the level's pair
/// rows) whose strip count is nearest [`STRIP_FILL`], the shorter of two
/// equally near. Any height gives the same result (the core model
/// [`BlockGeometry::forward_strip_rows`] takes them all); this only decides
/// how fast.
pub fn forward_strip(
    wavelet: Wavelet,
    subgroup_size: usize,
    width: usize,
    height: usize,
) -> Result<BlockGeometry, DwtError> {
    let row = BlockGeometry::forward_strip_rows(wavelet, subgroup_size, 1)?;
    let across = width.div_ceil(2).div_ceil(row.out_pairs_x()).max(1);
    let pairs_y = height.div_ceil(2).max(1);
    let strips = |rows: usize| across * pairs_y.div_ceil(rows);
    let large = strip_rows(wavelet);
    let rows = if strips(large) >= 2 * STRIP_FILL {
        large
    } else {
        (1..=pairs_y.min(STRIP_MAX_OUT_PAIR_ROWS))
            .min_by_key(|&rows| (strips(rows).abs_diff(STRIP_FILL), rows))
            .unwrap_or(1)
    };
    BlockGeometry::forward_strip_rows(wavelet, subgroup_size, rows)
}

/// `local_size_x` of the DWT shaders.
const WORKGROUP: u32 = 64;
/// Workgroups per dispatch at most; the shaders loop over the rest.
const MAX_GROUPS: u32 = 65_535;
const FLAG_X: u32 = 1;
const FLAG_Y: u32 = 2;
const FLAG_LL_IN_MAIN: u32 = 4;

/// Device scratch of a transform: two ping-pong LL buffers and, when some
/// level transforms Z, a Z buffer.
#[derive(Debug, Clone)]
pub struct GpuScratch<T> {
    ll: [Subbuffer<[T]>; 2],
    z: Option<Subbuffer<[T]>>,
}

/// A planned GPU transform of one layout and level count.
#[derive(Debug, Clone)]
pub struct GpuDwt {
    gpu: Arc<Gpu>,
    layout: VolumeLayout,
    levels: [u32; 3],
    subgroup: u32,
    /// Output pair rows of every forward strip; `None`: the per-level rule
    /// of [`forward_strip`].
    strip_rows: Option<usize>,
}

fn groups(items: u64, per_group: u64) -> u32 {
    items.div_ceil(per_group).clamp(1, MAX_GROUPS as u64) as u32
}

fn u(v: usize) -> u32 {
    // Every value passed is bounded by the sample count, checked < 2^32.
    v as u32
}

impl GpuDwt {
    /// Checks the layout, levels and device and plans the transform.
    pub fn new(
        gpu: Arc<Gpu>,
        layout: VolumeLayout,
        levels: [u32; 3],
    ) -> Result<Self, DwtHostError> {
        layout.validate(usize::MAX)?;
        check_levels(layout.dims(), levels)?;
        let len = Self::required(layout) as u64;
        if len > u32::MAX as u64 {
            return Err(DwtHostError::TooLarge(len));
        }
        let subgroup = gpu.info().subgroup_size;
        if !subgroup.is_power_of_two() || !(4..=64).contains(&subgroup) {
            return Err(DwtHostError::SubgroupSize(subgroup));
        }
        Ok(GpuDwt {
            gpu,
            layout,
            levels,
            subgroup,
            strip_rows: None,
        })
    }

    /// Gives every forward level strips of `rows` output pair rows
    /// (clamped to 1..=64) instead of the per-level rule of
    /// [`forward_strip`]: a tuning knob for `wavelane bench
    /// dwt`; results do not depend on it.
    pub fn with_strip_rows(mut self, rows: usize) -> Self {
        self.strip_rows = Some(rows);
        self
    }

    fn required(l: VolumeLayout) -> usize {
        (l.depth - 1) * l.slice_stride + (l.height - 1) * l.row_stride + l.width
    }

    /// Elements the samples and coefficients buffers must hold.
    pub fn buffer_len(&self) -> usize {
        Self::required(self.layout)
    }

    /// The layout this plan transforms.
    pub fn layout(&self) -> VolumeLayout {
        self.layout
    }

    /// Allocates the device scratch.
    pub fn scratch<T: BufferContents>(&self) -> Result<GpuScratch<T>, DwtHostError> {
        let dims = self.layout.dims();
        let ll_len: usize = if total_levels(self.levels) > 1 {
            region_at(dims, self.levels, 1).iter().product()
        } else {
            1
        };
        let z = if self.levels[2] > 0 && self.layout.depth > 1 {
            Some(
                self.gpu
                    .uninit::<T>(dims.iter().product::<usize>() as u64)?,
            )
        } else {
            None
        };
        Ok(GpuScratch {
            ll: [
                self.gpu.uninit::<T>(ll_len as u64)?,
                self.gpu.uninit::<T>(ll_len as u64)?,
            ],
            z,
        })
    }

    /// The forward strip of a `w x h` level.
    fn strip(
        &self,
        wavelet: wavelane_core::dwt::Wavelet,
        w: usize,
        h: usize,
    ) -> Result<BlockGeometry, DwtHostError> {
        let sg = self.subgroup as usize;
        let g = match self.strip_rows {
            Some(rows) => BlockGeometry::forward_strip_rows(wavelet, sg, rows)?,
            None => forward_strip(wavelet, sg, w, h)?,
        };
        debug_assert_eq!(g.pairs_x, PAIRS_PER_LANE * self.subgroup as usize);
        Ok(g)
    }

    /// Output pair rows of each forward level's strips, finest level first
    /// (what [`Self::forward_dispatches`] gives the shaders).
    pub fn forward_strip_rows(
        &self,
        wavelet: wavelane_core::dwt::Wavelet,
    ) -> Result<Vec<usize>, DwtHostError> {
        let dims = self.layout.dims();
        (0..total_levels(self.levels))
            .map(|i| {
                let [w, h, _] = region_at(dims, self.levels, i);
                Ok(self.strip(wavelet, w, h)?.out_pair_rows())
            })
            .collect()
    }

    /// The inverse block.
    fn inverse_block(
        &self,
        wavelet: wavelane_core::dwt::Wavelet,
    ) -> Result<BlockGeometry, DwtHostError> {
        let g = BlockGeometry::for_subgroup(wavelet, self.subgroup as usize)?;
        debug_assert_eq!(g.pair_rows, SHADER_PAIR_ROWS);
        Ok(g)
    }

    /// Workgroups for the blocks of `g` on `d` slices of `w x h`: one
    /// subgroup per block (the shaders loop over blocks beyond MAX_GROUPS).
    fn block_groups(&self, g: BlockGeometry, w: usize, h: usize, d: usize) -> u32 {
        let (nbx, nby) = g.grid(w, h);
        let blocks = (nbx * nby * d) as u64;
        groups(blocks, (WORKGROUP / self.subgroup) as u64)
    }

    fn z_groups(&self, halo: usize, w: usize, h: usize, d: usize) -> u32 {
        let out = Z_PAIR_ROWS - 2 * halo;
        let nbz = d.div_ceil(2).div_ceil(out);
        groups((w * h * nbz) as u64, WORKGROUP as u64)
    }

    fn check_buffers<T: BufferContents>(
        &self,
        a: &Subbuffer<[T]>,
        b: &Subbuffer<[T]>,
        s: &GpuScratch<T>,
    ) -> Result<(), DwtHostError> {
        let need = self.buffer_len() as u64;
        if a.len() < need || b.len() < need {
            return Err(DwtError::BufferTooSmall.into());
        }
        let dims = self.layout.dims();
        if total_levels(self.levels) > 1 {
            let ll: usize = region_at(dims, self.levels, 1).iter().product();
            if s.ll.iter().any(|b| b.len() < ll as u64) {
                return Err(DwtError::ScratchTooSmall.into());
            }
        }
        if self.levels[2] > 0 && self.layout.depth > 1 {
            let zl = dims.iter().product::<usize>() as u64;
            if s.z.as_ref().is_none_or(|z| z.len() < zl) {
                return Err(DwtError::ScratchTooSmall.into());
            }
        }
        Ok(())
    }

    /// The dispatches of a forward transform from `samples` to `coeffs`
    /// (both laid out as [`Self::layout`]).
    pub fn forward_dispatches<W: HostWavelet>(
        &self,
        samples: &Subbuffer<[W::Sample]>,
        coeffs: &Subbuffer<[W::Sample]>,
        scratch: &GpuScratch<W::Sample>,
    ) -> Result<Vec<Dispatch>, DwtHostError> {
        self.check_buffers(samples, coeffs, scratch)?;
        let l = self.layout;
        let dims = l.dims();
        let total = total_levels(self.levels);
        let halo = W::WAVELET.halo_pairs();
        let mut out = Vec::new();
        for i in 0..total {
            let [w, h, d] = region_at(dims, self.levels, i);
            let [tx, ty, tz] = axes_at(self.levels, i);
            let last = i + 1 == total;
            let (mut a, mut a_row, mut a_slice) = if i == 0 {
                (samples, l.row_stride, l.slice_stride)
            } else {
                (&scratch.ll[(i as usize - 1) % 2], w, w * h)
            };
            if tz && d > 1 {
                let z = scratch.z.as_ref().ok_or(DwtError::ScratchTooSmall)?;
                out.push(
                    Dispatch::new(W::Z_FORWARD, [self.z_groups(halo, w, h, d), 1, 1])
                        .buffer(a)
                        .buffer(z)
                        .push(&[u(w), u(h), u(d), u(a_row), u(a_slice), u(w), u(w * h)]),
                );
                (a, a_row, a_slice) = (z, w, w * h);
            }
            let [nw, nh, _] = region_at(dims, self.levels, i + 1);
            let flags = if tx && w > 1 { FLAG_X } else { 0 }
                | if ty && h > 1 { FLAG_Y } else { 0 }
                | if last { FLAG_LL_IN_MAIN } else { 0 };
            let ll_slices = if tz { d.div_ceil(2) } else { d };
            let strip = self.strip(W::WAVELET, w, h)?;
            out.push(
                Dispatch::new(W::FORWARD, [self.block_groups(strip, w, h, d), 1, 1])
                    .buffer(a)
                    .buffer(coeffs)
                    .buffer(&scratch.ll[i as usize % 2])
                    .push(&[
                        u(w),
                        u(h),
                        u(d),
                        u(ll_slices),
                        flags,
                        u(a_row),
                        u(a_slice),
                        u(l.row_stride),
                        u(l.slice_stride),
                        u(nw),
                        u(nw * nh),
                        u(strip.out_pair_rows()),
                    ]),
            );
        }
        Ok(out)
    }

    /// The dispatches of an inverse transform from `coeffs` to `samples`.
    pub fn inverse_dispatches<W: HostWavelet>(
        &self,
        coeffs: &Subbuffer<[W::Sample]>,
        samples: &Subbuffer<[W::Sample]>,
        scratch: &GpuScratch<W::Sample>,
    ) -> Result<Vec<Dispatch>, DwtHostError> {
        self.check_buffers(coeffs, samples, scratch)?;
        let l = self.layout;
        let dims = l.dims();
        let total = total_levels(self.levels);
        let halo = W::WAVELET.halo_pairs();
        // Every inverse level lifts the same block shape.
        let block = self.inverse_block(W::WAVELET)?;
        let mut out = Vec::new();
        for i in (0..total).rev() {
            let [w, h, d] = region_at(dims, self.levels, i);
            let [tx, ty, tz] = axes_at(self.levels, i);
            let coarsest = i + 1 == total;
            let [nw, nh, _] = region_at(dims, self.levels, i + 1);
            // At the coarsest level B is unused; bind a buffer nothing writes here.
            let (b_row, b_slice) = if coarsest { (0, 0) } else { (nw, nw * nh) };
            let b = &scratch.ll[(i as usize + 1) % 2];
            let (dst, dst_row, dst_slice) = if i == 0 {
                (samples, l.row_stride, l.slice_stride)
            } else {
                (&scratch.ll[i as usize % 2], w, w * h)
            };
            let z_first = tz && d > 1;
            let (c, c_row, c_slice) = if z_first {
                (
                    scratch.z.as_ref().ok_or(DwtError::ScratchTooSmall)?,
                    w,
                    w * h,
                )
            } else {
                (dst, dst_row, dst_slice)
            };
            let flags = if tx && w > 1 { FLAG_X } else { 0 }
                | if ty && h > 1 { FLAG_Y } else { 0 }
                | if coarsest { FLAG_LL_IN_MAIN } else { 0 };
            let ll_slices = if tz { d.div_ceil(2) } else { d };
            out.push(
                Dispatch::new(W::INVERSE, [self.block_groups(block, w, h, d), 1, 1])
                    .buffer(coeffs)
                    .buffer(b)
                    .buffer(c)
                    .push(&[
                        u(w),
                        u(h),
                        u(d),
                        u(ll_slices),
                        flags,
                        u(l.row_stride),
                        u(l.slice_stride),
                        u(b_row),
                        u(b_slice),
                        u(c_row),
                        u(c_slice),
                        // strip_out_pairs: forward only.
                        0,
                    ]),
            );
            if z_first {
                out.push(
                    Dispatch::new(W::Z_INVERSE, [self.z_groups(halo, w, h, d), 1, 1])
                        .buffer(c)
                        .buffer(dst)
                        .push(&[u(w), u(h), u(d), u(w), u(w * h), u(dst_row), u(dst_slice)]),
                );
            }
        }
        Ok(out)
    }

    /// Forward transform of a host buffer in place: upload, run, download.
    pub fn forward_host<W: HostWavelet>(
        &self,
        data: &mut [W::Sample],
    ) -> Result<Timing, DwtHostError> {
        self.host_run::<W>(data, true)
    }

    /// Inverse transform of a host buffer in place.
    pub fn inverse_host<W: HostWavelet>(
        &self,
        data: &mut [W::Sample],
    ) -> Result<Timing, DwtHostError> {
        self.host_run::<W>(data, false)
    }

    fn host_run<W: HostWavelet>(
        &self,
        data: &mut [W::Sample],
        forward: bool,
    ) -> Result<Timing, DwtHostError> {
        let len = self.buffer_len();
        if data.len() < len {
            return Err(DwtError::BufferTooSmall.into());
        }
        if total_levels(self.levels) == 0 {
            return Ok(Timing::default());
        }
        let input = self.gpu.upload(&data[..len])?;
        let output = self.gpu.uninit::<W::Sample>(len as u64)?;
        let scratch = self.scratch::<W::Sample>()?;
        let dispatches = if forward {
            self.forward_dispatches::<W>(&input, &output, &scratch)?
        } else {
            self.inverse_dispatches::<W>(&input, &output, &scratch)?
        };
        let timing = self.gpu.run(&dispatches)?;
        let l = self.layout;
        if l.row_stride == l.width && (l.depth == 1 || l.slice_stride == l.width * l.height) {
            // No stride padding: the buffer is the volume, read straight
            // into `data` (no second copy of a plane-sized download).
            self.gpu.download_into(&output, &mut data[..len])?;
            return Ok(timing);
        }
        let result = self.gpu.download(&output)?;
        // Copy only the volume's samples: stride padding was never written.
        for z in 0..l.depth {
            for y in 0..l.height {
                let at = z * l.slice_stride + y * l.row_stride;
                data[at..at + l.width].copy_from_slice(&result[at..at + l.width]);
            }
        }
        Ok(timing)
    }
}
