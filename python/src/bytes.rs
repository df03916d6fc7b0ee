//! Bytes-like arguments (`decode`, `info`).
//!
//! `bytes` are immutable, so they are read in place while the GIL is
//! released. Any other bytes-like object (bytearray, memoryview, a numpy
//! array) could be changed by another Python thread meanwhile, so its
//! bytes are copied first; compressed data is small next to the image it
//! decodes to. (The buffer protocol is not in the abi3 API before Python
//! 3.11, so numpy's `frombuffer` reads such objects.)

use numpy::{PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Calls `f` with the bytes of `data`.
pub fn with_bytes<R>(data: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> PyResult<R>) -> PyResult<R> {
    if let Ok(b) = data.cast::<PyBytes>() {
        return f(b.as_bytes());
    }
    let not_bytes = || {
        PyValueError::new_err(format!(
            "expected bytes or a bytes-like object (bytearray, memoryview, contiguous numpy array), got {}",
            data.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    };
    let py = data.py();
    let view = py
        .import("numpy")?
        .call_method1("frombuffer", (data, "uint8"))
        .map_err(|_| not_bytes())?;
    let array: PyReadonlyArray1<'_, u8> = view.extract().map_err(|_| not_bytes())?;
    let copy = match array.as_slice() {
        Ok(s) => s.to_vec(),
        Err(_) => array.as_array().iter().copied().collect(),
    };
    debug_assert_eq!(copy.len(), array.len());
    f(&copy)
}
