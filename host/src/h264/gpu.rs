//! CAVLC of a whole picture on the GPU: `shaders/cavlc/cavlc_encode.comp` codes
//! every unit (macroblock header copy or residual block) into a 512-bit slot,
//! the prefix-sum scan of the execution layer turns the lengths into
//! offsets, and `shaders/cavlc/cavlc_pack.comp` ORs the slots into the slice data.
//! The result is the same bytes as [`super::encode::CpuEntropy`].

use std::sync::Arc;

use wavelane_core::cavlc::frame::UNITS_PER_MB;
use wavelane_core::cavlc::tables::{
    Code, COEFF_TOKEN_CHROMA_DC, COEFF_TOKEN_NC0, COEFF_TOKEN_NC2, COEFF_TOKEN_NC4, RUN_BEFORE,
    TOTAL_ZEROS_4X4, TOTAL_ZEROS_CHROMA_DC,
};
use wavelane_core::cavlc::SLOT_WORDS;

use super::encode::{CodedPicture, EntropyCoder};
use super::H264Error;
use crate::backend::gpu::{Dispatch, Gpu, GpuError, Timing};
use crate::shaders;

/// Invocations per workgroup of `cavlc_encode.comp` (4 macroblocks of 28 units).
const ENCODE_WORKGROUP: u32 = 112;
/// Invocations per workgroup of `cavlc_pack.comp`.
const PACK_WORKGROUP: u32 = 64;
internal! {
    /// Words of the table buffer (`T_WORDS` in `shaders/cavlc/cavlc.glsl`).
    pub const CODE_TABLE_WORDS: usize = 581;
}

internal! {
/// The CAVLC code tables as the shader reads them: every [`Code`] as
/// `len << 16 | bits`, tables in the order and at the offsets that
/// `shaders/cavlc/cavlc.glsl` defines (`T_CT_NC0` ... `T_RUN`).
pub fn code_table_words() -> Vec<u32> {
    let word = |c: &Code| (c.len as u32) << 16 | c.bits as u32;
    let mut w = Vec::with_capacity(CODE_TABLE_WORDS);
    for t in [&COEFF_TOKEN_NC0, &COEFF_TOKEN_NC2, &COEFF_TOKEN_NC4] {
        w.extend(t.iter().flatten().map(word));
    }
    w.extend(COEFF_TOKEN_CHROMA_DC.iter().flatten().map(word));
    w.extend(TOTAL_ZEROS_4X4.iter().flatten().map(word));
    w.extend(TOTAL_ZEROS_CHROMA_DC.iter().flatten().map(word));
    w.extend(RUN_BEFORE.iter().flatten().map(word));
    debug_assert_eq!(w.len(), CODE_TABLE_WORDS);
    w
}
}

fn gpu_err(e: GpuError) -> H264Error {
    H264Error::Gpu(e.to_string())
}

/// CAVLC on a Vulkan device.
#[derive(Debug, Clone)]
pub struct GpuEntropy {
    gpu: Arc<Gpu>,
}

impl GpuEntropy {
    /// Entropy coding on `gpu`.
    pub fn new(gpu: Arc<Gpu>) -> GpuEntropy {
        GpuEntropy { gpu }
    }

    /// The slice RBSP and the GPU time of the encode, scan and pack dispatches.
    pub fn slice_rbsp_timed(
        &self,
        header: &(Vec<u8>, usize),
        picture: &CodedPicture,
    ) -> Result<(Vec<u8>, Timing), H264Error> {
        let gpu = &self.gpu;
        let mb_count = picture.mbs.len();
        let units = mb_count * UNITS_PER_MB;
        // Bit offsets are 32-bit on the GPU: bound the worst case.
        let max_bits = header.1 as u64 + units as u64 * SLOT_WORDS as u64 * 32;
        if max_bits >= 1 << 32 {
            return Err(H264Error::Gpu(format!(
                "{mb_count} macroblocks are too many for 32-bit bit offsets"
            )));
        }
        let mbs: Vec<u32> = picture.mbs.iter().map(|m| m.pack()).collect();
        let coeffs: Vec<u32> = picture
            .coeffs
            .chunks_exact(2)
            .map(|p| (p[0] as u16 as u32) | (p[1] as u16 as u32) << 16)
            .collect();
        let mut headers = Vec::with_capacity(mb_count * (SLOT_WORDS + 1));
        for h in &picture.headers {
            headers.extend_from_slice(&h.words);
            headers.push(h.len);
        }
        let mbs_buf = gpu.upload(&mbs).map_err(gpu_err)?;
        let coeffs_buf = gpu.upload(&coeffs).map_err(gpu_err)?;
        let headers_buf = gpu.upload(&headers).map_err(gpu_err)?;
        let tables_buf = gpu.upload(&code_table_words()).map_err(gpu_err)?;
        let slots = gpu
            .uninit::<u32>((units * SLOT_WORDS) as u64)
            .map_err(gpu_err)?;
        let lens = gpu.zeroed::<u32>(units as u64).map_err(gpu_err)?;
        let status = gpu.zeroed::<u32>(1).map_err(gpu_err)?;
        let out_len = max_bits.div_ceil(32) as u32 + 1;
        let out = gpu.zeroed::<u32>(out_len as u64).map_err(gpu_err)?;
        let scratch = gpu.scan_scratch(units as u32).map_err(gpu_err)?;

        let encode_groups = (units as u32).div_ceil(ENCODE_WORKGROUP);
        let mut dispatches = vec![Dispatch::new(&shaders::CAVLC_ENCODE, [encode_groups, 1, 1])
            .buffer(&mbs_buf)
            .buffer(&coeffs_buf)
            .buffer(&headers_buf)
            .buffer(&tables_buf)
            .buffer(&slots)
            .buffer(&lens)
            .buffer(&status)
            .push(&[picture.mb_width as u32, mb_count as u32])];
        dispatches.extend(
            gpu.scan_dispatches(&lens, units as u32, &scratch)
                .map_err(gpu_err)?,
        );
        dispatches.push(
            Dispatch::new(
                &shaders::CAVLC_PACK,
                [(units as u32).div_ceil(PACK_WORKGROUP), 1, 1],
            )
            .buffer(&slots)
            .buffer(&lens)
            .buffer(&scratch.result)
            .buffer(&out)
            .push(&[units as u32, header.1 as u32, out_len]),
        );
        let timing = gpu.run(&dispatches).map_err(gpu_err)?;
        let err = gpu.download(&status).map_err(gpu_err)?[0];
        if err != 0 {
            return Err(H264Error::Gpu(format!(
                "cavlc_encode reported error bits {err:#x} (level too large or slot overflow)"
            )));
        }
        let total_bits = header.1 + gpu.download(&scratch.result).map_err(gpu_err)?[0] as usize;
        let used_words = (total_bits.div_ceil(32) as u64).max(1);
        let words = gpu
            .download(&out.clone().slice(0..used_words))
            .map_err(gpu_err)?;
        let mut rbsp: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
        rbsp.resize(total_bits / 8 + 1, 0);
        for (dst, src) in rbsp
            .iter_mut()
            .zip(header.0.iter().take(header.1.div_ceil(8)))
        {
            *dst |= src;
        }
        // rbsp_slice_trailing_bits: a stop bit, then zeros to the byte end.
        rbsp[total_bits / 8] |= 0x80 >> (total_bits % 8);
        Ok((rbsp, timing))
    }
}

impl EntropyCoder for GpuEntropy {
    fn slice_rbsp(
        &self,
        header: &(Vec<u8>, usize),
        picture: &CodedPicture,
    ) -> Result<Vec<u8>, H264Error> {
        self.slice_rbsp_timed(header, picture).map(|(rbsp, _)| rbsp)
    }
}
