//! The decoder: [`decode`] is the list of stages (docs/codec.md,
//! "Decoder"), for whole files, truncated prefixes, reduced resolutions
//! and fewer layers. Each stage is a call into a module of
//! [`super::stages`], which runs it on the CPU or the GPU.

use std::time::Instant;

use super::error::CodecError;
use super::file::Container;
use super::image::Image;
use super::options::DecodeOptions;
use super::progressive::{self, Selection};
use super::report::{DecodeReport, Decoded};
use super::stages::{self, entropy, quantize::Decodable};
use crate::backend::Backend;

/// Decodes a `.wl` file or any prefix of one that holds its main header.
pub fn decode(
    bytes: &[u8],
    options: &DecodeOptions,
    backend: &Backend,
) -> Result<Decoded, CodecError> {
    let start = Instant::now();
    let c = Container::parse(bytes, options.read)?;
    let sel = progressive::select(&c, options.reduce, options.layers)?;
    if options.read.check_crc {
        check_selected(&c, &sel)?;
    }
    let hd = &c.header;
    let (w, h) = (sel.width, sel.height);
    let blocks = &c.blocks[..sel.blocks];
    let like = stages::codeblocks::zeros_like(blocks, w, h, hd.components as usize);
    let encoded = stages::pack::unpack(backend, &c, &sel);
    let shifts = &c.index.shifts[..sel.blocks];
    let (indices, summaries) = entropy::decode(hd, &like, &encoded, shifts, backend)?;
    drop(like);
    let decodable = Decodable {
        blocks,
        shifts,
        tops: &encoded.tops,
        summaries: &summaries,
    };
    let coefficients = stages::quantize::dequantize(backend, hd, &decodable, indices, w, h);
    let mut planes = stages::dwt::inverse_reduced(backend, coefficients, w, h, hd, options.reduce)?;
    stages::colour::inverse(backend, &mut planes, hd);
    let image = Image {
        width: w,
        height: h,
        bit_depth: hd.bit_depth,
        signed: hd.signed,
        planes,
    };
    let report = DecodeReport {
        backend: backend.describe(),
        width: w,
        height: h,
        truncated: !c.is_complete(),
        resolutions: sel.resolutions,
        layers: sel.layers,
        bytes_used: progressive::bytes_used(&c, &sel),
        seconds: start.elapsed().as_secs_f64(),
    };
    Ok(Decoded { image, report })
}

/// Checks the CRC of every segment the selection decodes.
fn check_selected(c: &Container<'_>, sel: &Selection) -> Result<(), CodecError> {
    for (k, s) in c.segments.iter().enumerate() {
        if s.len > 0 && s.resolution < sel.resolutions && s.layer < sel.layers {
            c.check_segment(k)?;
        }
    }
    Ok(())
}
