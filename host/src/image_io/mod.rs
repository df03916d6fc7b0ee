//! Reading and writing images for the codec: PNG and TIFF through the
//! `image` crate, PGM/PPM (binary P5/P6 and plain P2/P3) with a small
//! reader and writer of our own because the `image` crate rescales samples
//! whose maxval is not 255 or 65535, which would lose 9- to 15-bit data.
//!
//! 8-bit files give 8-bit images and 16-bit files 16-bit images; a PGM/PPM
//! with maxval `2^b - 1` gives a `b`-bit image. Gray, gray + alpha, RGB and
//! RGBA are supported. Images of 9 to 16 bits are written in 16-bit
//! containers and images of 1 to 8 bits in 8-bit ones, samples unscaled;
//! PGM/PPM record the true maxval.
//!
//! Two forms of each: [`load`] / [`save`] for an [`Image`] (planes), and
//! [`load_interleaved`] / [`save_interleaved`] for an
//! [`crate::codec::Interleaved`] image, whose samples stay as the file
//! holds them (what `wavelane encode` and `decode` use).

mod interleaved;
mod pnm;

pub use interleaved::{
    decode_interleaved_bytes, encode_interleaved_bytes, load_interleaved, save_interleaved,
};

use std::path::Path;

use image::{DynamicImage, ImageBuffer, ImageFormat, Luma, LumaA, Rgb, Rgba};

use crate::codec::Image;

/// Errors of image I/O.
#[derive(Debug, thiserror::Error)]
pub enum ImageIoError {
    /// Reading or writing the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The `image` crate could not decode or encode it.
    #[error("{path}: {source}")]
    Image {
        /// The file.
        path: String,
        /// What failed.
        #[source]
        source: image::ImageError,
    },
    /// A PGM/PPM file is malformed.
    #[error("{path}: not a valid PGM/PPM file: {reason}")]
    Pnm {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The image cannot be stored in the requested format.
    #[error("{0}")]
    Unsupported(String),
}

/// File formats by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// `.png`
    Png,
    /// `.pgm`, `.ppm`, `.pnm`
    Pnm,
    /// `.tif`, `.tiff`
    Tiff,
}

impl FileFormat {
    /// The format of a path's extension.
    pub fn from_path(path: &Path) -> Option<FileFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "png" => Some(FileFormat::Png),
            "pgm" | "ppm" | "pnm" => Some(FileFormat::Pnm),
            "tif" | "tiff" => Some(FileFormat::Tiff),
            _ => None,
        }
    }
}

/// Reads an image file (format from the contents for PGM/PPM, else from
/// the `image` crate's detection).
pub fn load(path: &Path) -> Result<Image, ImageIoError> {
    let bytes = read_file(path)?;
    decode_bytes(&bytes).map_err(|e| with_path(e, path))
}

fn read_file(path: &Path) -> Result<Vec<u8>, ImageIoError> {
    std::fs::read(path).map_err(|source| ImageIoError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// A decoding error of bytes in memory, named after the file they came
/// from.
fn with_path(e: ImageIoError, path: &Path) -> ImageIoError {
    let name = path.display().to_string();
    match e {
        ImageIoError::Image { source, .. } => ImageIoError::Image { path: name, source },
        ImageIoError::Pnm { reason, .. } => ImageIoError::Pnm { path: name, reason },
        other => other,
    }
}

fn pnm_error(reason: String) -> ImageIoError {
    ImageIoError::Pnm {
        path: "<memory>".into(),
        reason,
    }
}

fn unsupported_colour(colour: image::ColorType) -> ImageIoError {
    ImageIoError::Unsupported(format!(
        "{colour:?} images are not supported (8- or 16-bit integer gray, gray+alpha, RGB or RGBA only)"
    ))
}

/// Decodes an image file held in memory.
pub fn decode_bytes(bytes: &[u8]) -> Result<Image, ImageIoError> {
    if pnm::looks_like_pnm(bytes) {
        return pnm::decode(bytes).map_err(pnm_error);
    }
    let dynamic = image::load_from_memory(bytes).map_err(|source| ImageIoError::Image {
        path: "<memory>".into(),
        source,
    })?;
    from_dynamic(dynamic)
}

/// Converts an `image` crate image (8- or 16-bit gray, gray + alpha, RGB,
/// RGBA).
pub fn from_dynamic(img: DynamicImage) -> Result<Image, ImageIoError> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let (bit_depth, channels, samples): (u8, usize, Vec<i32>) = match img {
        DynamicImage::ImageLuma8(b) => (8, 1, b.into_raw().into_iter().map(i32::from).collect()),
        DynamicImage::ImageLumaA8(b) => (8, 2, b.into_raw().into_iter().map(i32::from).collect()),
        DynamicImage::ImageRgb8(b) => (8, 3, b.into_raw().into_iter().map(i32::from).collect()),
        DynamicImage::ImageRgba8(b) => (8, 4, b.into_raw().into_iter().map(i32::from).collect()),
        DynamicImage::ImageLuma16(b) => (16, 1, b.into_raw().into_iter().map(i32::from).collect()),
        DynamicImage::ImageLumaA16(b) => (16, 2, b.into_raw().into_iter().map(i32::from).collect()),
        DynamicImage::ImageRgb16(b) => (16, 3, b.into_raw().into_iter().map(i32::from).collect()),
        DynamicImage::ImageRgba16(b) => (16, 4, b.into_raw().into_iter().map(i32::from).collect()),
        other => return Err(unsupported_colour(other.color())),
    };
    Ok(Image {
        width: w,
        height: h,
        bit_depth,
        signed: false,
        planes: deinterleave(&samples, channels),
    })
}

pub(crate) fn deinterleave(samples: &[i32], channels: usize) -> Vec<Vec<i32>> {
    // Whole pixels at a time into preallocated planes: a plain indexed
    // copy (an iterator stepping by `channels` through the samples was
    // several times slower, and this runs serially before any parallel
    // stage).
    (0..channels)
        .map(|c| {
            samples
                .chunks_exact(channels)
                .map(|pixel| pixel[c])
                .collect()
        })
        .collect()
}

fn interleave<T: Copy>(image: &Image, convert: impl Fn(i32) -> T) -> Vec<T> {
    let n = image.width * image.height;
    let mut out = Vec::with_capacity(n * image.planes.len());
    for i in 0..n {
        for p in &image.planes {
            out.push(convert(p[i]));
        }
    }
    out
}

/// Converts to an `image` crate image (8-bit container up to 8 bits, else
/// 16-bit; samples unscaled). Signed images are not representable.
pub fn to_dynamic(image: &Image) -> Result<DynamicImage, ImageIoError> {
    if image.signed {
        return Err(ImageIoError::Unsupported(
            "signed samples cannot be written to an image file".into(),
        ));
    }
    let (w, h) = (image.width as u32, image.height as u32);
    let bad = || ImageIoError::Unsupported("image buffer size mismatch".into());
    Ok(if image.bit_depth <= 8 {
        let raw = interleave(image, |v| v.clamp(0, 255) as u8);
        match image.planes.len() {
            1 => DynamicImage::ImageLuma8(
                ImageBuffer::<Luma<u8>, _>::from_raw(w, h, raw).ok_or_else(bad)?,
            ),
            2 => DynamicImage::ImageLumaA8(
                ImageBuffer::<LumaA<u8>, _>::from_raw(w, h, raw).ok_or_else(bad)?,
            ),
            3 => DynamicImage::ImageRgb8(
                ImageBuffer::<Rgb<u8>, _>::from_raw(w, h, raw).ok_or_else(bad)?,
            ),
            4 => DynamicImage::ImageRgba8(
                ImageBuffer::<Rgba<u8>, _>::from_raw(w, h, raw).ok_or_else(bad)?,
            ),
            n => return Err(ImageIoError::Unsupported(format!("{n} components"))),
        }
    } else {
        let raw = interleave(image, |v| v.clamp(0, 65535) as u16);
        match image.planes.len() {
            1 => DynamicImage::ImageLuma16(
                ImageBuffer::<Luma<u16>, _>::from_raw(w, h, raw).ok_or_else(bad)?,
            ),
            2 => DynamicImage::ImageLumaA16(
                ImageBuffer::<LumaA<u16>, _>::from_raw(w, h, raw).ok_or_else(bad)?,
            ),
            3 => DynamicImage::ImageRgb16(
                ImageBuffer::<Rgb<u16>, _>::from_raw(w, h, raw).ok_or_else(bad)?,
            ),
            4 => DynamicImage::ImageRgba16(
                ImageBuffer::<Rgba<u16>, _>::from_raw(w, h, raw).ok_or_else(bad)?,
            ),
            n => return Err(ImageIoError::Unsupported(format!("{n} components"))),
        }
    })
}

/// Encodes an image in `format`.
pub fn encode_bytes(image: &Image, format: FileFormat) -> Result<Vec<u8>, ImageIoError> {
    if format == FileFormat::Pnm {
        return pnm::encode(image).map_err(ImageIoError::Unsupported);
    }
    if format == FileFormat::Tiff && image.planes.len() == 2 {
        // The `image` crate's TIFF encoder has no gray + alpha colour type.
        return Err(ImageIoError::Unsupported(
            "TIFF output of gray + alpha (2-component) images is not supported; use .png".into(),
        ));
    }
    let dynamic = to_dynamic(image)?;
    let mut out = std::io::Cursor::new(Vec::new());
    let f = if format == FileFormat::Png {
        ImageFormat::Png
    } else {
        ImageFormat::Tiff
    };
    dynamic
        .write_to(&mut out, f)
        .map_err(|source| ImageIoError::Image {
            path: "<memory>".into(),
            source,
        })?;
    Ok(out.into_inner())
}

/// Writes an image, the format chosen by the extension (`.png`, `.pgm`,
/// `.ppm`, `.pnm`, `.tif`, `.tiff`).
pub fn save(image: &Image, path: &Path) -> Result<(), ImageIoError> {
    let bytes = encode_bytes(image, format_of(path)?)?;
    write_file(path, &bytes)
}

/// The format of `path`'s extension, or an error naming the known ones.
fn format_of(path: &Path) -> Result<FileFormat, ImageIoError> {
    FileFormat::from_path(path).ok_or_else(|| {
        ImageIoError::Unsupported(format!(
            "{}: unknown image extension (use .png, .pgm, .ppm, .pnm, .tif or .tiff)",
            path.display()
        ))
    })
}

/// Writes `bytes` to `path` atomically: a failed or killed write never
/// leaves a partial image under the final name (crate::output).
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ImageIoError> {
    crate::output::write_atomic(path, bytes).map_err(|source| ImageIoError::Io {
        path: path.display().to_string(),
        source,
    })
}
