//! The DWT on the host: [`wavelane_core::dwt`] run on all CPU cores
//! ([`cpu`], rayon) or as Vulkan compute shaders (`gpu`), with the same
//! results (bit-identical for the integer wavelets; the f32 9/7 agrees to
//! 1e-5 relative and bit-exactly on IEEE devices).
//!
//! The entry points take a [`Backend`] and work in place on a host buffer,
//! like the core functions (2-D images are volumes of depth 1):
//!
//! ```no_run
//! use wavelane::backend::{Backend, BackendKind};
//! use wavelane::dwt;
//! use wavelane_core::dwt::{Cdf53, ImageLayout};
//!
//! let backend = Backend::select(BackendKind::Auto)?;
//! let mut image = vec![0i32; 640 * 480];
//! dwt::forward_2d::<Cdf53>(&backend, &mut image, ImageLayout::new(640, 480), 5)?;
//! dwt::inverse_2d::<Cdf53>(&backend, &mut image, ImageLayout::new(640, 480), 5)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! For device-resident work (benchmarks, a GPU codec pipeline) use
//! `gpu::GpuDwt` (`gpu` feature) directly: it records the dispatches of a whole transform
//! over buffers that stay on the device.

pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;

use wavelane_core::dwt::volume::VolumeLayout;
use wavelane_core::dwt::{Cdf53, Cdf97, DwtError, Fixed97, ImageLayout, Lifting};

use crate::backend::Backend;
#[cfg(feature = "gpu")]
use crate::backend::GpuError;
#[cfg(feature = "gpu")]
use crate::shaders::{self, Shader};

/// Errors of the host DWT.
#[derive(Debug, thiserror::Error)]
pub enum DwtHostError {
    /// Bad layout, level count or the like (from the core checks).
    #[error("DWT: {0}")]
    Core(#[from] DwtError),
    /// The GPU failed.
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The DWT shaders need 4..=64 lanes per subgroup (a power of two).
    #[cfg(feature = "gpu")]
    #[error("the DWT shaders need a subgroup size that is a power of two in 4..=64; this device has {0}")]
    SubgroupSize(u32),
    /// The GPU shaders index with 32-bit integers.
    #[cfg(feature = "gpu")]
    #[error("{0} samples exceed the 2^32-sample limit of the GPU DWT")]
    TooLarge(u64),
}

/// What a device buffer needs of a sample type: vulkano's `BufferContents`
/// with the `gpu` feature, nothing without it. One bound for both builds
/// keeps [`HostWavelet`] and every generic function over it free of `cfg`.
#[cfg(feature = "gpu")]
pub trait DeviceSample: vulkano::buffer::BufferContents {}
#[cfg(feature = "gpu")]
impl<T: vulkano::buffer::BufferContents> DeviceSample for T {}

/// What a device buffer needs of a sample type: vulkano's `BufferContents`
/// with the `gpu` feature, nothing without it.
#[cfg(not(feature = "gpu"))]
pub trait DeviceSample {}
#[cfg(not(feature = "gpu"))]
impl<T> DeviceSample for T {}

/// A wavelet with its GPU shaders: the host side of [`Lifting`].
pub trait HostWavelet: Lifting<Sample = Self::HostSample> {
    /// The sample type, with what buffers and threads need.
    type HostSample: DeviceSample
        + bytemuck::Pod
        + Default
        + PartialEq
        + std::fmt::Debug
        + Send
        + Sync;
    /// Forward 2-D level shader.
    #[cfg(feature = "gpu")]
    const FORWARD: &'static Shader;
    /// Inverse 2-D level shader.
    #[cfg(feature = "gpu")]
    const INVERSE: &'static Shader;
    /// Forward Z pass shader.
    #[cfg(feature = "gpu")]
    const Z_FORWARD: &'static Shader;
    /// Inverse Z pass shader.
    #[cfg(feature = "gpu")]
    const Z_INVERSE: &'static Shader;
}

impl HostWavelet for Cdf53 {
    type HostSample = i32;
    #[cfg(feature = "gpu")]
    const FORWARD: &'static Shader = &shaders::DWT53_FWD;
    #[cfg(feature = "gpu")]
    const INVERSE: &'static Shader = &shaders::DWT53_INV;
    #[cfg(feature = "gpu")]
    const Z_FORWARD: &'static Shader = &shaders::DWT53_ZFWD;
    #[cfg(feature = "gpu")]
    const Z_INVERSE: &'static Shader = &shaders::DWT53_ZINV;
}

impl HostWavelet for Cdf97 {
    type HostSample = f32;
    #[cfg(feature = "gpu")]
    const FORWARD: &'static Shader = &shaders::DWT97_FWD;
    #[cfg(feature = "gpu")]
    const INVERSE: &'static Shader = &shaders::DWT97_INV;
    #[cfg(feature = "gpu")]
    const Z_FORWARD: &'static Shader = &shaders::DWT97_ZFWD;
    #[cfg(feature = "gpu")]
    const Z_INVERSE: &'static Shader = &shaders::DWT97_ZINV;
}

impl HostWavelet for Fixed97 {
    type HostSample = i32;
    #[cfg(feature = "gpu")]
    const FORWARD: &'static Shader = &shaders::DWT97I_FWD;
    #[cfg(feature = "gpu")]
    const INVERSE: &'static Shader = &shaders::DWT97I_INV;
    #[cfg(feature = "gpu")]
    const Z_FORWARD: &'static Shader = &shaders::DWT97I_ZFWD;
    #[cfg(feature = "gpu")]
    const Z_INVERSE: &'static Shader = &shaders::DWT97I_ZINV;
}

fn as_volume(layout: ImageLayout) -> VolumeLayout {
    VolumeLayout {
        width: layout.width,
        height: layout.height,
        depth: 1,
        row_stride: layout.stride,
        slice_stride: layout.required_len().max(1),
    }
}

/// Forward 2-D transform, `levels` levels, in place (see
/// [`wavelane_core::dwt::forward_2d`]).
pub fn forward_2d<W: HostWavelet>(
    backend: &Backend,
    data: &mut [W::Sample],
    layout: ImageLayout,
    levels: u32,
) -> Result<(), DwtHostError> {
    layout.validate(data.len())?;
    forward_3d::<W>(backend, data, as_volume(layout), [levels, levels, 0])
}

/// Inverse of [`forward_2d`].
pub fn inverse_2d<W: HostWavelet>(
    backend: &Backend,
    data: &mut [W::Sample],
    layout: ImageLayout,
    levels: u32,
) -> Result<(), DwtHostError> {
    layout.validate(data.len())?;
    inverse_3d::<W>(backend, data, as_volume(layout), [levels, levels, 0])
}

/// Forward 3-D transform with per-axis levels `[x, y, z]` (see
/// [`wavelane_core::dwt::volume`]).
pub fn forward_3d<W: HostWavelet>(
    backend: &Backend,
    data: &mut [W::Sample],
    layout: VolumeLayout,
    levels: [u32; 3],
) -> Result<(), DwtHostError> {
    match backend {
        Backend::Cpu => cpu::forward_3d::<W>(data, layout, levels),
        #[cfg(feature = "gpu")]
        Backend::Gpu(gpu) => gpu::GpuDwt::new(gpu.clone(), layout, levels)?
            .forward_host::<W>(data)
            .map(|_| ()),
    }
}

/// [`inverse_3d`] leaving out the finest `reduce[a]` levels of axis `a`
/// ([`wavelane_core::dwt::volume::inverse_3d_reduced`]). A reduction runs
/// on the CPU on either backend (the GPU transform has no reduced form; a
/// reduced decode is a preview, and its data is on the host already).
pub fn inverse_3d_reduced<W: HostWavelet>(
    backend: &Backend,
    data: &mut [W::Sample],
    layout: VolumeLayout,
    levels: [u32; 3],
    reduce: [u32; 3],
) -> Result<(), DwtHostError> {
    match reduce {
        [0, 0, 0] => inverse_3d::<W>(backend, data, layout, levels),
        _ => cpu::inverse_3d_reduced::<W>(data, layout, levels, reduce),
    }
}

/// Inverse of [`forward_3d`].
pub fn inverse_3d<W: HostWavelet>(
    backend: &Backend,
    data: &mut [W::Sample],
    layout: VolumeLayout,
    levels: [u32; 3],
) -> Result<(), DwtHostError> {
    match backend {
        Backend::Cpu => cpu::inverse_3d::<W>(data, layout, levels),
        #[cfg(feature = "gpu")]
        Backend::Gpu(gpu) => gpu::GpuDwt::new(gpu.clone(), layout, levels)?
            .inverse_host::<W>(data)
            .map(|_| ()),
    }
}
