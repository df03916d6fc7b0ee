//! The extension module `wavelane._wavelane`: `encode`, `decode` and `info`
//! of the wavelane image codec for numpy arrays. The Python package
//! (`python/wavelane/`) re-exports them and adds the numcodecs codec and
//! the Dask helpers; docs/python.md is the user's guide.
//!
//! Every call checks its arguments under the GIL (a bad one is a
//! `ValueError`), then releases the GIL for the copy of the samples, the
//! backend selection and the coding, so Python threads code in parallel.
//! The GPU backend is the process's one shared device
//! (`wavelane::backend::Gpu::shared`), opened by the first call that takes
//! it and reused by every later one.

use std::path::PathBuf;

use pyo3::exceptions::{PyOSError, PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use wavelane::backend::{BackendKind, Job};
use wavelane::codec::file::{Container, ReadOptions};
use wavelane::codec::format::wavelet_name;
use wavelane::codec::header::Header;
use wavelane::{Backend, DecodeOptions, EncodeOptions, RateTarget};
use wavelane_core::dwt::{level_size, Wavelet};

mod array;
mod bytes;
mod pool;
mod timing;

pyo3::create_exception!(
    wavelane,
    WavelaneError,
    PyValueError,
    "An error of the wavelane library (a corrupt or truncated file, options \
     the image or file cannot honour, no GPU for backend=\"gpu\"), carrying \
     its message. A subclass of ValueError."
);

/// A library error as a `WavelaneError` carrying its message.
fn lib_err(e: impl std::fmt::Display) -> PyErr {
    WavelaneError::new_err(e.to_string())
}

fn backend_kind(name: &str) -> PyResult<BackendKind> {
    name.parse()
        .map_err(|e: wavelane::backend::UnknownBackend| PyValueError::new_err(e.to_string()))
}

/// A Python int argument of any size. Python ints are unbounded: one
/// beyond `i64` is kept as its text, so that the range check reports it as
/// a `ValueError` like any other out-of-range value (not an
/// `OverflowError`).
#[derive(Debug, Clone)]
struct Int(Result<i64, String>);

impl<'a, 'py> FromPyObject<'a, 'py> for Int {
    type Error = PyErr;

    fn extract(obj: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        match obj.extract::<i64>() {
            Ok(v) => Ok(Int(Ok(v))),
            Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
                Ok(Int(Err(obj.str()?.to_string())))
            }
            Err(e) => Err(e),
        }
    }
}

/// An integer argument that must lie in `range`, else a `ValueError`.
fn in_range(name: &str, value: &Int, range: std::ops::RangeInclusive<i64>) -> PyResult<u8> {
    match &value.0 {
        Ok(v) if range.contains(v) => Ok(*v as u8),
        other => Err(PyValueError::new_err(format!(
            "{name}={} is outside {}..={}",
            match other {
                Ok(v) => v.to_string(),
                Err(text) => text.clone(),
            },
            range.start(),
            range.end()
        ))),
    }
}

fn positive(name: &str, value: Option<f64>) -> PyResult<Option<f64>> {
    match value {
        Some(v) if !(v.is_finite() && v > 0.0) => Err(PyValueError::new_err(format!(
            "{name}={v} must be a finite number > 0"
        ))),
        v => Ok(v),
    }
}

/// The encoder options of `encode` and `encode_file`'s arguments.
fn encode_options(
    lossless: bool,
    bpp: Option<f64>,
    psnr: Option<f64>,
    layers: Int,
    levels: Option<Int>,
) -> PyResult<EncodeOptions> {
    let bpp = positive("bpp", bpp)?;
    let psnr = positive("psnr", psnr)?;
    let target = match (lossless, bpp, psnr) {
        (_, Some(_), Some(_)) => {
            return Err(PyValueError::new_err("give bpp or psnr, not both"));
        }
        (true, Some(_), _) | (true, _, Some(_)) => {
            return Err(PyValueError::new_err(
                "lossless=True cannot be combined with bpp or psnr",
            ));
        }
        (_, Some(b), None) => RateTarget::Bpp(b),
        (_, None, Some(p)) => RateTarget::Psnr(p),
        (_, None, None) => RateTarget::Lossless,
    };
    Ok(EncodeOptions {
        target,
        layers: in_range("layers", &layers, 1..=32)?,
        levels: levels.map(|l| in_range("levels", &l, 0..=16)).transpose()?,
        ..EncodeOptions::default()
    })
}

/// Encodes `image` on a rayon worker thread ([`pool::run`]): the calling
/// thread where the pool has one thread, else a thread of the pool.
fn encode_image(
    image: wavelane::Interleaved,
    options: &EncodeOptions,
    kind: BackendKind,
) -> PyResult<wavelane::Encoded> {
    let job = Job::Encode {
        samples: image.len() as u64,
        lossless: options.target == RateTarget::Lossless && options.layers == 1,
    };
    let backend = Backend::select_for(kind, job).map_err(lib_err)?;
    pool::run(|| wavelane::codec::encode_interleaved(&image, options, &backend)).map_err(lib_err)
}

/// Checks and borrows `array`, then encodes it without the GIL.
fn encode_array(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
    options: &EncodeOptions,
    kind: BackendKind,
) -> PyResult<wavelane::Encoded> {
    let borrowed = array::borrow(array)?;
    let pixels = borrowed.pixels();
    py.detach(|| encode_image(pixels.into_interleaved(), options, kind))
}

/// Encodes an image file (PNG, PNM or TIFF, 8 or 16 bits, 1 to 4
/// components) into a `.wl` file, as `wavelane encode SRC -o DST`: the
/// output is written to a temporary file next to `dst` and renamed over it
/// only when complete, so a killed process never leaves a partial `dst`
/// (a later write of the same `dst` removes its stale temporaries).
/// Options as `encode`. Returns the number of bytes written. The GIL is
/// released throughout.
///
/// >>> import numpy as np, wavelane, tempfile, os
/// >>> d = tempfile.mkdtemp()
/// >>> src = os.path.join(d, "a.pgm")
/// >>> with open(src, "wb") as f:
/// ...     _ = f.write(b"P5 4 2 255\n" + bytes(range(8)))
/// >>> n = wavelane.encode_file(src, os.path.join(d, "a.wl"), lossless=True)
/// >>> wavelane.decode(open(os.path.join(d, "a.wl"), "rb").read()).tolist()
/// [[0, 1, 2, 3], [4, 5, 6, 7]]
#[pyfunction]
#[pyo3(
    signature = (src, dst, *, lossless=false, bpp=None, psnr=None, layers=Int(Ok(1)), levels=None, backend="auto"),
    text_signature = "(src, dst, *, lossless=False, bpp=None, psnr=None, layers=1, levels=None, backend='auto')"
)]
#[allow(clippy::too_many_arguments)]
fn encode_file(
    py: Python<'_>,
    src: PathBuf,
    dst: PathBuf,
    lossless: bool,
    bpp: Option<f64>,
    psnr: Option<f64>,
    layers: Int,
    levels: Option<Int>,
    backend: &str,
) -> PyResult<usize> {
    let options = encode_options(lossless, bpp, psnr, layers, levels)?;
    let kind = backend_kind(backend)?;
    py.detach(|| {
        let image = wavelane::image_io::load_interleaved(&src)
            .map_err(|e| lib_err(format!("{}: {e}", src.display())))?;
        let encoded = encode_image(image, &options, kind)?;
        wavelane::output::write_atomic(&dst, &encoded.bytes)
            .map_err(|e| PyOSError::new_err(format!("{}: {e}", dst.display())))?;
        Ok(encoded.bytes.len())
    })
}

/// Encodes an image into a `.wl` file's bytes.
///
/// `array` is a numpy array of dtype uint8 or uint16 (coded at 8 or 16
/// bits), shaped H x W (gray) or H x W x C with C in 1..=4; any strides.
/// With neither `bpp` nor `psnr` the encode is lossless (as
/// `wavelane encode`); `lossless=True` says so explicitly and cannot be
/// combined with a target. `bpp` caps the file at that many bits per pixel;
/// `psnr` asks for the smallest file reaching that PSNR (dB). `layers`
/// (1..=32) are quality layers, `levels` the DWT levels (default
/// min(5, what the size allows)). `backend` is "auto", "cpu" or "gpu".
/// The GIL is released while coding.
///
/// >>> import numpy as np, wavelane
/// >>> img = (np.arange(48 * 64) % 251).astype(np.uint8).reshape(48, 64)
/// >>> data = wavelane.encode(img, lossless=True)
/// >>> bool((wavelane.decode(data) == img).all())
/// True
#[pyfunction]
#[pyo3(
    signature = (array, *, lossless=false, bpp=None, psnr=None, layers=Int(Ok(1)), levels=None, backend="auto"),
    text_signature = "(array, *, lossless=False, bpp=None, psnr=None, layers=1, levels=None, backend='auto')"
)]
#[allow(clippy::too_many_arguments)]
fn encode<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
    lossless: bool,
    bpp: Option<f64>,
    psnr: Option<f64>,
    layers: Int,
    levels: Option<Int>,
    backend: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let options = encode_options(lossless, bpp, psnr, layers, levels)?;
    let encoded = encode_array(py, array, &options, backend_kind(backend)?)?;
    Ok(PyBytes::new(py, &encoded.bytes))
}

/// Decodes a `.wl` file (or any prefix of one that holds its header) into a
/// numpy array.
///
/// `data` is bytes or any bytes-like object (bytearray, memoryview, a
/// uint8 numpy array). The result is H x W for one component, else
/// H x W x C; uint8 for files of up to 8 bits, else uint16 (int8/int16
/// for signed files). `reduce` drops that many finest resolutions (each
/// halves the size, rounding up); `layers` decodes only the first quality
/// layers. `backend` is "auto", "cpu" or "gpu". The GIL is released while
/// decoding.
///
/// >>> import numpy as np, wavelane
/// >>> img = np.full((40, 30, 3), 7, np.uint16)
/// >>> wavelane.decode(wavelane.encode(img), reduce=1).shape
/// (20, 15, 3)
#[pyfunction]
#[pyo3(
    signature = (data, *, reduce=Int(Ok(0)), layers=None, backend="auto"),
    text_signature = "(data, *, reduce=0, layers=None, backend='auto')"
)]
fn decode<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    reduce: Int,
    layers: Option<Int>,
    backend: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let decoded = decode_data(py, data, reduce, layers, backend)?;
    array::into_numpy(py, decoded.image)
}

/// Checks `decode`'s arguments, then decodes without the GIL.
fn decode_data(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    reduce: Int,
    layers: Option<Int>,
    backend: &str,
) -> PyResult<wavelane::codec::Decoded<wavelane::Interleaved>> {
    let options = DecodeOptions {
        reduce: in_range("reduce", &reduce, 0..=16)?,
        layers: layers.map(|l| in_range("layers", &l, 1..=32)).transpose()?,
        ..DecodeOptions::default()
    };
    let kind = backend_kind(backend)?;
    bytes::with_bytes(data, |bytes| {
        py.detach(|| {
            let backend =
                Backend::select_for(kind, decode_job(bytes, options.reduce)).map_err(lib_err)?;
            pool::run(|| wavelane::codec::decode_interleaved(bytes, &options, &backend))
                .map_err(lib_err)
        })
    })
}

/// The job `auto` weighs for a decode (as `wavelane decode`): the samples
/// at `reduce` and whether the file uses the 5/3. A header that does not
/// parse is an empty job: the decoder then says what is wrong with it.
fn decode_job(bytes: &[u8], reduce: u8) -> Job {
    let Ok((h, _, _)) = Header::parse(bytes) else {
        return Job::Decode {
            samples: 0,
            reversible: true,
        };
    };
    let (w, hh) = level_size(h.width as usize, h.height as usize, reduce.into());
    Job::Decode {
        samples: (w * hh) as u64 * h.components as u64,
        reversible: h.wavelet == Wavelet::Cdf53,
    }
}

/// What a `.wl` file holds, without decoding it: a dict with `width`,
/// `height`, `components`, `bit_depth`, `signed`, `dtype` and `shape` (what
/// `decode` returns), `wavelet`, `levels`, `layers`, `codeblock_height`,
/// `colour_transform`, `bytes` (given), `full_bytes` (of the whole file),
/// `complete` (False for a truncated prefix) and `format_version`.
///
/// >>> import numpy as np, wavelane
/// >>> wavelane.info(wavelane.encode(np.zeros((8, 9), np.uint8)))["shape"]
/// (8, 9)
#[pyfunction]
fn info<'py>(py: Python<'py>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    bytes::with_bytes(data, |bytes| {
        let c = Container::parse(bytes, ReadOptions::default()).map_err(lib_err)?;
        let h = &c.header;
        let d = PyDict::new(py);
        let (width, height, components) =
            (h.width as usize, h.height as usize, h.components as usize);
        d.set_item("width", width)?;
        d.set_item("height", height)?;
        d.set_item("components", components)?;
        d.set_item("bit_depth", h.bit_depth)?;
        d.set_item("signed", h.signed)?;
        let dtype = match (h.signed, h.bit_depth <= 8) {
            (false, true) => "uint8",
            (false, false) => "uint16",
            (true, true) => "int8",
            (true, false) => "int16",
        };
        d.set_item("dtype", dtype)?;
        if components > 1 {
            d.set_item("shape", (height, width, components))?;
        } else {
            d.set_item("shape", (height, width))?;
        }
        d.set_item("wavelet", wavelet_name(h.wavelet))?;
        d.set_item("levels", h.levels)?;
        d.set_item("layers", h.layers)?;
        d.set_item("codeblock_height", h.codeblock_height)?;
        d.set_item("colour_transform", h.colour.name())?;
        d.set_item("bytes", bytes.len())?;
        d.set_item("full_bytes", c.full_len)?;
        d.set_item("complete", c.is_complete())?;
        d.set_item("format_version", c.version)?;
        Ok(d)
    })
}

/// The wavelane image codec (DWT + BPC-PaCo) for numpy arrays.
#[pymodule]
fn _wavelane(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode, m)?)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(encode_file, m)?)?;
    m.add_function(wrap_pyfunction!(timing::_encode_seconds, m)?)?;
    m.add_function(wrap_pyfunction!(timing::_decode_seconds, m)?)?;
    m.add("WavelaneError", m.py().get_type::<WavelaneError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
