//! numpy arrays to codec images and back.
//!
//! numpy images are interleaved (`H x W` or `H x W x C`), as the codec's
//! [`Interleaved`] images are: encode copies the array's memory as it is
//! and decode hands the decoder's samples over. The arrays are checked
//! here, under the GIL, so that every bad argument is a `ValueError`
//! naming what is wrong; the copy runs later without the GIL
//! ([`Pixels::into_interleaved`]).

use numpy::ndarray::{ArrayD, IxDyn};
use numpy::{
    dtype, IntoPyArray, PyArrayDescrMethods, PyReadonlyArrayDyn, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use wavelane::codec::{Interleaved, SampleBuf};

/// Largest width and height of a `.wl` image (docs/format.md).
const MAX_DIMENSION: usize = 65535;

/// The samples of an encoder's input, row-major and interleaved, borrowed
/// from the array where it is C-contiguous and copied where it is not.
pub enum Samples<'a> {
    /// `uint8` samples.
    U8(std::borrow::Cow<'a, [u8]>),
    /// `uint16` samples.
    U16(std::borrow::Cow<'a, [u16]>),
}

/// An array checked to be codable: its samples and its shape.
pub struct Pixels<'a> {
    /// The samples.
    pub samples: Samples<'a>,
    /// Rows.
    pub height: usize,
    /// Columns.
    pub width: usize,
    /// Components (1 for a 2-D array).
    pub components: usize,
}

/// A read-only borrow of the input array, held while its samples are in use.
pub enum Borrowed<'py> {
    /// A `uint8` array.
    U8(PyReadonlyArrayDyn<'py, u8>),
    /// A `uint16` array.
    U16(PyReadonlyArrayDyn<'py, u16>),
}

/// Checks that `array` is a numpy `uint8` or `uint16` array of shape
/// `H x W` or `H x W x C` (`C` in 1..=4, `H` and `W` in 1..=65535) and
/// borrows it read-only.
pub fn borrow<'py>(array: &Bound<'py, PyAny>) -> PyResult<Borrowed<'py>> {
    let py = array.py();
    let untyped = array.cast::<PyUntypedArray>().map_err(|_| {
        PyValueError::new_err(format!("expected a numpy array, got {}", type_name(array)))
    })?;
    let shape = untyped.shape();
    match shape.len() {
        2 => {}
        3 if (1..=4).contains(&shape[2]) => {}
        3 => {
            return Err(PyValueError::new_err(format!(
                "an H x W x C array needs 1 to 4 components, got shape {shape:?}"
            )))
        }
        n => {
            return Err(PyValueError::new_err(format!(
                "expected a 2-D (H x W) or 3-D (H x W x C) array, got {n} dimensions"
            )))
        }
    }
    if shape[..2]
        .iter()
        .any(|&n| !(1..=MAX_DIMENSION).contains(&n))
    {
        return Err(PyValueError::new_err(format!(
            "height and width must be 1..={MAX_DIMENSION}, got shape {shape:?}"
        )));
    }
    let dt = untyped.dtype();
    if dt.is_equiv_to(&dtype::<u8>(py)) {
        Ok(Borrowed::U8(array.extract()?))
    } else if dt.is_equiv_to(&dtype::<u16>(py)) {
        Ok(Borrowed::U16(array.extract()?))
    } else {
        Err(PyValueError::new_err(format!(
            "dtype {dt} is not supported (uint8 or uint16)"
        )))
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "an unknown type".into())
}

impl<'py> Borrowed<'py> {
    /// The samples and shape; a copy only where the array is not
    /// C-contiguous.
    pub fn pixels(&self) -> Pixels<'_> {
        let (samples, shape) = match self {
            Borrowed::U8(a) => (Samples::U8(contiguous(a)), a.shape().to_vec()),
            Borrowed::U16(a) => (Samples::U16(contiguous(a)), a.shape().to_vec()),
        };
        Pixels {
            samples,
            height: shape[0],
            width: shape[1],
            components: shape.get(2).copied().unwrap_or(1),
        }
    }
}

fn contiguous<'a, T: numpy::Element + Copy>(
    a: &'a PyReadonlyArrayDyn<'_, T>,
) -> std::borrow::Cow<'a, [T]> {
    // `as_slice` also accepts Fortran order, whose memory is not row-major.
    match a.as_slice() {
        Ok(s) if a.is_c_contiguous() => std::borrow::Cow::Borrowed(s),
        // `iter` walks in logical (C) order whatever the strides.
        _ => std::borrow::Cow::Owned(a.as_array().iter().copied().collect()),
    }
}

impl Pixels<'_> {
    /// Bits per sample the codec is told: the dtype's width.
    pub fn bit_depth(&self) -> u8 {
        match self.samples {
            Samples::U8(_) => 8,
            Samples::U16(_) => 16,
        }
    }

    /// The image's samples as the codec takes them, interleaved at their
    /// own width: a copy of the array's memory (runs without the GIL).
    pub fn into_interleaved(self) -> Interleaved {
        let bit_depth = self.bit_depth();
        let samples = match self.samples {
            Samples::U8(s) => SampleBuf::U8(s.into_owned()),
            Samples::U16(s) => SampleBuf::U16(s.into_owned()),
        };
        Interleaved {
            width: self.width,
            height: self.height,
            components: self.components,
            bit_depth,
            signed: false,
            samples,
        }
    }
}

/// The numpy array of a decoded image (no copy: the decoder's samples
/// are handed over): `[H, W]` for one component, else `[H, W, C]`, of
/// `uint8`/`uint16` (`int8`/`int16` for signed files) by bit depth.
pub fn into_numpy(py: Python<'_>, image: Interleaved) -> PyResult<Bound<'_, PyAny>> {
    let mut shape = vec![image.height, image.width];
    if image.components > 1 {
        shape.push(image.components);
    }
    match image.samples {
        SampleBuf::U8(v) => array(py, &shape, v),
        SampleBuf::U16(v) => array(py, &shape, v),
        SampleBuf::I8(v) => array(py, &shape, v),
        SampleBuf::I16(v) => array(py, &shape, v),
    }
}

fn array<'py, T: numpy::Element>(
    py: Python<'py>,
    shape: &[usize],
    v: Vec<T>,
) -> PyResult<Bound<'py, PyAny>> {
    // The decoder gives width x height x components samples; a mismatch
    // would be a bug, reported rather than a crash.
    let array = ArrayD::from_shape_vec(IxDyn(shape), v)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok(array.into_pyarray(py).into_any())
}
