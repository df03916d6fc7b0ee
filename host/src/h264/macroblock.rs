//! Coding one intra macroblock: prediction mode decision (Intra4x4 against
//! Intra16x16, and the chroma mode) by SATD plus a rate estimate, integer
//! transform and quantisation, reconstruction, and the macroblock header
//! bits. The residual levels go to the CAVLC layer in the layout of
//! [`wavelane_core::cavlc::frame`].

use wavelane_core::bits::BitWriter;
use wavelane_core::cavlc::frame::{
    MbInfo, MbKind, COEFFS_PER_UNIT, RESIDUAL_UNITS_PER_MB, UNIT_CHROMA_AC, UNIT_CHROMA_DC,
    UNIT_LUMA, UNIT_LUMA_DC,
};
use wavelane_core::cavlc::nc::{luma_block_index, luma_block_xy};
use wavelane_core::cavlc::tables::ZIGZAG_4X4;
use wavelane_core::cavlc::WordSlot;

use super::picture::{Picture, Plane};
use super::predict::{predict16x16, predict4x4, predict_chroma, Edges4, EdgesN, I4_DC};
use super::transform::{
    chroma_qp, dequant4x4, dequant_chroma_dc, dequant_luma_dc, forward4x4, hadamard2x2,
    hadamard4x4, inverse4x4, quant4x4, quant_dc,
};

/// Coefficients of one macroblock in the [`wavelane_core::cavlc::frame`] layout.
pub type MbCoeffs = [i16; RESIDUAL_UNITS_PER_MB * COEFFS_PER_UNIT];

/// One coded macroblock: what the residual layer and the stream need.
#[derive(Debug, Clone)]
pub struct CodedMb {
    /// Type and coded_block_pattern.
    pub info: MbInfo,
    /// mb_type, prediction modes, coded_block_pattern and mb_qp_delta bits.
    pub header: WordSlot,
    /// Quantised levels, scan order, per unit.
    pub coeffs: MbCoeffs,
}

/// Lagrange multiplier per QP for SATD costs: round(sqrt(0.85 * 2^((QP-12)/3))).
const LAMBDA: [u32; 52] = [
    0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4, 5, 5, 6, 7, 7, 8,
    9, 10, 12, 13, 15, 17, 19, 21, 23, 26, 30, 33, 37, 42, 47, 53, 59, 66, 74, 83,
];

/// coded_block_pattern of each me(v) codeNum for intra macroblocks (Table 9-4, 4:2:0).
const INTRA_CBP_OF_CODE: [u8; 48] = [
    47, 31, 15, 0, 23, 27, 29, 30, 7, 11, 13, 14, 39, 43, 45, 46, 16, 3, 5, 10, 12, 19, 21, 26, 28,
    35, 37, 42, 44, 1, 2, 4, 8, 17, 18, 20, 24, 6, 9, 22, 25, 32, 33, 34, 36, 40, 38, 41,
];

/// The me(v) codeNum of an intra coded_block_pattern.
pub fn intra_cbp_code(cbp: u8) -> u32 {
    INTRA_CBP_OF_CODE
        .iter()
        .position(|&c| c == cbp)
        .expect("cbp < 48") as u32
}

/// The coded_block_pattern of an intra me(v) codeNum, if valid.
pub fn intra_cbp_of_code(code: u32) -> Option<u8> {
    INTRA_CBP_OF_CODE.get(code as usize).copied()
}

/// Sum of absolute Hadamard-transformed differences of a 4x4 block, halved.
fn satd4x4(src: &[u8], pred: &[u8], stride: usize, x: usize, y: usize) -> u32 {
    let diff: [i32; 16] = core::array::from_fn(|i| {
        let o = (y + i / 4) * stride + x + i % 4;
        src[o] as i32 - pred[o] as i32
    });
    hadamard4x4(&diff)
        .iter()
        .map(|v| v.unsigned_abs())
        .sum::<u32>()
        / 2
}

fn satd(src: &[u8], pred: &[u8], size: usize) -> u32 {
    let mut total = 0;
    for by in (0..size).step_by(4) {
        for bx in (0..size).step_by(4) {
            total += satd4x4(src, pred, size, bx, by);
        }
    }
    total
}

fn put_unit(coeffs: &mut MbCoeffs, unit: usize, raster: &[i32; 16]) {
    let slot = &mut coeffs[(unit - 1) * COEFFS_PER_UNIT..unit * COEFFS_PER_UNIT];
    for (k, s) in slot.iter_mut().enumerate() {
        *s = raster[ZIGZAG_4X4[k] as usize] as i16;
    }
}

/// Adds a residual to a prediction with clipping.
fn add_residual(pred: &[u8], res: &[i32; 16]) -> [u8; 16] {
    core::array::from_fn(|i| (pred[i] as i32 + res[i]).clamp(0, 255) as u8)
}

/// Which luma prediction types the mode decision may pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MbModes {
    /// Intra4x4 or Intra16x16, whichever costs less.
    #[default]
    Auto,
    /// Intra16x16 only.
    Intra16x16,
    /// Intra4x4 only.
    Intra4x4,
}

/// The macroblock-level encoder state of one picture.
pub struct FrameCoder<'a> {
    src: &'a Picture,
    /// The reconstruction, filled as macroblocks are coded.
    pub recon: Picture,
    qp: u8,
    modes: MbModes,
    mb_width: usize,
    /// Intra4x4PredMode of every 4x4 luma block (2 where not Intra4x4).
    i4_modes: Vec<u8>,
}

struct Neighbours {
    left: bool,
    top: bool,
    top_right: bool,
}

impl<'a> FrameCoder<'a> {
    /// A coder for `src`, whose size must be a multiple of 16.
    pub fn new(src: &'a Picture, qp: u8, modes: MbModes) -> FrameCoder<'a> {
        let (w, h) = (src.width(), src.height());
        assert!(w % 16 == 0 && h % 16 == 0 && qp <= 51);
        FrameCoder {
            src,
            recon: Picture {
                y: Plane::filled(w, h, 0),
                cb: Plane::filled(w / 2, h / 2, 0),
                cr: Plane::filled(w / 2, h / 2, 0),
            },
            qp,
            modes,
            mb_width: w / 16,
            i4_modes: vec![I4_DC; w / 4 * (h / 4)],
        }
    }

    fn neighbours(&self, mbx: usize, mby: usize) -> Neighbours {
        Neighbours {
            left: mbx > 0,
            top: mby > 0,
            top_right: mby > 0 && mbx + 1 < self.mb_width,
        }
    }

    fn edges_n<'p>(
        plane: &'p Plane,
        x: usize,
        y: usize,
        n: usize,
        nb: &Neighbours,
        left: &'p mut [u8],
    ) -> EdgesN<'p> {
        if nb.left {
            for (i, l) in left.iter_mut().enumerate().take(n) {
                *l = plane.at(x - 1, y + i);
            }
        }
        EdgesN {
            top: nb
                .top
                .then(|| &plane.data[(y - 1) * plane.width + x..(y - 1) * plane.width + x + n]),
            left: nb.left.then_some(&left[..n]),
            top_left: (nb.left && nb.top).then(|| plane.at(x - 1, y - 1)),
        }
    }

    /// Codes macroblock (mbx, mby), updating the reconstruction.
    pub fn code_mb(&mut self, mbx: usize, mby: usize) -> CodedMb {
        let nb = self.neighbours(mbx, mby);
        let mut coeffs: MbCoeffs = [0; RESIDUAL_UNITS_PER_MB * COEFFS_PER_UNIT];
        let (chroma_mode, cbp_chroma) = self.code_chroma(mbx, mby, &nb, &mut coeffs);
        let lambda = LAMBDA[self.qp as usize];
        // Intra4x4 first, straight into the reconstruction; Intra16x16 only
        // reads samples outside the macroblock, so it can overwrite it after.
        let mut coeffs4 = coeffs;
        let (cost4, modes4, cbp4) = self.code_intra4x4(mbx, mby, &nb, &mut coeffs4);
        let (mode16, cost16) = self.best_intra16x16(mbx, mby, &nb);
        // Intra4x4 signals 16 modes; weigh its rate against the 16x16 mode.
        let use16 = match self.modes {
            MbModes::Auto => cost16 <= cost4 + lambda * 24,
            MbModes::Intra16x16 => true,
            MbModes::Intra4x4 => false,
        };
        let (info, coeffs) = if use16 {
            let cbp_luma = self.code_intra16x16(mbx, mby, &nb, mode16, &mut coeffs);
            let info = MbInfo {
                kind: MbKind::Intra16x16,
                cbp: cbp_luma | cbp_chroma << 4,
                slice: 0,
            };
            let base = mby * 4 * (self.mb_width * 4) + mbx * 4;
            for r in 0..4 {
                self.i4_modes[base + r * self.mb_width * 4..][..4].fill(I4_DC);
            }
            (info, coeffs)
        } else {
            let info = MbInfo {
                kind: MbKind::Intra4x4,
                cbp: cbp4 | cbp_chroma << 4,
                slice: 0,
            };
            (info, coeffs4)
        };
        let header = self.header_bits(mbx, mby, &nb, info, mode16, &modes4, chroma_mode);
        CodedMb {
            info,
            header,
            coeffs,
        }
    }

    /// The predicted Intra4x4PredMode of block (bx, by) of the macroblock (clause 8.3.1.1).
    fn predicted_i4_mode(&self, mbx: usize, mby: usize, bx: usize, by: usize) -> u8 {
        let stride = self.mb_width * 4;
        let (gx, gy) = (mbx * 4 + bx, mby * 4 + by);
        if gx == 0 || gy == 0 {
            return I4_DC;
        }
        self.i4_modes[gy * stride + gx - 1].min(self.i4_modes[(gy - 1) * stride + gx])
    }

    fn code_intra4x4(
        &mut self,
        mbx: usize,
        mby: usize,
        nb: &Neighbours,
        coeffs: &mut MbCoeffs,
    ) -> (u32, [u8; 16], u8) {
        let lambda = LAMBDA[self.qp as usize];
        let (px0, py0) = (mbx * 16, mby * 16);
        let mut modes = [0u8; 16];
        let mut cost = 0;
        let mut cbp = 0u8;
        for blk in 0..16u8 {
            let (bx, by) = luma_block_xy(blk);
            let (bx, by) = (bx as usize, by as usize);
            let (x, y) = (px0 + bx * 4, py0 + by * 4);
            let y_plane = &self.recon.y;
            let top_right = if by == 0 {
                if bx == 3 {
                    nb.top_right
                } else {
                    nb.top
                }
            } else {
                bx < 3 && luma_block_index(bx as u8 + 1, by as u8 - 1) < blk
            };
            let has_top = by > 0 || nb.top;
            let has_left = bx > 0 || nb.left;
            let top = has_top.then(|| {
                let row = &y_plane.data[(y - 1) * y_plane.width..];
                core::array::from_fn(|i| {
                    if i < 4 || top_right {
                        row[x + i]
                    } else {
                        row[x + 3]
                    }
                })
            });
            let edges = Edges4 {
                top,
                left: has_left.then(|| core::array::from_fn(|i| y_plane.at(x - 1, y + i))),
                top_left: (has_top && has_left).then(|| y_plane.at(x - 1, y - 1)),
            };
            let mut src = [0u8; 16];
            self.src.y.read_block(x, y, 4, 4, &mut src);
            let predicted = self.predicted_i4_mode(mbx, mby, bx, by);
            let mut best: Option<(u32, u8, [u8; 16])> = None;
            for mode in 0..9u8 {
                if let Some(pred) = predict4x4(mode, &edges) {
                    let bits = if mode == predicted { 1 } else { 4 };
                    let c = satd4x4(&src, &pred, 4, 0, 0) + lambda * bits;
                    if best.is_none_or(|(b, _, _)| c < b) {
                        best = Some((c, mode, pred));
                    }
                }
            }
            let (c, mode, pred) = best.expect("DC prediction is always available");
            cost += c;
            modes[blk as usize] = mode;
            self.i4_modes[(mby * 4 + by) * self.mb_width * 4 + mbx * 4 + bx] = mode;
            let res: [i32; 16] = core::array::from_fn(|i| src[i] as i32 - pred[i] as i32);
            let levels = quant4x4(&forward4x4(&res), self.qp, false);
            if levels.iter().any(|&l| l != 0) {
                cbp |= 1 << (blk / 4);
            }
            put_unit(coeffs, UNIT_LUMA + blk as usize, &levels);
            let rec = add_residual(&pred, &inverse4x4(&dequant4x4(&levels, self.qp, None)));
            self.recon.y.write_block(x, y, 4, 4, &rec);
        }
        (cost, modes, cbp)
    }

    fn best_intra16x16(&self, mbx: usize, mby: usize, nb: &Neighbours) -> (u8, u32) {
        let (x, y) = (mbx * 16, mby * 16);
        let mut left = [0u8; 16];
        let edges = Self::edges_n(&self.recon.y, x, y, 16, nb, &mut left);
        let mut src = [0u8; 256];
        self.src.y.read_block(x, y, 16, 16, &mut src);
        (0..4u8)
            .filter_map(|m| predict16x16(m, &edges).map(|p| (m, satd(&src, &p, 16))))
            .min_by_key(|&(_, c)| c)
            .expect("DC prediction is always available")
    }

    fn code_intra16x16(
        &mut self,
        mbx: usize,
        mby: usize,
        nb: &Neighbours,
        mode: u8,
        coeffs: &mut MbCoeffs,
    ) -> u8 {
        let (x, y) = (mbx * 16, mby * 16);
        let mut left = [0u8; 16];
        let pred = predict16x16(mode, &Self::edges_n(&self.recon.y, x, y, 16, nb, &mut left))
            .expect("mode was available");
        let mut src = [0u8; 256];
        self.src.y.read_block(x, y, 16, 16, &mut src);
        // Transform every block; gather DCs by block position (raster of the 4x4 grid).
        let mut ws = [[0i32; 16]; 16];
        let mut dcs = [0i32; 16];
        for (b, w) in ws.iter_mut().enumerate() {
            let (bx, by) = (b % 4, b / 4);
            let res: [i32; 16] = core::array::from_fn(|i| {
                let o = (by * 4 + i / 4) * 16 + bx * 4 + i % 4;
                src[o] as i32 - pred[o] as i32
            });
            *w = forward4x4(&res);
            dcs[b] = w[0];
        }
        let dc_levels = hadamard4x4(&dcs).map(|f| quant_dc(f >> 1, self.qp));
        put_unit(coeffs, UNIT_LUMA_DC, &dc_levels);
        let dc_scaled = dequant_luma_dc(&dc_levels, self.qp);
        let mut any_ac = false;
        for (b, w) in ws.iter().enumerate() {
            let (bx, by) = (b % 4, b / 4);
            let levels = quant4x4(w, self.qp, true);
            any_ac |= levels.iter().any(|&l| l != 0);
            let blk = luma_block_index(bx as u8, by as u8) as usize;
            put_unit(coeffs, UNIT_LUMA + blk, &levels);
            let res = inverse4x4(&dequant4x4(&levels, self.qp, Some(dc_scaled[b])));
            let mut p = [0u8; 16];
            for i in 0..16 {
                p[i] = pred[(by * 4 + i / 4) * 16 + bx * 4 + i % 4];
            }
            self.recon
                .y
                .write_block(x + bx * 4, y + by * 4, 4, 4, &add_residual(&p, &res));
        }
        if any_ac {
            15
        } else {
            // The AC blocks are not coded: make sure no level is left behind.
            for blk in 0..16 {
                put_unit(coeffs, UNIT_LUMA + blk, &[0; 16]);
            }
            0
        }
    }

    /// Picks the chroma mode (one for both components), codes Cb and Cr.
    /// Returns (intra_chroma_pred_mode, chroma coded_block_pattern).
    fn code_chroma(
        &mut self,
        mbx: usize,
        mby: usize,
        nb: &Neighbours,
        coeffs: &mut MbCoeffs,
    ) -> (u8, u8) {
        let (x, y) = (mbx * 8, mby * 8);
        let qpc = chroma_qp(self.qp);
        let mut best: Option<(u32, u8)> = None;
        for mode in 0..4u8 {
            let mut cost = 0;
            let mut ok = true;
            for (src, rec) in [
                (&self.src.cb, &self.recon.cb),
                (&self.src.cr, &self.recon.cr),
            ] {
                let mut left = [0u8; 8];
                match predict_chroma(mode, &Self::edges_n(rec, x, y, 8, nb, &mut left)) {
                    Some(p) => {
                        let mut s = [0u8; 64];
                        src.read_block(x, y, 8, 8, &mut s);
                        cost += satd(&s, &p, 8);
                    }
                    None => ok = false,
                }
            }
            if ok && best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, mode));
            }
        }
        let mode = best.expect("DC prediction is always available").1;
        let (mut any_dc, mut any_ac) = (false, false);
        let mut planned = [[[0i32; 16]; 4]; 2];
        let mut dc_levels = [[0i32; 4]; 2];
        for comp in 0..2 {
            let (src, rec) = if comp == 0 {
                (&self.src.cb, &self.recon.cb)
            } else {
                (&self.src.cr, &self.recon.cr)
            };
            let mut left = [0u8; 8];
            let pred = predict_chroma(mode, &Self::edges_n(rec, x, y, 8, nb, &mut left))
                .expect("mode was available");
            let mut s = [0u8; 64];
            src.read_block(x, y, 8, 8, &mut s);
            let mut dcs = [0i32; 4];
            for b in 0..4 {
                let (bx, by) = (b % 2, b / 2);
                let res: [i32; 16] = core::array::from_fn(|i| {
                    let o = (by * 4 + i / 4) * 8 + bx * 4 + i % 4;
                    s[o] as i32 - pred[o] as i32
                });
                let w = forward4x4(&res);
                dcs[b] = w[0];
                planned[comp][b] = quant4x4(&w, qpc, true);
                any_ac |= planned[comp][b].iter().any(|&l| l != 0);
            }
            dc_levels[comp] = hadamard2x2(dcs).map(|f| quant_dc(f, qpc));
            any_dc |= dc_levels[comp].iter().any(|&l| l != 0);
            let mut dc_unit = [0i32; 16];
            // Chroma DC is coded in raster order: put it so the zigzag keeps it there.
            for (k, &l) in dc_levels[comp].iter().enumerate() {
                dc_unit[ZIGZAG_4X4[k] as usize] = l;
            }
            put_unit(coeffs, UNIT_CHROMA_DC + comp, &dc_unit);
        }
        let cbp = if any_ac { 2 } else { u8::from(any_dc) };
        for comp in 0..2 {
            let plane = if comp == 0 {
                &mut self.recon.cb
            } else {
                &mut self.recon.cr
            };
            let mut left = [0u8; 8];
            let pred = predict_chroma(mode, &Self::edges_n(plane, x, y, 8, nb, &mut left))
                .expect("mode was available");
            let dc_scaled = dequant_chroma_dc(dc_levels[comp], qpc);
            for b in 0..4 {
                let (bx, by) = (b % 2, b / 2);
                let levels = if cbp == 2 { planned[comp][b] } else { [0; 16] };
                put_unit(coeffs, UNIT_CHROMA_AC + comp * 4 + b, &levels);
                let res = inverse4x4(&dequant4x4(&levels, qpc, Some(dc_scaled[b])));
                let p: [u8; 16] =
                    core::array::from_fn(|i| pred[(by * 4 + i / 4) * 8 + bx * 4 + i % 4]);
                plane.write_block(x + bx * 4, y + by * 4, 4, 4, &add_residual(&p, &res));
            }
        }
        (mode, cbp)
    }

    #[allow(clippy::too_many_arguments)]
    fn header_bits(
        &self,
        mbx: usize,
        mby: usize,
        _nb: &Neighbours,
        info: MbInfo,
        mode16: u8,
        modes4: &[u8; 16],
        chroma_mode: u8,
    ) -> WordSlot {
        let mut buf = [0u8; 64];
        let mut w = BitWriter::new(&mut buf);
        let (cbp_luma, cbp_chroma) = (info.cbp & 15, info.cbp >> 4);
        let put = |w: &mut BitWriter<'_>| -> Result<(), wavelane_core::bits::BitError> {
            match info.kind {
                MbKind::Intra16x16 => {
                    let mb_type = 1
                        + mode16 as u32
                        + 4 * cbp_chroma as u32
                        + if cbp_luma != 0 { 12 } else { 0 };
                    w.write_ue(mb_type)?;
                    w.write_ue(chroma_mode as u32)?;
                    w.write_se(0)?;
                }
                MbKind::Intra4x4 => {
                    w.write_ue(0)?;
                    // The predicted modes depend on the final modes of this
                    // macroblock, which are in i4_modes by now.
                    for blk in 0..16u8 {
                        let (bx, by) = luma_block_xy(blk);
                        let pred = self.predicted_i4_mode(mbx, mby, bx as usize, by as usize);
                        let mode = modes4[blk as usize];
                        if mode == pred {
                            w.write_bit(true)?;
                        } else {
                            w.write_bit(false)?;
                            w.write_bits(if mode < pred { mode } else { mode - 1 } as u32, 3)?;
                        }
                    }
                    w.write_ue(chroma_mode as u32)?;
                    w.write_ue(intra_cbp_code(info.cbp))?;
                    if info.cbp != 0 {
                        w.write_se(0)?;
                    }
                }
                MbKind::Pcm => unreachable!("the encoder does not emit I_PCM"),
            }
            Ok(())
        };
        put(&mut w).expect("a macroblock header fits in 512 bits");
        let len = w.bit_position() as u32;
        WordSlot::from_bits(&buf, len).expect("header bits were just written")
    }
}
