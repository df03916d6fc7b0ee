//! Writing an [`Interleaved`] image: its samples are already in the
//! layout PNG, TIFF and PGM/PPM store, so the writers take them as they
//! are (no `i32` planes to clamp and interleave, as [`super::save`] does
//! for an [`crate::codec::Image`]). The files are the same bytes as
//! [`super::save`] writes for the same image.

use std::path::Path;

use image::{ExtendedColorType, ImageFormat};
use rayon::prelude::*;

use super::{FileFormat, ImageIoError};
use crate::codec::{Interleaved, SampleBuf};

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
