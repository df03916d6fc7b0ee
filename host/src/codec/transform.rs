//! The wavelet stage of the codec: one 2-D DWT per component plane on the
//! chosen backend, integer wavelets in place on `i32`, the f32 9/7 on a
//! converted copy.

use wavelane_core::dwt::{Cdf53, Cdf97, Fixed97, ImageLayout, Wavelet};

use rayon::prelude::*;

use super::CodecError;
use crate::backend::Backend;
use crate::dwt::{self, DwtHostError};

/// Component planes of `len` samples each, back to back in one allocation:
/// the layout of the codec's index array, so that lossless indices are the
/// coefficients themselves (moved, not copied).
#[derive(Debug, Clone)]
pub(crate) struct Planes<T> {
    /// Every plane, plane `c` at `c * len`.
    pub data: Vec<T>,
    /// Samples per plane.
    pub len: usize,
}

impl<T> Planes<T> {
    /// `data` cut into planes of `len` samples (`data.len()` a multiple).
    pub fn new(data: Vec<T>, len: usize) -> Self {
        debug_assert!(data.len().is_multiple_of(len));
        Planes { data, len }
    }

    /// Plane `c`.
    pub fn plane(&self, c: usize) -> &[T] {
        &self.data[c * self.len..(c + 1) * self.len]
    }

    /// Every plane, mutably.
    pub fn planes_mut(&mut self) -> std::slice::ChunksExactMut<'_, T> {
        self.data.chunks_exact_mut(self.len.max(1))
    }
}

/// Transform coefficients of every component.
#[derive(Debug, Clone)]
pub(crate) enum Coefficients {
    /// 5/3 and fixed-point 9/7.
    Int(Planes<i32>),
    /// Floating-point 9/7.
    Float(Planes<f32>),
}

/// Forward transform of every plane (`width x height`, `levels` levels).
pub(crate) fn forward(
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
/// on a GPU (one queue).
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
        Backend::Gpu(_) => planes.into_iter().try_for_each(transform),
    }
}
