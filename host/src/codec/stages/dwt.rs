//! Stage: the 2-D DWT of every component plane on the chosen backend,
//! integer wavelets in place on `i32`, the f32 9/7 on a converted copy
//! (docs/dwt.md). Planes in device buffers stay there
//! ([`super::device::dwt`]).

use rayon::prelude::*;
use wavelane_core::dwt::lift97::K;
use wavelane_core::dwt::{Cdf53, Cdf97, Fixed97, ImageLayout, Wavelet};

use crate::backend::Backend;
use crate::codec::error::CodecError;
use crate::codec::header::Header;
use crate::codec::planes::{Coefficients, Planes, Resident};
use crate::dwt::{self, DwtHostError};

/// Forward transform of every plane (`width x height`, `levels` levels),
/// where the planes are.
pub(crate) fn forward(
    planes: Resident<Planes<i32>>,
    wavelet: Wavelet,
    width: usize,
    height: usize,
    levels: u32,
    backend: &Backend,
) -> Result<Resident<Coefficients>, CodecError> {
    match planes {
        Resident::Host(p) => {
            host_forward(p, wavelet, width, height, levels, backend).map(Resident::Host)
        }
        #[cfg(feature = "gpu")]
        Resident::Device(p) => Ok(Resident::Device(super::device::dwt(
            p, wavelet, width, height, levels, false,
        )?)),
    }
}

fn host_forward(
    mut planes: Planes<i32>,
    wavelet: Wavelet,
    width: usize,
    height: usize,
    levels: u32,
    backend: &Backend,
) -> Result<Coefficients, CodecError> {
    let layout = ImageLayout::new(width, height);
    match wavelet {
        Wavelet::Cdf53 | Wavelet::Fixed97 => {
            each_plane(planes.planes_mut(), backend, |p| {
                if wavelet == Wavelet::Cdf53 {
                    dwt::forward_2d::<Cdf53>(backend, p, layout, levels)
                } else {
                    dwt::forward_2d::<Fixed97>(backend, p, layout, levels)
                }
            })?;
            Ok(Coefficients::Int(planes))
        }
        Wavelet::Cdf97 => {
            let f: Vec<f32> = planes.data.iter().map(|&v| v as f32).collect();
            let mut out = Planes::new(f, planes.len);
            each_plane(out.planes_mut(), backend, |p| {
                dwt::forward_2d::<Cdf97>(backend, p, layout, levels)
            })?;
            Ok(Coefficients::Float(out))
        }
    }
}

/// Inverse transform of planes laid out `width x height` (row stride
/// `width`), `levels` levels; returns integer samples (f32 rounded to the
/// nearest, saturating, NaN to 0).
pub(crate) fn inverse(
    coefficients: Coefficients,
    width: usize,
    height: usize,
    levels: u32,
    integer_wavelet: Wavelet,
    backend: &Backend,
) -> Result<Vec<Vec<i32>>, CodecError> {
    let layout = ImageLayout::new(width, height);
    match coefficients {
        Coefficients::Int(mut planes) => {
            each_plane(planes.planes_mut(), backend, |p| {
                if integer_wavelet == Wavelet::Cdf53 {
                    dwt::inverse_2d::<Cdf53>(backend, p, layout, levels)
                } else {
                    dwt::inverse_2d::<Fixed97>(backend, p, layout, levels)
                }
            })?;
            Ok(planes.planes_mut().map(|p| p.to_vec()).collect())
        }
        Coefficients::Float(mut planes) => {
            let mut out = Vec::with_capacity(planes.data.len() / planes.len.max(1));
            each_plane(planes.planes_mut(), backend, |p| {
                dwt::inverse_2d::<Cdf97>(backend, p, layout, levels)
            })?;
            for p in planes.planes_mut() {
                out.push(p.iter().map(|v| v.round() as i32).collect());
            }
            Ok(out)
        }
    }
}

/// Runs `transform` on every plane: side by side on the CPU backend (the
/// small levels of a plane run on one thread each, see `dwt::cpu`, so
/// several components keep every core busy where one would not), in turn
/// on a GPU (one queue). The transform itself picks the CPU or GPU driver
/// from `backend` ([`crate::dwt`]).
fn each_plane<T: Send>(
    planes: std::slice::ChunksExactMut<'_, T>,
    backend: &Backend,
    transform: impl Fn(&mut [T]) -> Result<(), DwtHostError> + Sync + Send,
) -> Result<(), DwtHostError> {
    match backend {
        Backend::Cpu => planes
            .collect::<Vec<_>>()
            .into_par_iter()
            .try_for_each(transform),
        #[cfg(feature = "gpu")]
        Backend::Gpu(_) => planes.into_iter().try_for_each(transform),
    }
}

/// The inverse transform of a decode that drops `reduce` resolutions: the
/// file's levels less `reduce`, and the gain of the reduced fixed-point
/// 9/7 undone (it leaves out the K scaling, so its LL after k levels
/// carries a gain of K^(2k)). Device planes stay on the device, the gain
/// left for the colour stage's shader to apply as it reads them (on a
/// device without f64 arithmetic, the planes come down and the host
/// applies it).
pub(crate) fn inverse_reduced(
    backend: &Backend,
    coefficients: Resident<Coefficients>,
    width: usize,
    height: usize,
    header: &Header,
    reduce: u8,
) -> Result<Resident<Vec<Vec<i32>>>, CodecError> {
    let levels = header.levels as u32 - reduce as u32;
    let gain =
        (header.wavelet == Wavelet::Fixed97 && reduce > 0).then(|| K.powi(-2 * reduce as i32));
    let mut planes = match coefficients {
        Resident::Host(c) => inverse(c, width, height, levels, header.wavelet, backend)?,
        #[cfg(feature = "gpu")]
        Resident::Device(c) => {
            let mut p = super::device::dwt(c, header.wavelet, width, height, levels, true)?;
            if gain.is_none() || super::device::has_float64(&p.gpu) {
                p.gain = gain;
                return Ok(Resident::Device(p));
            }
            let data = super::device::download(&p).map_err(super::device::gpu_err)?;
            data.chunks_exact(p.len).map(|c| c.to_vec()).collect()
        }
    };
    if let Some(scale) = gain {
        for p in planes.iter_mut() {
            p.par_iter_mut()
                .for_each(|v| *v = (*v as f64 * scale).round() as i32);
        }
    }
    Ok(Resident::Host(planes))
}
