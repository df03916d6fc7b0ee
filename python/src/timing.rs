//! The Python call overhead figure's functions (python/benchmarks/zarr_bench.py,
//! docs/benchmarks.md "Python, Zarr and Dask"): `encode` and `decode` that
//! also return the coder's own seconds, measured inside the library, so
//! that the benchmark can subtract them from the call's wall time. Not
//! part of the API (the leading underscore; no stubs).

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::{array, backend_kind, decode_data, encode_array, encode_options, Int};

/// `encode` that also returns the encoder's own seconds (its report's
/// total, measured inside the library): for the Python call overhead
/// figure of python/benchmarks/zarr_bench.py. Not part of the API.
#[pyfunction]
#[pyo3(
    signature = (array, *, lossless=false, bpp=None, psnr=None, layers=Int(Ok(1)), levels=None, backend="auto"),
    text_signature = "(array, *, lossless=False, bpp=None, psnr=None, layers=1, levels=None, backend='auto')"
)]
#[allow(clippy::too_many_arguments)]
pub fn _encode_seconds<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
    lossless: bool,
    bpp: Option<f64>,
    psnr: Option<f64>,
    layers: Int,
    levels: Option<Int>,
    backend: &str,
) -> PyResult<(Bound<'py, PyBytes>, f64)> {
    let options = encode_options(lossless, bpp, psnr, layers, levels)?;
    let encoded = encode_array(py, array, &options, backend_kind(backend)?)?;
    Ok((
        PyBytes::new(py, &encoded.bytes),
        encoded.report.seconds.total,
    ))
}

/// `decode` that also returns the decoder's own seconds (its report's,
/// measured inside the library): for the Python call overhead figure of
/// python/benchmarks/zarr_bench.py. Not part of the API.
#[pyfunction]
#[pyo3(
    signature = (data, *, reduce=Int(Ok(0)), layers=None, backend="auto"),
    text_signature = "(data, *, reduce=0, layers=None, backend='auto')"
)]
pub fn _decode_seconds<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    reduce: Int,
    layers: Option<Int>,
    backend: &str,
) -> PyResult<(Bound<'py, PyAny>, f64)> {
    let decoded = decode_data(py, data, reduce, layers, backend)?;
    let seconds = decoded.report.seconds;
    Ok((array::into_numpy(py, decoded.image)?, seconds))
}
