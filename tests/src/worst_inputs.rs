//! Worst-case-shaped decoder inputs of a chosen size and the decode calls
//! that consume them, shared by the heap tests (`tests/decoder_bounds.rs`)
//! and the decode-time scaling bench (`benches/decoder_scaling.rs`).

use wavelane::backend::Backend;
use wavelane::bpc::{cpu as bpc_cpu, formats as bpc_formats, BlockDesc, CodeblockBatch};
use wavelane::h264::decode::parse_stream;
use wavelane::h264::nal::{write_nal, NAL_IDR_SLICE, NAL_PPS, NAL_SPS};
use wavelane::vle::{self, VleOptions};
use wavelane_core::bits::BitWriter;
use wavelane_core::bpc::{DecodeLimits, Mode, ProbabilityTables};

/// The worst case for a `.wlv` decoder: 1-bit codes (two symbols) and the
/// smallest chunks, so the output is 8 bytes and the chunk index 1 entry
/// per 4 bytes of file.
pub fn vle_worst(symbols: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9u32;
    let data: Vec<u8> = (0..symbols)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            b'a' + (x & 1) as u8
        })
        .collect();
    let opts = VleOptions {
        max_len: 16,
        chunk_symbols: 32,
    };
    vle::compress(&data, &Backend::Cpu, &opts).unwrap()
}

/// Decompresses a `.wlv` file on the CPU; the result is not needed.
pub fn vle_decompress(file: &[u8]) {
    let _ = vle::decompress(file, &Backend::Cpu);
}

/// `n` full-size codeblocks (64 x 64, top bitplane 27) of pseudo-random
/// codewords: the most work the decoder can be given per codeblock.
pub fn bpc_worst(n: usize, words_per_block: usize) -> (CodeblockBatch, Vec<u8>) {
    let mut batch = CodeblockBatch::default();
    let mut file = Vec::new();
    let mut x = 0x1234_5678u32;
    for i in 0..n {
        batch.blocks.push(BlockDesc {
            offset: i * 4096,
            stride: 64,
            width: 64,
            height: 64,
            group: i % 16,
        });
        file.push(27);
        file.extend_from_slice(&(words_per_block as u32).to_le_bytes());
        for _ in 0..2 * words_per_block {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            file.push(x as u8);
        }
    }
    batch.coefficients = vec![0; n * 4096];
    (batch, file)
}

/// Reads an encoded codeblock file and decodes it with the geometry of `like`.
pub fn bpc_decode(like: &CodeblockBatch, file: &[u8]) {
    let tables = ProbabilityTables::reference(Mode::ThreePass);
    if let Ok(enc) = bpc_formats::read_encoded(file, like.len()) {
        let _ = bpc_cpu::decode_with_limits(
            like,
            &enc,
            tables,
            DecodeLimits::ALL,
            bpc_cpu::CoreForm::Sequential,
        );
    }
}

/// SPS of a `mb_w` x `mb_h` picture and our PPS, as the encoder writes them.
pub fn h264_headers(mb_w: u32, mb_h: u32) -> Vec<u8> {
    let mut buf = [0u8; 64];
    let mut w = BitWriter::new(&mut buf);
    w.write_bits(66, 8).unwrap(); // Baseline
    w.write_bits(0xc0, 8).unwrap();
    w.write_bits(52, 8).unwrap();
    w.write_ue(0).unwrap(); // sps id
    w.write_ue(0).unwrap(); // log2_max_frame_num_minus4
    w.write_ue(2).unwrap(); // poc type 2
    w.write_ue(1).unwrap(); // max_num_ref_frames
    w.write_bit(false).unwrap();
    w.write_ue(mb_w - 1).unwrap();
    w.write_ue(mb_h - 1).unwrap();
    w.write_bit(true).unwrap(); // frame_mbs_only
    w.write_bit(true).unwrap();
    w.write_bit(false).unwrap(); // no cropping
    w.write_bit(false).unwrap(); // no VUI
    w.write_trailing_bits().unwrap();
    let n = w.byte_len();
    let mut out = Vec::new();
    write_nal(&mut out, 3, NAL_SPS, &buf[..n]);
    write_nal(
        &mut out,
        3,
        NAL_PPS,
        &wavelane::h264::params::pps_rbsp().unwrap(),
    );
    out
}

/// An IDR slice starting at macroblock 0 with `mbs` cheapest macroblocks
/// (I_16x16, no coded residual: 6 bits each) and then `zeros` zero bytes
/// after the stop bit.
pub fn h264_slice(mbs: usize, zeros: usize) -> Vec<u8> {
    let mut buf = vec![0u8; mbs + 64];
    let mut w = BitWriter::new(&mut buf);
    w.write_ue(0).unwrap(); // first_mb_in_slice
    w.write_ue(7).unwrap(); // I slice
    w.write_ue(0).unwrap(); // pps id
    w.write_bits(0, 4).unwrap(); // frame_num
    w.write_ue(0).unwrap(); // idr_pic_id
    w.write_bits(0, 2).unwrap();
    w.write_se(0).unwrap(); // slice_qp_delta
    w.write_ue(1).unwrap(); // deblocking off
    for _ in 0..mbs {
        w.write_ue(1).unwrap(); // I_16x16_0_0_0
        w.write_ue(0).unwrap(); // intra_chroma_pred_mode
        w.write_se(0).unwrap(); // mb_qp_delta
        w.write_bit(true).unwrap(); // Intra16x16DCLevel: coeff_token TotalCoeff 0 (nC 0)
    }
    w.write_trailing_bits().unwrap();
    let n = w.byte_len();
    let mut rbsp = buf[..n].to_vec();
    rbsp.extend(std::iter::repeat_n(0u8, zeros));
    let mut out = Vec::new();
    write_nal(&mut out, 3, NAL_IDR_SLICE, &rbsp);
    // split_nals drops zero bytes at the end of a NAL unit; the
    // emulation-prevention bytes written for the zeros keep most of them.
    out
}

/// Parses an Annex B stream; the result is not needed.
pub fn h264_parse(stream: &[u8]) {
    let _ = parse_stream(stream);
}
