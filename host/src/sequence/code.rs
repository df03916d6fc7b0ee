//! Coding one frame: each component is a 1-component image at its own
//! size, coded by the image codec ([`crate::codec::encode()`]) into its own
//! `.wl` codestream. The codestream validates itself (header CRC, index,
//! segment CRCs, memory budget), so the container adds only where each
//! one lies.
//!
//! Rate targets: `--bpp` is per frame, in bits per luma pixel. The image
//! codec's rate control takes a size target, not a rate-distortion slope,
//! so the frame's budget is split across components by their sample
//! counts: every component is coded at the same bits per sample,
//! `bpp * width * height / frame samples` (4:2:0 chroma gets a quarter of
//! luma's bytes each). A `--psnr` target applies to each component, so the
//! frame's PSNR over all samples reaches it too.

use super::frame::{Frame, FrameFormat};
use super::SequenceError;
use crate::backend::Backend;
use crate::codec::file::ReadOptions;
use crate::codec::{self, DecodeOptions, EncodeOptions, Image, RateTarget};

/// The options each component of a frame of `format` is coded with.
pub fn component_options(format: &FrameFormat, options: &EncodeOptions) -> EncodeOptions {
    let mut o = options.clone();
    if let RateTarget::Bpp(bpp) = options.target {
        let luma = format.width as f64 * format.height as f64;
        o.target = RateTarget::Bpp(bpp * luma / format.samples() as f64);
    }
    o
}

fn component_image(format: &FrameFormat, c: usize, plane: Vec<i32>) -> Image {
    let (width, height) = format.plane_size(c);
    Image {
        width,
        height,
        bit_depth: format.bit_depth,
        signed: false,
        planes: vec![plane],
    }
}

/// Encodes a frame: one `.wl` codestream per component.
pub fn encode_frame(
    frame: &Frame,
    format: &FrameFormat,
    options: &EncodeOptions,
    backend: &Backend,
) -> Result<Vec<Vec<u8>>, SequenceError> {
    check_frame(frame, format)?;
    let o = component_options(format, options);
    frame
        .planes
        .iter()
        .enumerate()
        .map(|(c, p)| {
            let image = component_image(format, c, p.clone());
            codec::encode_owned(image, &o, backend)
                .map(|e| e.bytes)
                .map_err(|source| SequenceError::Codec {
                    component: c,
                    source,
                })
        })
        .collect()
}

fn check_frame(frame: &Frame, format: &FrameFormat) -> Result<(), SequenceError> {
    format.validate()?;
    let ok = frame.planes.len() == format.components()
        && frame.planes.iter().enumerate().all(|(c, p)| {
            let (w, h) = format.plane_size(c);
            p.len() == w * h
        });
    match ok {
        true => Ok(()),
        false => Err(SequenceError::Format(
            "the frame's planes do not match its format".into(),
        )),
    }
}

/// Decodes a frame from its codestreams. Each must be a 1-component image
/// of its component's size and the sequence's depth; the decoder's memory
/// budget is that size, so a codestream cannot ask for more.
pub fn decode_frame(
    codestreams: &[Vec<u8>],
    format: &FrameFormat,
    backend: &Backend,
) -> Result<Frame, SequenceError> {
    if codestreams.len() != format.components() {
        return Err(SequenceError::Format(format!(
            "{} codestreams for {} components",
            codestreams.len(),
            format.components()
        )));
    }
    let mut planes = Vec::with_capacity(codestreams.len());
    for (c, bytes) in codestreams.iter().enumerate() {
        let (w, h) = format.plane_size(c);
        let options = DecodeOptions {
            read: ReadOptions {
                max_samples: (w * h) as u64,
                ..ReadOptions::default()
            },
            ..DecodeOptions::default()
        };
        let err = |source| SequenceError::Codec {
            component: c,
            source,
        };
        let d = codec::decode(bytes, &options, backend).map_err(err)?;
        let i = d.image;
        if (i.width, i.height, i.components(), i.bit_depth, i.signed)
            != (w, h, 1, format.bit_depth, false)
        {
            return Err(err(codec::CodecError::Image(format!(
                "component {c} is a {}x{}x{} {}-bit image, the sequence needs {w}x{h}x1 {}-bit unsigned",
                i.width,
                i.height,
                i.components(),
                i.bit_depth,
                format.bit_depth
            ))));
        }
        planes.extend(i.planes);
    }
    Ok(Frame { planes })
}
