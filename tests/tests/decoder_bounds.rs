//! Decoder hardening: heap use bounded by the input size, and decode time
//! that grows linearly with it, for worst-case-shaped inputs of growing
//! size (docs/fuzzing.md records the measured bounds).
//!
//! Memory is measured with a counting global allocator. Time is compared
//! between sizes only (no absolute limits): the cost per input byte of the
//! largest input may be at most 4 times that of the smallest, whereas a
//! quadratic decoder shows 16 times over the 16x size range. Fixed costs
//! only make small inputs look slower per byte, so they cannot cause a
//! false failure. Tests run one at a time (a lock) so they neither share
//! the allocator counters nor the CPU.

use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use wavelane::backend::Backend;
use wavelane::bpc::{cpu as bpc_cpu, formats as bpc_formats, BlockDesc, CodeblockBatch};
use wavelane::h264::decode::parse_stream;
use wavelane::h264::nal::{write_nal, NAL_IDR_SLICE, NAL_PPS, NAL_SPS};
use wavelane::vle::{self, VleOptions};
use wavelane_core::bits::BitWriter;
use wavelane_core::bpc::{DecodeLimits, Mode, ProbabilityTables};
use wavelane_tests::alloc_meter::{measure, HeapUse, Meter};

#[global_allocator]
static ALLOC: Meter = Meter;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// Every prefix length that matters: all of the first 64 bytes, then a
/// spread.
fn truncations(data: &[u8]) -> Vec<Vec<u8>> {
    let mut lens: Vec<usize> = (0..data.len().min(64)).collect();
    lens.extend((1..16).map(|k| data.len() * k / 16));
    lens.into_iter().map(|n| data[..n].to_vec()).collect()
}

/// Checks `peak <= per_byte * len + fixed` for every input; returns the
/// worst `(len, use)` for the report.
fn assert_heap_bound(
    what: &str,
    inputs: &[Vec<u8>],
    per_byte: usize,
    fixed: usize,
    decode: impl Fn(&[u8]),
) {
    let mut worst: Option<(usize, HeapUse)> = None;
    for input in inputs {
        let ((), used) = measure(|| decode(input));
        let bound = per_byte * input.len() + fixed;
        assert!(
            used.peak <= bound,
            "{what}: a {}-byte input took {} bytes of heap (bound {per_byte} x len + {fixed} = {bound})",
            input.len(),
            used.peak
        );
        if worst.is_none_or(|(l, u)| {
            used.peak.saturating_sub(fixed) * l.max(1)
                > u.peak.saturating_sub(fixed) * input.len().max(1)
        }) {
            worst = Some((input.len(), used));
        }
    }
    if let Some((len, u)) = worst {
        eprintln!(
            "{what}: worst input {len} bytes: peak {} bytes, largest allocation {} bytes",
            u.peak, u.largest
        );
    }
}

/// Fastest of three runs, in seconds.
fn time(decode: &impl Fn(&[u8]), input: &[u8]) -> f64 {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            decode(input);
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Inputs of growing size (smallest to largest, 16x apart or more) must
/// decode in time roughly proportional to their size.
fn assert_linear_time(what: &str, inputs: &[Vec<u8>], decode: impl Fn(&[u8])) {
    let (small, large) = (inputs.first().unwrap(), inputs.last().unwrap());
    assert!(
        large.len() >= 16 * small.len(),
        "{what}: sizes too close to tell"
    );
    decode(small); // warm up (thread pools, lazy tables)
    let per_byte = |i: &Vec<u8>| time(&decode, i) / i.len() as f64;
    let (s, l) = (per_byte(small), per_byte(large));
    eprintln!(
        "{what}: {:.1} ns/byte at {} bytes, {:.1} ns/byte at {} bytes",
        s * 1e9,
        small.len(),
        l * 1e9,
        large.len()
    );
    assert!(
        l <= 4.0 * s,
        "{what}: decode time grows faster than the input: {:.1} ns/byte at {} bytes vs {:.1} at {}",
        l * 1e9,
        large.len(),
        s * 1e9,
        small.len()
    );
}

// ---------------------------------------------------------------- VLE

/// The worst case for a `.wlv` decoder: 1-bit codes (two symbols) and the
/// smallest chunks, so the output is 8 bytes and the chunk index 1 entry
/// per 4 bytes of file.
fn vle_worst(symbols: usize) -> Vec<u8> {
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

fn vle_decompress(file: &[u8]) {
    let _ = vle::decompress(file, &Backend::Cpu);
}

#[test]
fn vle_decompress_heap_is_linear_in_the_file() {
    let _s = serial();
    let mut inputs = corpus("vle_decode");
    for f in corpus("vle_decode") {
        inputs.extend(truncations(&f));
    }
    for n in [32, 1000, 1 << 14, 1 << 18, 1 << 21] {
        inputs.push(vle_worst(n));
    }
    // Output 8 bytes, chunk offsets 2 and chunk lengths 1 per file byte.
    assert_heap_bound("vle::decompress", &inputs, 12, 256 << 10, vle_decompress);
}

#[test]
fn vle_decompress_time_is_linear() {
    let _s = serial();
    let inputs: Vec<Vec<u8>> = [1 << 17, 1 << 19, 1 << 21]
        .into_iter()
        .map(vle_worst)
        .collect();
    assert_linear_time("vle::decompress", &inputs, vle_decompress);
}

// ---------------------------------------------------------------- BPC-PaCo

/// `n` full-size codeblocks (64 x 64, top bitplane 27) of pseudo-random
/// codewords: the most work the decoder can be given per codeblock.
fn bpc_worst(n: usize, words_per_block: usize) -> (CodeblockBatch, Vec<u8>) {
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

fn bpc_decode(like: &CodeblockBatch, file: &[u8]) {
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

#[test]
fn bpc_read_encoded_heap_is_linear_in_the_file() {
    let _s = serial();
    // The codeblock geometry comes from the container, not from these
    // bytes: the output (4 bytes per coefficient) is the caller's; the
    // bound is on what the bytes add: codewords, offsets and per-thread
    // decode buffers.
    let mut inputs = Vec::new();
    for n in [1, 4, 16] {
        for words in [0, 1, 100, 5000] {
            inputs.push(bpc_worst(n, words));
        }
    }
    let mut worst = 0usize;
    for (like, file) in &inputs {
        let output = 4 * like.coefficients.len();
        let ((), used) = measure(|| bpc_decode(like, file));
        let own = used.peak.saturating_sub(2 * output);
        assert!(
            own <= 4 * file.len() + (1 << 20),
            "BPC-PaCo decode of {} bytes took {} bytes beyond twice its output",
            file.len(),
            used.peak
        );
        worst = worst.max(own);
    }
    eprintln!("bpc read_encoded + decode: worst {worst} bytes beyond twice the output");
    // Arbitrary bytes as an encoded file: never more than the file holds.
    let mut garbage = corpus("bpc_decode");
    garbage.extend(truncations(&bpc_worst(2, 300).1));
    let like = bpc_worst(2, 0).0;
    assert_heap_bound("bpc read_encoded", &garbage, 4, 1 << 20, |f| {
        let _ = bpc_formats::read_encoded(f, like.len());
    });
}

#[test]
fn bpc_decode_time_is_linear() {
    let _s = serial();
    let small = bpc_worst(2, 3000);
    let large = bpc_worst(32, 3000);
    let inputs = vec![small.1.clone(), large.1.clone()];
    assert_linear_time("BPC-PaCo batch decode", &inputs, |f| {
        let like = if f.len() == small.1.len() {
            &small.0
        } else {
            &large.0
        };
        bpc_decode(like, f)
    });
}

// ---------------------------------------------------------------- H.264

/// SPS of a `mb_w` x `mb_h` picture and our PPS, as the encoder writes them.
fn h264_headers(mb_w: u32, mb_h: u32) -> Vec<u8> {
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
fn h264_slice(mbs: usize, zeros: usize) -> Vec<u8> {
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

fn h264_parse(stream: &[u8]) {
    let _ = parse_stream(stream);
}

#[test]
fn h264_parse_heap_is_linear_in_the_stream() {
    let _s = serial();
    let mut inputs = corpus("cavlc_decode")
        .into_iter()
        .take(4)
        .collect::<Vec<_>>();
    // A whole 32x32-macroblock picture, and its truncations.
    let mut full = h264_headers(32, 32);
    full.extend(h264_slice(1024, 0));
    inputs.extend(truncations(&full));
    // The largest picture the parser accepts, announced by a 20-byte SPS,
    // then slices that each start a new picture with one macroblock.
    for pictures in [1, 2, 4] {
        let mut s = h264_headers(1024, 136);
        for _ in 0..pictures {
            s.extend(h264_slice(1, 0));
        }
        inputs.push(s);
    }
    assert_heap_bound("h264 parse_stream", &inputs, 1024, 1 << 20, h264_parse);
}

#[test]
fn h264_parse_time_is_linear() {
    let _s = serial();
    let stream = |n: usize| {
        let mut s = h264_headers(16, n.div_ceil(16) as u32);
        s.extend(h264_slice(n, n));
        s
    };
    let inputs: Vec<Vec<u8>> = [1000, 16000].into_iter().map(stream).collect();
    assert_linear_time("h264 parse_stream", &inputs, h264_parse);
}
