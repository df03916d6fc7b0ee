//! Sequence and picture parameter sets and the IDR slice header (clause
//! 7.3.2 and 7.3.3), for the one configuration this encoder writes:
//! Baseline profile, 4:2:0, frame macroblocks only, CAVLC, one slice per
//! picture, deblocking off (the reconstruction is not filtered).

use wavelane_core::bits::{BitError, BitWriter};

/// What the headers describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamParams {
    /// Coded width in luma samples (even; cropping removes the macroblock padding).
    pub width: usize,
    /// Coded height in luma samples (even).
    pub height: usize,
    /// Quantisation parameter of every macroblock, 0..=51.
    pub qp: u8,
}

impl StreamParams {
    /// Width in macroblocks.
    pub fn mb_width(&self) -> usize {
        self.width.div_ceil(16)
    }

    /// Height in macroblocks.
    pub fn mb_height(&self) -> usize {
        self.height.div_ceil(16)
    }

    /// level_idc: the smallest level whose frame size limit (Table A-1) fits.
    pub fn level_idc(&self) -> u8 {
        let mbs = self.mb_width() * self.mb_height();
        let max_side = self.mb_width().max(self.mb_height());
        // (level_idc, MaxFS); a side may not exceed sqrt(8 * MaxFS).
        const LEVELS: [(u8, usize); 10] = [
            (10, 99),
            (20, 396),
            (21, 792),
            (22, 1620),
            (31, 3600),
            (32, 5120),
            (40, 8192),
            (42, 8704),
            (50, 22080),
            (51, 36864),
        ];
        LEVELS
            .iter()
            .find(|&&(_, fs)| mbs <= fs && max_side * max_side <= 8 * fs)
            .map_or(52, |&(l, _)| l)
    }
}

/// Writes `rbsp_trailing_bits` and returns the RBSP length in bytes.
fn finish(mut w: BitWriter<'_>) -> Result<usize, BitError> {
    w.write_trailing_bits()?;
    Ok(w.byte_len())
}

/// The sequence parameter set RBSP.
pub fn sps_rbsp(p: &StreamParams) -> Result<Vec<u8>, BitError> {
    let mut buf = [0u8; 64];
    let mut w = BitWriter::new(&mut buf);
    w.write_bits(66, 8)?; // profile_idc: Baseline
                          // constraint_set0 (Baseline) and set1 (Main): no FMO, ASO or redundant slices.
    w.write_bits(0b1100_0000, 8)?;
    w.write_bits(p.level_idc() as u32, 8)?;
    w.write_ue(0)?; // seq_parameter_set_id
    w.write_ue(0)?; // log2_max_frame_num_minus4
    w.write_ue(2)?; // pic_order_cnt_type: output order = decoding order
    w.write_ue(1)?; // max_num_ref_frames
    w.write_bit(false)?; // gaps_in_frame_num_value_allowed_flag
    w.write_ue(p.mb_width() as u32 - 1)?;
    w.write_ue(p.mb_height() as u32 - 1)?;
    w.write_bit(true)?; // frame_mbs_only_flag
    w.write_bit(true)?; // direct_8x8_inference_flag
    let (crop_right, crop_bottom) = (p.mb_width() * 16 - p.width, p.mb_height() * 16 - p.height);
    let cropping = crop_right != 0 || crop_bottom != 0;
    w.write_bit(cropping)?;
    if cropping {
        // 4:2:0 frame coding crops in units of 2 samples.
        w.write_ue(0)?;
        w.write_ue(crop_right as u32 / 2)?;
        w.write_ue(0)?;
        w.write_ue(crop_bottom as u32 / 2)?;
    }
    w.write_bit(false)?; // vui_parameters_present_flag
    let n = finish(w)?;
    Ok(buf[..n].to_vec())
}

/// The picture parameter set RBSP.
pub fn pps_rbsp() -> Result<Vec<u8>, BitError> {
    let mut buf = [0u8; 16];
    let mut w = BitWriter::new(&mut buf);
    w.write_ue(0)?; // pic_parameter_set_id
    w.write_ue(0)?; // seq_parameter_set_id
    w.write_bit(false)?; // entropy_coding_mode_flag: CAVLC
    w.write_bit(false)?; // bottom_field_pic_order_in_frame_present_flag
    w.write_ue(0)?; // num_slice_groups_minus1
    w.write_ue(0)?; // num_ref_idx_l0_default_active_minus1
    w.write_ue(0)?; // num_ref_idx_l1_default_active_minus1
    w.write_bit(false)?; // weighted_pred_flag
    w.write_bits(0, 2)?; // weighted_bipred_idc
    w.write_se(0)?; // pic_init_qp_minus26
    w.write_se(0)?; // pic_init_qs_minus26
    w.write_se(0)?; // chroma_qp_index_offset
    w.write_bit(true)?; // deblocking_filter_control_present_flag
    w.write_bit(false)?; // constrained_intra_pred_flag
    w.write_bit(false)?; // redundant_pic_cnt_present_flag
    let n = finish(w)?;
    Ok(buf[..n].to_vec())
}

/// Writes the header of the IDR I slice of picture number `idr_pic_id`
/// (consecutive IDR pictures must differ in it) into `w`.
pub fn write_slice_header(
    w: &mut BitWriter<'_>,
    p: &StreamParams,
    idr_pic_id: u16,
) -> Result<(), BitError> {
    w.write_ue(0)?; // first_mb_in_slice
    w.write_ue(7)?; // slice_type: I, and so are all slices of the picture
    w.write_ue(0)?; // pic_parameter_set_id
    w.write_bits(0, 4)?; // frame_num (log2_max_frame_num = 4)
    w.write_ue(idr_pic_id as u32)?;
    w.write_bit(false)?; // no_output_of_prior_pics_flag
    w.write_bit(false)?; // long_term_reference_flag
    w.write_se(p.qp as i32 - 26)?; // slice_qp_delta
    w.write_ue(1)?; // disable_deblocking_filter_idc: off
    Ok(())
}
