//! Reading and writing an [`Interleaved`] image: its samples are in the
//! layout PNG, TIFF and PGM/PPM store, so the readers and writers take
//! them as they are (no `i32` planes to make, or to clamp and interleave,
//! as [`super::load`] and [`super::save`] do for an
//! [`crate::codec::Image`]). The images and files are the same as theirs.

use std::path::Path;

use image::{ExtendedColorType, ImageFormat};
use rayon::prelude::*;

use super::{FileFormat, ImageIoError};
use crate::codec::{Interleaved, SampleBuf};

/// Reads an image file as [`super::load`] does, into interleaved samples.
pub fn load_interleaved(path: &Path) -> Result<Interleaved, ImageIoError> {
    let bytes = super::read_file(path)?;
    decode_interleaved_bytes(&bytes).map_err(|e| super::with_path(e, path))
}

/// Decodes an image file held in memory into interleaved samples.
pub fn decode_interleaved_bytes(bytes: &[u8]) -> Result<Interleaved, ImageIoError> {
    if super::pnm::looks_like_pnm(bytes) {
        if let Some(image) = binary_pnm(bytes) {
            return image;
        }
        // Plain (text) PGM/PPM: through the planes.
        return Ok(Interleaved::from_image(&super::decode_bytes(bytes)?));
    }
    let dynamic = image::load_from_memory(bytes).map_err(|source| ImageIoError::Image {
        path: "<memory>".into(),
        source,
    })?;
    let (w, h) = (dynamic.width() as usize, dynamic.height() as usize);
    let image = |components: usize, bit_depth: u8, samples: SampleBuf| Interleaved {
        width: w,
        height: h,
        components,
        bit_depth,
        signed: false,
        samples,
    };
    use image::DynamicImage as D;
    Ok(match dynamic {
        D::ImageLuma8(b) => image(1, 8, SampleBuf::U8(b.into_raw())),
        D::ImageLumaA8(b) => image(2, 8, SampleBuf::U8(b.into_raw())),
        D::ImageRgb8(b) => image(3, 8, SampleBuf::U8(b.into_raw())),
        D::ImageRgba8(b) => image(4, 8, SampleBuf::U8(b.into_raw())),
        D::ImageLuma16(b) => image(1, 16, SampleBuf::U16(b.into_raw())),
        D::ImageLumaA16(b) => image(2, 16, SampleBuf::U16(b.into_raw())),
        D::ImageRgb16(b) => image(3, 16, SampleBuf::U16(b.into_raw())),
        D::ImageRgba16(b) => image(4, 16, SampleBuf::U16(b.into_raw())),
        other => return Err(super::unsupported_colour(other.color())),
    })
}

/// A binary PGM/PPM's samples as they are (8-bit) or from big-endian
/// (16-bit) on all cores, checked against maxval; `None` for a plain
/// (text) file. Header errors are the planar reader's.
fn binary_pnm(bytes: &[u8]) -> Option<Result<Interleaved, ImageIoError>> {
    let header = match super::pnm::binary_header(bytes)? {
        Ok(h) => h,
        Err(reason) => return Some(Err(super::pnm_error(reason))),
    };
    let super::pnm::BinaryHeader {
        width,
        height,
        channels,
        maxval,
        data,
    } = header;
    let samples = if maxval > 255 {
        let mut v = vec![0u16; data.len() / 2];
        v.par_chunks_mut(1 << 15)
            .zip(data.par_chunks(1 << 16))
            .for_each(|(dst, src)| {
                for (d, s) in dst.iter_mut().zip(src.chunks_exact(2)) {
                    *d = u16::from_be_bytes([s[0], s[1]]);
                }
            });
        SampleBuf::U16(v)
    } else {
        SampleBuf::U8(data.to_vec())
    };
    let image = Interleaved {
        width,
        height,
        components: channels,
        bit_depth: (32 - maxval.leading_zeros()) as u8,
        signed: false,
        samples,
    };
    // Every sample at most maxval: what the bit depth's range check says
    // when maxval is 2^b - 1; otherwise the planar reader's exact check.
    if (maxval + 1).is_power_of_two() && image.validate().is_ok() {
        return Some(Ok(image));
    }
    Some(super::decode_bytes(bytes).map(|im| Interleaved::from_image(&im)))
}

/// Encodes `image` in `format`.
pub fn encode_interleaved_bytes(
    image: &Interleaved,
    format: FileFormat,
) -> Result<Vec<u8>, ImageIoError> {
    let unsupported = |s: String| Err(ImageIoError::Unsupported(s));
    if image.signed {
        return unsupported("signed samples cannot be written to an image file".into());
    }
    let n = image.width * image.height * image.components;
    if image.samples.len() != n {
        return unsupported(format!(
            "{} samples for a {}x{} image of {} components",
            image.samples.len(),
            image.width,
            image.height,
            image.components
        ));
    }
    let wide = matches!(image.samples, SampleBuf::U16(_));
    if format == FileFormat::Pnm {
        return pnm(image, wide);
    }
    let colour = match (image.components, wide) {
        (1, false) => ExtendedColorType::L8,
        (2, false) => ExtendedColorType::La8,
        (3, false) => ExtendedColorType::Rgb8,
        (4, false) => ExtendedColorType::Rgba8,
        (1, true) => ExtendedColorType::L16,
        (2, true) => ExtendedColorType::La16,
        (3, true) => ExtendedColorType::Rgb16,
        (4, true) => ExtendedColorType::Rgba16,
        (c, _) => return unsupported(format!("{c} components")),
    };
    if format == FileFormat::Tiff && image.components == 2 {
        // The `image` crate's TIFF encoder has no gray + alpha colour type.
        return unsupported(
            "TIFF output of gray + alpha (2-component) images is not supported; use .png".into(),
        );
    }
    let f = match format {
        FileFormat::Png => ImageFormat::Png,
        _ => ImageFormat::Tiff,
    };
    let mut out = std::io::Cursor::new(Vec::new());
    image::write_buffer_with_format(
        &mut out,
        image.samples.as_bytes(),
        image.width as u32,
        image.height as u32,
        colour,
        f,
    )
    .map_err(|source| ImageIoError::Image {
        path: "<memory>".into(),
        source,
    })?;
    Ok(out.into_inner())
}

/// A binary PGM/PPM with the true maxval: the samples' bytes as they are
/// (8-bit) or big-endian (16-bit), converted on all cores.
fn pnm(image: &Interleaved, wide: bool) -> Result<Vec<u8>, ImageIoError> {
    let magic = match image.components {
        1 => "P5",
        3 => "P6",
        n => {
            return Err(ImageIoError::Unsupported(format!(
                "PGM/PPM hold 1 or 3 components, not {n} (use .png or .tif)"
            )))
        }
    };
    let maxval = (1u32 << image.bit_depth) - 1;
    let mut out = format!("{magic}\n{} {}\n{maxval}\n", image.width, image.height).into_bytes();
    let start = out.len();
    match &image.samples {
        SampleBuf::U8(v) if !wide => out.extend_from_slice(v),
        SampleBuf::U16(v) => {
            out.resize(start + 2 * v.len(), 0);
            (out[start..].par_chunks_mut(1 << 16))
                .zip(v.par_chunks(1 << 15))
                .for_each(|(dst, src)| {
                    for (d, s) in dst.chunks_exact_mut(2).zip(src) {
                        d.copy_from_slice(&s.to_be_bytes());
                    }
                });
        }
        _ => {
            return Err(ImageIoError::Unsupported(
                "signed samples cannot be written to an image file".into(),
            ))
        }
    }
    Ok(out)
}

/// Writes `image`, the format chosen by the extension, atomically (as
/// [`super::save`]).
pub fn save_interleaved(image: &Interleaved, path: &Path) -> Result<(), ImageIoError> {
    let format = super::format_of(path)?;
    let bytes = encode_interleaved_bytes(image, format)?;
    super::write_file(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Image;

    /// Reading gives the planar reader's image, interleaved, or its error:
    /// PNG and TIFF at 8 and 16 bits, binary PGM/PPM at maxval 2^b - 1
    /// and other maxvals, plain PGM/PPM, and damaged files.
    #[test]
    fn interleaved_reads_equal_the_planar_reader() {
        let mut files: Vec<Vec<u8>> = Vec::new();
        for (depth, comps) in [(8u8, 3usize), (8, 1), (16, 3), (16, 4), (8, 2), (12, 1)] {
            let image = Image::from_fn(23, 9, comps, depth, |x, y, c| {
                ((x * 41 + y * 13 + c * 3) % (1 << depth)) as i32
            });
            for format in [FileFormat::Png, FileFormat::Tiff, FileFormat::Pnm] {
                if let Ok(bytes) = super::super::encode_bytes(&image, format) {
                    files.push(bytes);
                }
            }
        }
        files.push(b"P5\n3 1\n1000\n\x00\x01\x03\xe8\x00\x07".to_vec()); // maxval 1000
        files.push(b"P5\n3 1\n1000\n\x00\x01\x03\xe9\x00\x07".to_vec()); // 1001 > maxval
        files.push(b"P6\n2 1\n100\n\x01\x02\x03\x04\xc8\x06".to_vec()); // 200 > maxval
        files.push(b"P3\n2 1\n255\n1 2 3 4 5 6\n".to_vec()); // plain
        files.push(b"P6\n2 1\n255\n\x01\x02".to_vec()); // truncated
        files.push(b"P6\n0 1\n255\n".to_vec()); // no pixels
        let png = files[0].clone();
        files.push(png[..png.len() / 2].to_vec()); // a cut PNG
        for (k, bytes) in files.iter().enumerate() {
            let want = super::super::decode_bytes(bytes).map(|im| Interleaved::from_image(&im));
            let got = decode_interleaved_bytes(bytes);
            match (want, got) {
                (Ok(w), Ok(g)) => assert!(w == g, "file {k}"),
                (Err(w), Err(g)) => assert_eq!(w.to_string(), g.to_string(), "file {k}"),
                (w, g) => panic!("file {k}: {:?} / {:?}", w.map(|_| ()), g.map(|_| ())),
            }
        }
    }

    /// Every format and storage writes the bytes `save` writes for the
    /// same image as planes.
    #[test]
    fn interleaved_files_equal_the_planar_writers() {
        for (depth, comps) in [(8u8, 3usize), (8, 1), (12, 3), (16, 1), (6, 4), (10, 2)] {
            let image = Image::from_fn(19, 7, comps, depth, |x, y, c| {
                ((x * 37 + y * 11 + c * 5) % (1 << depth)) as i32
            });
            let inter = Interleaved::from_image(&image);
            for format in [FileFormat::Png, FileFormat::Tiff, FileFormat::Pnm] {
                let want = super::super::encode_bytes(&image, format);
                let got = encode_interleaved_bytes(&inter, format);
                match (want, got) {
                    (Ok(w), Ok(g)) => assert!(w == g, "{depth} bits, {comps}, {format:?}"),
                    (Err(w), Err(g)) => assert_eq!(w.to_string(), g.to_string()),
                    (w, g) => panic!("{depth} bits, {comps}, {format:?}: {w:?} / {g:?}"),
                }
            }
        }
        let mut short = Interleaved::from_image(&Image::from_fn(4, 4, 3, 8, |_, _, _| 1));
        short.samples = SampleBuf::U8(vec![0; 5]);
        assert!(encode_interleaved_bytes(&short, FileFormat::Png).is_err());
    }
}
