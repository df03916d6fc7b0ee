//! The decoder pipeline (docs/codec.md, "Decoder"): whole files, truncated
//! prefixes, reduced resolutions and fewer layers.

use std::time::Instant;

use rayon::prelude::*;
use wavelane_core::bpc::{Decoded as BlockDecoded, PassSchedule};
use wavelane_core::dwt::lift97::K;
use wavelane_core::dwt::Wavelet;

use super::codeblocks::BlockGeometry;
use super::file::{Container, ReadOptions};
use super::header::Header;
use super::progressive;
use super::quant::{self, UNIT_STEP};
use super::transform::{self, Coefficients};
use super::{colour, entropy, CodecError, Image};
use crate::backend::Backend;
use crate::bpc::{CodeblockBatch, EncodedBatch};

/// What to decode.
#[derive(Debug, Clone, Copy, Default)]
pub struct DecodeOptions {
    /// Skip the `reduce` finest resolutions: the image comes out
    /// `ceil(size / 2^reduce)` in each dimension.
    pub reduce: u8,
    /// Decode only this many quality layers (`None`: all).
    pub layers: Option<u8>,
    /// Memory budget and CRC checking.
    pub read: ReadOptions,
}

/// What the decoder did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DecodeReport {
    /// Where it ran.
    pub backend: String,
    /// Output width.
    pub width: usize,
    /// Output height.
    pub height: usize,
    /// The bytes were a truncated prefix of the file.
    pub truncated: bool,
    /// Resolutions decoded (1 = the LL band alone).
    pub resolutions: usize,
    /// Layers decoded.
    pub layers: usize,
    /// Bytes of the file the decode needed (header and the segments of
    /// the decoded resolutions and layers that were present).
    pub bytes_used: u64,
    /// Seconds spent.
    pub seconds: f64,
}

/// A decoded image and its report.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The image.
    pub image: Image,
    /// What happened.
    pub report: DecodeReport,
}

/// Decodes a `.wl` file or any prefix of one that holds its main header.
pub fn decode(
    bytes: &[u8],
    options: &DecodeOptions,
    backend: &Backend,
) -> Result<Decoded, CodecError> {
    decode_inner(bytes, options, backend, false).map(|(d, _)| d)
}

/// Like [`decode`], but a data segment whose CRC fails is left out instead
/// of failing the decode: its resolution is decoded through the layers
/// before it (a layer continues the codewords of the one below, so the
/// later layers of that resolution go too). Returns the indices (into
/// [`Container::segments`]) of the segments left out; `wavelane decode
/// --partial` reports them.
pub fn decode_skipping_damaged(
    bytes: &[u8],
    options: &DecodeOptions,
    backend: &Backend,
) -> Result<(Decoded, Vec<usize>), CodecError> {
    decode_inner(bytes, options, backend, true)
}

fn decode_inner(
    bytes: &[u8],
    options: &DecodeOptions,
    backend: &Backend,
    skip_damaged: bool,
) -> Result<(Decoded, Vec<usize>), CodecError> {
    let start = Instant::now();
    let c = Container::parse(bytes, options.read)?;
    let sel = progressive::select(&c, options.reduce, options.layers)?;
    let mut damaged = Vec::new();
    // Layers decoded per resolution: fewer where a segment is damaged.
    let mut layers_of = vec![sel.layers; sel.resolutions];
    if options.read.check_crc {
        for (k, s) in c.segments.iter().enumerate() {
            if s.len > 0 && s.resolution < sel.resolutions && s.layer < sel.layers {
                match c.check_segment(k) {
                    Err(super::FormatError::SegmentCrc { .. }) if skip_damaged => {
                        damaged.push(k);
                        let l = &mut layers_of[s.resolution];
                        *l = (*l).min(s.layer);
                    }
                    other => {
                        other?;
                    }
                }
            }
        }
    }
    let hd = &c.header;
    let (w, h) = (sel.width, sel.height);
    let blocks = &c.blocks[..sel.blocks];
    let like = CodeblockBatch {
        coefficients: vec![0; w * h * hd.components as usize],
        blocks: entropy::descriptors(blocks, w, h),
    };
    let mut encoded = EncodedBatch {
        tops: c.index.tops[..sel.blocks].to_vec(),
        offsets: vec![0],
        codewords: Vec::new(),
    };
    for i in 0..sel.blocks {
        let layers = layers_of[c.blocks[i].resolution as usize];
        encoded.codewords.extend(c.block_codewords(i, layers));
        encoded.offsets.push(encoded.codewords.len());
    }
    let (indices, summaries) =
        entropy::decode(hd, &like, &encoded, &c.index.shifts[..sel.blocks], backend)?;
    drop(like);
    let coefficients = dequantize(
        hd,
        &c.index.shifts,
        blocks,
        &encoded.tops,
        &summaries,
        indices,
        w,
        h,
    );
    let levels = hd.levels as u32 - options.reduce as u32;
    let mut planes = transform::inverse(coefficients, w, h, levels, hd.wavelet, backend)?;
    if hd.wavelet == Wavelet::Fixed97 && options.reduce > 0 {
        // The fixed-point 9/7 leaves out the K scaling: its LL after k
        // levels carries a gain of K^(2k).
        let scale = K.powi(-2 * options.reduce as i32);
        for p in planes.iter_mut() {
            p.par_iter_mut()
                .for_each(|v| *v = (*v as f64 * scale).round() as i32);
        }
    }
    colour::inverse(hd.colour, &mut planes);
    for p in planes.iter_mut() {
        colour::shift_out(p, hd.bit_depth, hd.signed, hd.fraction_bits);
    }
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
    Ok((Decoded { image, report }, damaged))
}

/// Whether a block's decode got into bitplane 0.
fn reached_plane0(header: &Header, top: Option<u8>, d: &BlockDecoded) -> bool {
    match top {
        Some(m) if d.passes_completed > 0 => {
            PassSchedule::pass(header.mode(), m, d.passes_completed - 1).1 == 0
        }
        _ => false,
    }
}

/// Turns decoded indices (component planes of `w x h`) into coefficients.
#[allow(clippy::too_many_arguments)]
fn dequantize(
    header: &Header,
    shifts: &[u8],
    blocks: &[BlockGeometry],
    tops: &[Option<u8>],
    summaries: &[BlockDecoded],
    mut indices: Vec<i32>,
    w: usize,
    h: usize,
) -> Coefficients {
    struct Rule {
        shift: u8,
        q16: u64,
        half: bool,
    }
    let rules: Vec<Rule> = blocks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let q16 = header.step(b.component as usize, b.band as usize).q16();
            let shift = shifts[i];
            let half =
                quant::half_bin(q16, shift) && reached_plane0(header, tops[i], &summaries[i]);
            Rule { shift, q16, half }
        })
        .collect();
    let mut by_row: Vec<Vec<u32>> = vec![Vec::new(); h * header.components as usize];
    for (i, b) in blocks.iter().enumerate() {
        for y in b.rect.y..b.rect.y + b.rect.height {
            by_row[b.component as usize * h + y].push(i as u32);
        }
    }
    let plane = w * h;
    let components = header.components as usize;
    if header.wavelet == Wavelet::Cdf97 {
        let mut out = vec![0f32; plane * components];
        out.par_chunks_mut(w)
            .zip(indices.par_chunks(w))
            .enumerate()
            .for_each(|(row, (dst, src))| {
                for &i in &by_row[row] {
                    let (b, r) = (&blocks[i as usize], &rules[i as usize]);
                    for x in b.rect.x..b.rect.x + b.rect.width {
                        dst[x] = quant::dequantize_f32(src[x], r.shift, r.q16, r.half);
                    }
                }
            });
        Coefficients::Float(transform::Planes::new(out, plane))
    } else {
        indices
            .par_chunks_mut(w)
            .enumerate()
            .for_each(|(row, line)| {
                for &i in &by_row[row] {
                    let (b, r) = (&blocks[i as usize], &rules[i as usize]);
                    if r.q16 == UNIT_STEP && r.shift == 0 {
                        continue; // lossless: the index is the coefficient
                    }
                    for v in &mut line[b.rect.x..b.rect.x + b.rect.width] {
                        *v = quant::dequantize_i32(*v, r.shift, r.q16, r.half);
                    }
                }
            });
        Coefficients::Int(transform::Planes::new(indices, plane))
    }
}
