//! Whole pictures and sequences: macroblock coding in raster order, CAVLC of
//! every residual block (on the CPU here, or on the GPU in `h264::gpu`),
//! packing of the per-block bit strings into the slice data, and the Annex B
//! stream.

use rayon::prelude::*;
use wavelane_core::bits::BitWriter;
use wavelane_core::cavlc::frame::{FrameResidual, MbInfo, UNITS_PER_MB};
use wavelane_core::cavlc::{CavlcError, WordSlot};

use super::macroblock::{FrameCoder, MbModes};
use super::nal::{write_nal, NAL_IDR_SLICE, NAL_PPS, NAL_SPS};
use super::params::{pps_rbsp, sps_rbsp, write_slice_header, StreamParams};
use super::picture::Picture;
use super::H264Error;

/// A picture after macroblock coding, before entropy coding.
#[derive(Debug, Clone)]
pub struct CodedPicture {
    /// Width in macroblocks.
    pub mb_width: usize,
    /// Height in macroblocks.
    pub mb_height: usize,
    /// Per macroblock: type and coded_block_pattern.
    pub mbs: Vec<MbInfo>,
    /// Per macroblock: the header bits (unit 0).
    pub headers: Vec<WordSlot>,
    /// Per macroblock: the levels of the 27 residual units.
    pub coeffs: Vec<i16>,
    /// The reconstruction, the size of the macroblock grid.
    pub recon: Picture,
}

impl CodedPicture {
    /// The residual blocks in the layout CAVLC reads.
    pub fn residual(&self) -> FrameResidual<'_> {
        FrameResidual::new(self.mb_width, self.mb_height, &self.mbs, &self.coeffs)
            .expect("lengths are built consistently")
    }
}

/// Encoder settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EncodeOptions {
    /// Quantisation parameter of every macroblock, 0..=51.
    pub qp: u8,
    /// Luma prediction types the mode decision may use.
    pub modes: MbModes,
}

/// Codes every macroblock of `src` (padded to whole macroblocks by edge
/// replication first).
pub fn code_picture(src: &Picture, opts: &EncodeOptions) -> CodedPicture {
    let (mbw, mbh) = (src.width().div_ceil(16), src.height().div_ceil(16));
    let padded = src.padded(mbw * 16, mbh * 16);
    let mut coder = FrameCoder::new(&padded, opts.qp, opts.modes);
    let mut mbs = Vec::with_capacity(mbw * mbh);
    let mut headers = Vec::with_capacity(mbw * mbh);
    let mut coeffs = Vec::with_capacity(mbw * mbh * 27 * 16);
    for mby in 0..mbh {
        for mbx in 0..mbw {
            let mb = coder.code_mb(mbx, mby);
            mbs.push(mb.info);
            headers.push(mb.header);
            coeffs.extend_from_slice(&mb.coeffs);
        }
    }
    CodedPicture {
        mb_width: mbw,
        mb_height: mbh,
        mbs,
        headers,
        coeffs,
        recon: coder.recon,
    }
}

internal! {
/// CAVLC of every unit of every macroblock, in parallel over macroblocks:
/// [`UNITS_PER_MB`] slots per macroblock in bitstream order (the header slot
/// copied from `headers`), each macroblock by core's
/// [`FrameResidual::macroblock_slots`], which `shaders/cavlc/cavlc_encode.comp`
/// mirrors.
pub fn unit_slots(
    frame: &FrameResidual<'_>,
    headers: &[WordSlot],
) -> Result<Vec<WordSlot>, CavlcError> {
    let mut slots = vec![WordSlot::default(); frame.mb_count() * UNITS_PER_MB];
    slots
        .par_chunks_exact_mut(UNITS_PER_MB)
        .enumerate()
        .try_for_each(|(mb, out)| {
            let out = out.try_into().expect("chunks of UNITS_PER_MB");
            frame.macroblock_slots(mb, headers[mb], out)
        })?;
    Ok(slots)
}
}

/// The slice header of picture `idr_pic_id` as (bytes, bit length).
pub fn slice_header_bits(p: &StreamParams, idr_pic_id: u16) -> (Vec<u8>, usize) {
    let mut buf = vec![0u8; 32];
    let mut w = BitWriter::new(&mut buf);
    write_slice_header(&mut w, p, idr_pic_id).expect("a slice header fits in 32 bytes");
    let n = w.bit_position();
    (buf, n)
}

internal! {
/// Packs a slice header and unit slots into the slice RBSP (with
/// rbsp_slice_trailing_bits): the sequential form of the GPU packing.
pub fn pack_slice(header: &(Vec<u8>, usize), slots: &[WordSlot]) -> Vec<u8> {
    let bits: usize = header.1 + slots.iter().map(|s| s.len as usize).sum::<usize>();
    let mut buf = vec![0u8; bits / 8 + 1];
    let mut w = BitWriter::new(&mut buf);
    let mut r = wavelane_core::bits::BitReader::with_bit_len(&header.0, header.1);
    while r.remaining_bits() > 0 {
        let n = r.remaining_bits().min(32) as u32;
        w.write_bits(r.read_bits(n).expect("in range"), n)
            .expect("sized above");
    }
    for s in slots {
        s.write_to(&mut w).expect("sized above");
    }
    w.write_trailing_bits().expect("sized above");
    buf
}
}

/// Where the CAVLC of the residual blocks runs.
pub trait EntropyCoder: Sync {
    /// The slice RBSP of one coded picture after `header`.
    fn slice_rbsp(
        &self,
        header: &(Vec<u8>, usize),
        picture: &CodedPicture,
    ) -> Result<Vec<u8>, H264Error>;
}

/// CAVLC on the CPU cores (`unit_slots` then `pack_slice`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuEntropy;

impl EntropyCoder for CpuEntropy {
    fn slice_rbsp(
        &self,
        header: &(Vec<u8>, usize),
        picture: &CodedPicture,
    ) -> Result<Vec<u8>, H264Error> {
        let slots = unit_slots(&picture.residual(), &picture.headers)?;
        Ok(pack_slice(header, &slots))
    }
}

/// An encoded sequence.
#[derive(Debug, Clone)]
pub struct Encoded {
    /// The Annex B byte stream.
    pub stream: Vec<u8>,
    /// Our reconstruction of every picture, at the coded (even) size.
    pub recon: Vec<Picture>,
}

/// Encodes `frames` (all of one even size) as IDR pictures.
/// Pictures are coded in parallel; `progress` is called once per picture.
pub fn encode_sequence(
    frames: &[Picture],
    opts: &EncodeOptions,
    entropy: &dyn EntropyCoder,
    progress: &(dyn Fn() + Sync),
) -> Result<Encoded, H264Error> {
    let first = frames.first().ok_or(H264Error::NoFrames)?;
    let (width, height) = (first.width(), first.height());
    if width % 2 != 0 || height % 2 != 0 || width == 0 || height == 0 {
        return Err(H264Error::OddSize { width, height });
    }
    if frames
        .iter()
        .any(|f| f.width() != width || f.height() != height)
    {
        return Err(H264Error::SizeChange);
    }
    if opts.qp > 51 {
        return Err(H264Error::BadQp(opts.qp));
    }
    let params = StreamParams {
        width,
        height,
        qp: opts.qp,
    };
    let mut stream = Vec::new();
    write_nal(&mut stream, 3, NAL_SPS, &sps_rbsp(&params)?);
    write_nal(&mut stream, 3, NAL_PPS, &pps_rbsp()?);
    let pictures: Vec<(Vec<u8>, Picture)> = frames
        .par_iter()
        .enumerate()
        .map(|(i, f)| {
            let coded = code_picture(f, opts);
            let header = slice_header_bits(&params, (i % 65536) as u16);
            let rbsp = entropy.slice_rbsp(&header, &coded)?;
            progress();
            Ok((rbsp, coded.recon.cropped(width, height)))
        })
        .collect::<Result<_, H264Error>>()?;
    let mut recon = Vec::with_capacity(pictures.len());
    for (rbsp, r) in pictures {
        write_nal(&mut stream, 3, NAL_IDR_SLICE, &rbsp);
        recon.push(r);
    }
    Ok(Encoded { stream, recon })
}
