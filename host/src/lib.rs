//! # wavelane
//!
//! The host side of wavelane: the algorithms of [`wavelane_core`] run on every
//! CPU core (rayon) or, with the `gpu` feature, as Vulkan compute shaders
//! (vulkano), plus image I/O, the `.wl` file format and rate control. The
//! `wavelane` command-line tool is the separate `wavelane-cli` crate (`cli/`).
//!
//! Encode and decode an image on the CPU backend:
//!
//! ```
//! use wavelane::{decode, encode, Backend, DecodeOptions, EncodeOptions, Image};
//!
//! // A 40x24 gray 8-bit gradient.
//! let image = Image::from_fn(40, 24, 1, 8, |x, y, _| ((x * 5 + y * 3) % 256) as i32);
//! let encoded = encode(&image, &EncodeOptions::lossless(), &Backend::Cpu)?;
//! let decoded = decode(&encoded.bytes, &DecodeOptions::default(), &Backend::Cpu)?;
//! assert_eq!(decoded.image, image);
//! # Ok::<(), wavelane::CodecError>(())
//! ```
//!
//! Pick where work runs with [`Backend::select`] (`cpu`, `gpu` or `auto`).
//!
//! ## Features
//!
//! - `gpu` (default): the Vulkan backend, `Backend::Gpu`, and the shaders
//!   that `build.rs` compiles with `glslc`. Without it the library is
//!   CPU-only and builds with no shader compiler or Vulkan loader; asking
//!   for the GPU is then [`backend::BackendError::GpuNotBuilt`].
//! - `bench`: the throughput measurements behind `wavelane bench` and the
//!   criterion benches (`bench`).
//! - `internals`: items that exist for the workspace tests and fuzz targets
//!   only; no stable API.
//!
//! The library prints nothing: notices (the `auto` backend falling back to
//! the CPU, a `WAVELANE_SIMD` cap) go through the [`log`] facade.

#![deny(missing_docs)]

/// Declares an item that the workspace tests and fuzz targets reach but that
/// is no part of the API: `pub` with the `internals` feature, `pub(crate)`
/// without, at the same path either way.
macro_rules! internal {
    ($(#[$meta:meta])* pub $($item:tt)*) => {
        #[cfg(feature = "internals")]
        $(#[$meta])*
        pub $($item)*
        #[cfg(not(feature = "internals"))]
        $(#[$meta])*
        #[allow(dead_code)]
        pub(crate) $($item)*
    };
}

pub mod backend;
#[cfg(feature = "bench")]
pub mod bench;
pub mod bpc;
pub mod codec;
pub mod dwt;
pub mod h264;
pub mod image_io;
mod memory;
pub mod output;
pub mod sequence;
#[cfg(feature = "gpu")]
pub mod shaders;
pub mod verify;
pub mod vle;
pub mod volume;

pub use backend::{Backend, BackendError, BackendKind};
pub use codec::{
    decode, decode_interleaved, encode, encode_interleaved, CodecError, DecodeOptions, Decoded,
    EncodeOptions, Encoded, Image, Interleaved, RateTarget,
};
pub use image_io::ImageIoError;
