//! A parser for the streams this encoder writes (and other Baseline intra
//! streams of the same shape): NAL units, SPS, PPS, I slice headers and the
//! macroblock layer, with every residual block read by
//! [`wavelane_core::cavlc::decode_block`] under the nC that
//! [`FrameResidual`] derives. It recovers the levels, not pixels (ffmpeg is
//! the pixel oracle in the tests); it is the structural check of our
//! streams and the test bed of the CAVLC decoder on real data.
//!
//! Input is untrusted: sizes are bounded before allocation, every syntax
//! element is range-checked, and errors are [`H264Error::Stream`].

use wavelane_core::bits::BitReader;
use wavelane_core::cavlc::decode_block;
use wavelane_core::cavlc::frame::{
    FrameResidual, MbInfo, MbKind, COEFFS_PER_UNIT, RESIDUAL_UNITS_PER_MB, UNITS_PER_MB,
};

use super::macroblock::intra_cbp_of_code;
use super::nal::{split_nals, NAL_IDR_SLICE, NAL_PPS, NAL_SPS};
use super::H264Error;

/// Largest picture the parser accepts, in macroblocks (level 6.2 MaxFS).
const MAX_MBS: usize = 139_264;

/// Fewest bits a macroblock of an I slice can take: I_16x16_0_0_0 (3),
/// intra_chroma_pred_mode (1), mb_qp_delta (1) and an empty DC block (1).
const MIN_MB_BITS: usize = 6;

fn bad(msg: impl Into<String>) -> H264Error {
    H264Error::Stream(msg.into())
}

/// The sequence parameters the parser needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sps {
    /// profile_idc.
    pub profile_idc: u8,
    /// level_idc.
    pub level_idc: u8,
    /// Width in macroblocks.
    pub mb_width: usize,
    /// Height in macroblocks.
    pub mb_height: usize,
    /// Cropped (displayed) width in luma samples.
    pub width: usize,
    /// Cropped height in luma samples.
    pub height: usize,
    log2_max_frame_num: u32,
    poc_type: u32,
    log2_max_poc_lsb: u32,
}

#[derive(Debug, Clone, Copy)]
struct Pps {
    pic_init_qp: i32,
    deblocking_control: bool,
    redundant_pic_cnt: bool,
}

/// One parsed picture: per macroblock its type, coded_block_pattern and QP,
/// and the levels of all residual units in the [`FrameResidual`] layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPicture {
    /// Width in macroblocks.
    pub mb_width: usize,
    /// Height in macroblocks.
    pub mb_height: usize,
    /// Macroblock infos (slice = index of the slice within the picture).
    pub mbs: Vec<MbInfo>,
    /// QP of every macroblock.
    pub qps: Vec<u8>,
    /// Levels, [`RESIDUAL_UNITS_PER_MB`] x [`COEFFS_PER_UNIT`] per macroblock.
    pub coeffs: Vec<i16>,
}

/// A parsed stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedStream {
    /// The (last) sequence parameter set.
    pub sps: Sps,
    /// The pictures in stream order.
    pub pictures: Vec<ParsedPicture>,
}

fn ue(r: &mut BitReader<'_>, max: u32, what: &str) -> Result<u32, H264Error> {
    let v = r.read_ue()?;
    if v > max {
        return Err(bad(format!("{what} = {v} is out of range")));
    }
    Ok(v)
}

fn parse_sps(rbsp: &[u8]) -> Result<Sps, H264Error> {
    let mut r = BitReader::new(rbsp);
    let profile_idc = r.read_bits(8)? as u8;
    if !matches!(profile_idc, 66 | 77 | 88) {
        return Err(bad(format!(
            "profile_idc {profile_idc}: only Baseline, Main and Extended are parsed"
        )));
    }
    r.skip_bits(8)?; // constraint flags and reserved bits
    let level_idc = r.read_bits(8)? as u8;
    ue(&mut r, 31, "seq_parameter_set_id")?;
    let log2_max_frame_num = ue(&mut r, 12, "log2_max_frame_num_minus4")? + 4;
    let poc_type = ue(&mut r, 2, "pic_order_cnt_type")?;
    let mut log2_max_poc_lsb = 0;
    match poc_type {
        0 => log2_max_poc_lsb = ue(&mut r, 12, "log2_max_pic_order_cnt_lsb_minus4")? + 4,
        1 => return Err(bad("pic_order_cnt_type 1 is not supported")),
        _ => {}
    }
    ue(&mut r, 16, "max_num_ref_frames")?;
    r.read_bit()?; // gaps_in_frame_num_value_allowed_flag
    let mb_width = ue(&mut r, 1023, "pic_width_in_mbs_minus1")? as usize + 1;
    let mb_height = ue(&mut r, 1023, "pic_height_in_map_units_minus1")? as usize + 1;
    if mb_width * mb_height > MAX_MBS {
        return Err(bad(format!(
            "{mb_width}x{mb_height} macroblocks is too large"
        )));
    }
    if !r.read_bit()? {
        return Err(bad(
            "field coding (frame_mbs_only_flag = 0) is not supported",
        ));
    }
    r.read_bit()?; // direct_8x8_inference_flag
    let (mut width, mut height) = (mb_width * 16, mb_height * 16);
    if r.read_bit()? {
        let mut crop = [0usize; 4];
        for c in &mut crop {
            *c = ue(&mut r, 8192, "frame_crop_offset")? as usize * 2;
        }
        if crop[0] + crop[1] >= width || crop[2] + crop[3] >= height {
            return Err(bad("cropping removes the whole picture"));
        }
        width -= crop[0] + crop[1];
        height -= crop[2] + crop[3];
    }
    Ok(Sps {
        profile_idc,
        level_idc,
        mb_width,
        mb_height,
        width,
        height,
        log2_max_frame_num,
        poc_type,
        log2_max_poc_lsb,
    })
}

fn parse_pps(rbsp: &[u8]) -> Result<Pps, H264Error> {
    let mut r = BitReader::new(rbsp);
    ue(&mut r, 255, "pic_parameter_set_id")?;
    ue(&mut r, 31, "seq_parameter_set_id")?;
    if r.read_bit()? {
        return Err(bad("CABAC streams are not supported"));
    }
    r.read_bit()?; // bottom_field_pic_order_in_frame_present_flag
    if ue(&mut r, 7, "num_slice_groups_minus1")? != 0 {
        return Err(bad("slice groups (FMO) are not supported"));
    }
    ue(&mut r, 31, "num_ref_idx_l0_default_active_minus1")?;
    ue(&mut r, 31, "num_ref_idx_l1_default_active_minus1")?;
    r.read_bit()?; // weighted_pred_flag
    r.read_bits(2)?; // weighted_bipred_idc
    let qp = r.read_se()?;
    if !(-26..=25).contains(&qp) {
        return Err(bad("pic_init_qp_minus26 out of range"));
    }
    r.read_se()?; // pic_init_qs_minus26
    if r.read_se()? != 0 {
        return Err(bad("chroma_qp_index_offset other than 0 is not supported"));
    }
    let deblocking_control = r.read_bit()?;
    r.read_bit()?; // constrained_intra_pred_flag
    let redundant_pic_cnt = r.read_bit()?;
    Ok(Pps {
        pic_init_qp: 26 + qp,
        deblocking_control,
        redundant_pic_cnt,
    })
}

/// True while more than the rbsp_trailing_bits are left.
fn more_rbsp_data(r: &BitReader<'_>, rbsp: &[u8]) -> bool {
    let Some(last) = rbsp.iter().rposition(|&b| b != 0) else {
        return false;
    };
    let stop_bit = last * 8 + 7 - rbsp[last].trailing_zeros() as usize;
    r.bit_position() < stop_bit
}

/// Parses an Annex B stream of I pictures.
pub fn parse_stream(stream: &[u8]) -> Result<ParsedStream, H264Error> {
    let (mut sps, mut pps) = (None, None);
    let mut pictures: Vec<ParsedPicture> = Vec::new();
    let mut slices_in_picture = 0u16;
    let nals = split_nals(stream);
    // RBSP bits from each NAL unit to the end of the stream: a picture is
    // only allocated once the stream could still hold all its macroblocks.
    let mut bits_from = vec![0usize; nals.len() + 1];
    for k in (0..nals.len()).rev() {
        bits_from[k] = bits_from[k + 1] + nals[k].rbsp.len() * 8;
    }
    for (k, nal) in nals.iter().enumerate() {
        match nal.unit_type {
            NAL_SPS => sps = Some(parse_sps(&nal.rbsp)?),
            NAL_PPS => pps = Some(parse_pps(&nal.rbsp)?),
            1 | NAL_IDR_SLICE => {
                let (Some(sps), Some(pps)) = (sps, pps) else {
                    return Err(bad("slice before SPS and PPS"));
                };
                let mut r = BitReader::new(&nal.rbsp);
                let first_mb = ue(
                    &mut r,
                    (sps.mb_width * sps.mb_height - 1) as u32,
                    "first_mb_in_slice",
                )? as usize;
                if first_mb == 0 {
                    let n = sps.mb_width * sps.mb_height;
                    // Heap stays linear in the input: the previous picture
                    // must be whole (its macroblocks took their bits), and
                    // this one must fit in what is left of the stream.
                    if let Some(prev) = pictures.last() {
                        check_complete(prev)?;
                    }
                    if n * MIN_MB_BITS > bits_from[k] {
                        return Err(bad(format!(
                            "a picture of {n} macroblocks cannot fit in the {} bytes left",
                            bits_from[k] / 8
                        )));
                    }
                    pictures.push(ParsedPicture {
                        mb_width: sps.mb_width,
                        mb_height: sps.mb_height,
                        mbs: vec![
                            MbInfo {
                                kind: MbKind::Intra4x4,
                                cbp: 0,
                                slice: u16::MAX
                            };
                            n
                        ],
                        qps: vec![0; n],
                        coeffs: vec![0; n * RESIDUAL_UNITS_PER_MB * COEFFS_PER_UNIT],
                    });
                    slices_in_picture = 0;
                }
                let pic = pictures
                    .last_mut()
                    .ok_or_else(|| bad("first slice does not start at macroblock 0"))?;
                let qp = slice_header(
                    &mut r,
                    &sps,
                    &pps,
                    nal.unit_type == NAL_IDR_SLICE,
                    nal.ref_idc,
                )?;
                slice_data(&mut r, &nal.rbsp, pic, first_mb, slices_in_picture, qp)?;
                // u16::MAX marks macroblocks that no slice has coded yet.
                slices_in_picture = slices_in_picture
                    .checked_add(1)
                    .filter(|&s| s != u16::MAX)
                    .ok_or_else(|| bad("too many slices"))?;
            }
            _ => {}
        }
    }
    let sps = sps.ok_or_else(|| bad("no SPS"))?;
    if let Some(last) = pictures.last() {
        check_complete(last)?;
    }
    Ok(ParsedStream { sps, pictures })
}

/// Every macroblock of `pic` was coded by some slice.
fn check_complete(pic: &ParsedPicture) -> Result<(), H264Error> {
    let missing = pic.mbs.iter().filter(|m| m.slice == u16::MAX).count();
    if missing != 0 {
        return Err(bad(format!(
            "{missing} macroblocks of a picture are in no slice"
        )));
    }
    Ok(())
}

/// Reads an I slice header up to the slice data; returns SliceQP.
fn slice_header(
    r: &mut BitReader<'_>,
    sps: &Sps,
    pps: &Pps,
    idr: bool,
    ref_idc: u8,
) -> Result<i32, H264Error> {
    let slice_type = ue(r, 9, "slice_type")?;
    if slice_type % 5 != 2 {
        return Err(bad(format!(
            "slice_type {slice_type}: only I slices are supported"
        )));
    }
    ue(r, 255, "pic_parameter_set_id")?;
    r.read_bits(sps.log2_max_frame_num)?; // frame_num
    if idr {
        ue(r, 65535, "idr_pic_id")?;
    }
    if sps.poc_type == 0 {
        r.read_bits(sps.log2_max_poc_lsb)?;
    }
    if pps.redundant_pic_cnt {
        ue(r, 127, "redundant_pic_cnt")?;
    }
    if ref_idc != 0 {
        if idr {
            r.read_bits(2)?; // no_output_of_prior_pics_flag, long_term_reference_flag
        } else if r.read_bit()? {
            return Err(bad("adaptive reference picture marking is not supported"));
        }
    }
    let qp = pps.pic_init_qp + r.read_se()?;
    if !(0..=51).contains(&qp) {
        return Err(bad("SliceQP out of range"));
    }
    if pps.deblocking_control && ue(r, 2, "disable_deblocking_filter_idc")? != 1 {
        r.read_se()?; // slice_alpha_c0_offset_div2
        r.read_se()?; // slice_beta_offset_div2
    }
    Ok(qp)
}

fn slice_data(
    r: &mut BitReader<'_>,
    rbsp: &[u8],
    pic: &mut ParsedPicture,
    first_mb: usize,
    slice: u16,
    mut qp: i32,
) -> Result<(), H264Error> {
    let mut mb = first_mb;
    loop {
        if mb >= pic.mbs.len() {
            return Err(bad("slice runs past the picture"));
        }
        if pic.mbs[mb].slice != u16::MAX {
            return Err(bad("macroblock coded twice"));
        }
        macroblock(r, pic, mb, slice, &mut qp)?;
        mb += 1;
        if !more_rbsp_data(r, rbsp) {
            return Ok(());
        }
    }
}

fn macroblock(
    r: &mut BitReader<'_>,
    pic: &mut ParsedPicture,
    mb: usize,
    slice: u16,
    qp: &mut i32,
) -> Result<(), H264Error> {
    let mb_type = ue(r, 25, "mb_type (I slice)")?;
    let info = match mb_type {
        0 => {
            for _ in 0..16 {
                if !r.read_bit()? {
                    r.read_bits(3)?; // rem_intra4x4_pred_mode
                }
            }
            ue(r, 3, "intra_chroma_pred_mode")?;
            let cbp = intra_cbp_of_code(ue(r, 47, "coded_block_pattern")?).expect("checked range");
            MbInfo {
                kind: MbKind::Intra4x4,
                cbp,
                slice,
            }
        }
        1..=24 => {
            ue(r, 3, "intra_chroma_pred_mode")?;
            let t = mb_type - 1;
            let cbp = ((t / 4 % 3) << 4) as u8 | if t >= 12 { 15 } else { 0 };
            MbInfo {
                kind: MbKind::Intra16x16,
                cbp,
                slice,
            }
        }
        _ => {
            while !r.is_byte_aligned() {
                if r.read_bit()? {
                    return Err(bad("pcm_alignment_zero_bit is 1"));
                }
            }
            r.skip_bits(384 * 8)?;
            MbInfo {
                kind: MbKind::Pcm,
                cbp: 0x2f,
                slice,
            }
        }
    };
    pic.mbs[mb] = info;
    if info.kind != MbKind::Pcm && (info.kind == MbKind::Intra16x16 || info.cbp != 0) {
        let delta = r.read_se()?;
        if !(-26..=25).contains(&delta) {
            return Err(bad("mb_qp_delta out of range"));
        }
        *qp = (*qp + delta + 52) % 52;
    }
    pic.qps[mb] = *qp as u8;
    let mut levels = [0i16; 16];
    for unit in 1..UNITS_PER_MB {
        let frame = FrameResidual::new(pic.mb_width, pic.mb_height, &pic.mbs, &pic.coeffs)
            .expect("sized at creation");
        let Some(kind) = frame.unit_kind(mb, unit) else {
            continue;
        };
        let nc = frame.nc(mb, unit);
        let n = kind.max_coeffs();
        decode_block(r, kind, nc, &mut levels[..n])?;
        let start = (mb * RESIDUAL_UNITS_PER_MB + unit - 1) * COEFFS_PER_UNIT;
        let slot = &mut pic.coeffs[start..start + COEFFS_PER_UNIT];
        let offset = COEFFS_PER_UNIT - n;
        // AC blocks occupy scan positions 1..=15, the others start at 0.
        let offset = if n == 15 { offset } else { 0 };
        slot[offset..offset + n].copy_from_slice(&levels[..n]);
    }
    Ok(())
}
