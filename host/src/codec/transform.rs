//! The wavelet stage of the codec: one 2-D DWT per component plane on the
//! chosen backend, integer wavelets in place on `i32`, the f32 9/7 on a
//! converted copy.

use wavelane_core::dwt::{Cdf53, Cdf97, Fixed97, ImageLayout, Wavelet};

use super::CodecError;
use crate::backend::Backend;
use crate::dwt;

/// Transform coefficients of every component.
#[derive(Debug, Clone)]
pub(crate) enum Coefficients {
    /// 5/3 and fixed-point 9/7.
    Int(Vec<Vec<i32>>),
    /// Floating-point 9/7.
    Float(Vec<Vec<f32>>),
}

/// Forward transform of every plane (`width x height`, `levels` levels).
pub(crate) fn forward(
    mut planes: Vec<Vec<i32>>,
    wavelet: Wavelet,
    width: usize,
    height: usize,
    levels: u32,
    backend: &Backend,
) -> Result<Coefficients, CodecError> {
    let layout = ImageLayout::new(width, height);
    match wavelet {
        Wavelet::Cdf53 | Wavelet::Fixed97 => {
            for p in planes.iter_mut() {
                if wavelet == Wavelet::Cdf53 {
                    dwt::forward_2d::<Cdf53>(backend, p, layout, levels)?;
                } else {
                    dwt::forward_2d::<Fixed97>(backend, p, layout, levels)?;
                }
            }
            Ok(Coefficients::Int(planes))
        }
        Wavelet::Cdf97 => {
            let mut out = Vec::with_capacity(planes.len());
            for p in planes {
                let mut f: Vec<f32> = p.into_iter().map(|v| v as f32).collect();
                dwt::forward_2d::<Cdf97>(backend, &mut f, layout, levels)?;
                out.push(f);
            }
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
            for p in planes.iter_mut() {
                if integer_wavelet == Wavelet::Cdf53 {
                    dwt::inverse_2d::<Cdf53>(backend, p, layout, levels)?;
                } else {
                    dwt::inverse_2d::<Fixed97>(backend, p, layout, levels)?;
                }
            }
            Ok(planes)
        }
        Coefficients::Float(planes) => {
            let mut out = Vec::with_capacity(planes.len());
            for mut p in planes {
                dwt::inverse_2d::<Cdf97>(backend, &mut p, layout, levels)?;
                out.push(p.into_iter().map(|v| v.round() as i32).collect());
            }
            Ok(out)
        }
    }
}
