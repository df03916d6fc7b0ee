//! CPU-vs-GPU differential target: the same input through the CPU backend
//! and the GPU backend (whatever `Gpu::shared()` opens: lavapipe in CI, a
//! real GPU on a workstation) must give the same bytes. Inputs are kept
//! small (at most 64 Ki elements) so an execution stays in milliseconds.
//!
//! First byte: which algorithm. 0 = prefix scan, 1 = 2-D 5/3, 2 = 2-D
//! fixed-point 9/7, 3 = VLE compress (and GPU decompress of the CPU file),
//! 4 = BPC-PaCo encode with the rate-control records and cut decreases,
//! 5 = BPC-PaCo decode of the CPU's stream, truncated, 6 = a whole `.wl`
//! encode (any mode, wavelet 5/3 or fixed-point 9/7, 1..=4 components,
//! 1..=16 bits, odd sizes) and its decode, 7 = the decode of that file
//! after a byte of it was changed (the same image or the same error).

use wavelane::backend::Backend;
use wavelane::bpc::{cpu, gpu as bpc_gpu, BlockDesc, CodeblockBatch};
use wavelane::codec::file::ReadOptions;
use wavelane::codec::{self, DecodeOptions, EncodeOptions, Image, Interleaved, RateTarget};
use wavelane::dwt::{forward_2d, inverse_2d};
use wavelane::vle::{self, VleOptions};
use wavelane_core::bpc::{DecodeLimits, Mode, ProbabilityTables, GROUPS};
use wavelane_core::dwt::{max_levels, Cdf53, Fixed97, ImageLayout, Wavelet};

use super::input::{Input, SeedWriter};
use crate::gpu;

const MAX_ELEMENTS: usize = 1 << 16;

/// The differential body.
pub fn gpu_diff(data: &[u8]) {
    let mut inp = Input::new(data);
    let gpu = Backend::Gpu(gpu());
    match inp.u8() % 8 {
        0 => scan(&mut inp, &gpu),
        1 => dwt::<Cdf53>(&mut inp, &gpu),
        2 => dwt::<Fixed97>(&mut inp, &gpu),
        3 => vle_codec(&mut inp, &gpu),
        4 => bpc_encode(&mut inp, &gpu),
        5 => bpc_decode(&mut inp, &gpu),
        6 => wl_codec(&mut inp, &gpu, false),
        _ => wl_codec(&mut inp, &gpu, true),
    }
}

fn words(raw: &[u8]) -> impl Iterator<Item = u32> + '_ {
    raw.chunks(4)
        .take(MAX_ELEMENTS)
        .map(|c| c.iter().rev().fold(0u32, |a, &b| a << 8 | b as u32))
}

fn scan(inp: &mut Input<'_>, gpu: &Backend) {
    let values: Vec<u32> = words(inp.rest()).collect();
    if values.is_empty() {
        return;
    }
    let mut cpu = values.clone();
    let total = wavelane::backend::cpu::exclusive_scan(&mut cpu);
    let device = gpu.gpu().expect("GPU backend");
    let buf = device.upload(&values).expect("upload");
    let (gpu_total, _) = device
        .exclusive_scan(&buf, values.len() as u32)
        .expect("GPU scan");
    assert_eq!(gpu_total, total, "scan total");
    assert_eq!(device.download(&buf).expect("download"), cpu, "scan values");
}

fn dwt<W: wavelane::dwt::HostWavelet<HostSample = i32>>(inp: &mut Input<'_>, gpu: &Backend) {
    let width = inp.range(1, 256);
    let height = inp.range(1, 256).min(MAX_ELEMENTS / width).max(1);
    let levels = inp.range(0, 8).min(max_levels(width, height) as usize) as u32;
    let bits = inp.range(1, 16) as u32;
    let half = 1i32 << (bits - 1);
    let mut raw = words(inp.rest());
    let image: Vec<i32> = (0..width * height)
        .map(|_| (raw.next().unwrap_or(0) as i32).rem_euclid(2 * half) - half)
        .collect();
    let layout = ImageLayout::new(width, height);
    let mut on_cpu = image.clone();
    forward_2d::<W>(&Backend::Cpu, &mut on_cpu, layout, levels).expect("CPU forward");
    let mut on_gpu = image.clone();
    forward_2d::<W>(gpu, &mut on_gpu, layout, levels).expect("GPU forward");
    assert_eq!(on_gpu, on_cpu, "forward {width}x{height} L{levels}");
    inverse_2d::<W>(gpu, &mut on_gpu, layout, levels).expect("GPU inverse");
    assert_eq!(on_gpu, image, "GPU inverse {width}x{height} L{levels}");
}

fn vle_codec(inp: &mut Input<'_>, gpu: &Backend) {
    let max_len = inp.range(8, 24) as u32;
    let chunk_symbols = 32 * inp.range(1, 64);
    let rest = inp.rest();
    let data = &rest[..rest.len().min(MAX_ELEMENTS)];
    let opts = VleOptions {
        max_len,
        chunk_symbols,
    };
    let on_cpu = vle::compress(data, &Backend::Cpu, &opts).expect("CPU compress");
    let on_gpu = vle::compress(data, gpu, &opts).expect("GPU compress");
    assert_eq!(on_gpu, on_cpu, "VLE file");
    assert_eq!(
        vle::decompress(&on_cpu, gpu).expect("GPU decompress"),
        data,
        "GPU decompress"
    );
}

/// Up to four codeblocks of up to 64x64 (magnitudes up to `bits` bits,
/// zeros where a byte says so) and tables of the mode the input picks.
fn bpc_batch(inp: &mut Input<'_>) -> (CodeblockBatch, &'static ProbabilityTables) {
    let mode = if inp.bool() {
        Mode::ThreePass
    } else {
        Mode::TwoPass
    };
    let count = inp.range(1, 4);
    let mut batch = CodeblockBatch::default();
    let mut shapes = Vec::with_capacity(count);
    for _ in 0..count {
        shapes.push((inp.range(1, 64), inp.range(1, 64), inp.range(1, 27) as u32));
    }
    let mut raw = words(inp.rest());
    for (width, height, bits) in shapes {
        let offset = batch.coefficients.len();
        for _ in 0..width * height {
            let w = raw.next().unwrap_or(0);
            // Low byte: zero (a third) or not; the rest: the value.
            let mag = if w.is_multiple_of(3) {
                0
            } else {
                ((w >> 8) & ((1 << bits) - 1)) as i32
            };
            batch.coefficients.push(if w & 4 != 0 { -mag } else { mag });
        }
        batch.blocks.push(BlockDesc {
            offset,
            stride: width,
            width,
            height,
            group: batch.blocks.len() % GROUPS,
        });
    }
    (batch, ProbabilityTables::natural_lossless(mode))
}

fn bpc_encode(inp: &mut Input<'_>, gpu: &Backend) {
    let (batch, tables) = bpc_batch(inp);
    let device = gpu.gpu().expect("GPU backend");
    let (on_cpu, (records, cuts)) = cpu::encode_with_cuts(&batch, tables).expect("CPU encode");
    let (on_gpu, (gpu_records, gpu_cuts), _) =
        bpc_gpu::encode_with_cuts(device, &batch, tables).expect("GPU encode with cuts");
    assert_eq!(on_gpu, on_cpu, "BPC codewords (records build)");
    assert_eq!(gpu_records, records, "BPC pass records");
    assert_eq!(gpu_cuts, cuts, "BPC cut decreases");
    let (plain, _) = bpc_gpu::encode(device, &batch, tables).expect("GPU encode");
    assert_eq!(plain, on_cpu, "BPC codewords");
}

fn bpc_decode(inp: &mut Input<'_>, gpu: &Backend) {
    let max_codewords = inp.u16() as usize;
    let max_passes = inp.range(0, 90);
    let (batch, tables) = bpc_batch(inp);
    let device = gpu.gpu().expect("GPU backend");
    let encoded = cpu::encode(&batch, tables, cpu::CoreForm::Sequential).expect("CPU encode");
    let limits = DecodeLimits {
        max_codewords,
        max_passes,
    };
    let on_cpu =
        cpu::decode_with_limits(&batch, &encoded, tables, limits, cpu::CoreForm::Sequential)
            .expect("CPU decode");
    let (values, decoded, _) =
        bpc_gpu::decode(device, &batch, &encoded, tables, limits).expect("GPU decode");
    assert_eq!(values, on_cpu.0, "BPC decoded coefficients");
    assert_eq!(decoded, on_cpu.1, "BPC decode summaries");
}

/// A small image and encode options from the input: size up to 48x40,
/// 1..=4 components of 1..=16 bits, lossless, a byte target or a PSNR
/// target, 5/3 or fixed-point 9/7 (the wavelets whose files are the same
/// on every backend), 2 or 3 passes, 1..=3 layers.
fn wl_case(inp: &mut Input<'_>) -> (Image, EncodeOptions) {
    let width = inp.range(1, 48);
    let height = inp.range(1, 40);
    let comps = inp.range(1, 4);
    let bits = inp.range(1, 16) as u8;
    let target = match inp.u8() % 3 {
        0 => RateTarget::Lossless,
        1 => RateTarget::Bpp(0.25 + inp.range(0, 31) as f64 / 4.0),
        _ => RateTarget::Psnr(20.0 + inp.range(0, 40) as f64),
    };
    let wavelet = match (target, inp.u8() % 2) {
        (RateTarget::Lossless, _) | (_, 0) => Wavelet::Cdf53,
        _ => Wavelet::Fixed97,
    };
    let passes = 2 + inp.range(0, 1) as u8;
    let layers = match target {
        RateTarget::Lossless => 1,
        _ => inp.range(1, 3) as u8,
    };
    let span = 1u32 << bits;
    let mut raw = words(inp.rest());
    let samples: Vec<i32> = (0..width * height * comps)
        .map(|_| (raw.next().unwrap_or(0) % span) as i32)
        .collect();
    let image = Image::from_fn(width, height, comps, bits, |x, y, c| {
        samples[(c * height + y) * width + x]
    });
    let options = EncodeOptions {
        target,
        wavelet: Some(wavelet),
        passes,
        layers,
        ..EncodeOptions::default()
    };
    (image, options)
}

/// A whole `.wl` encode on both backends gives the same file, and its
/// decode on both the same image; with `damage`, a byte of the file is
/// changed first (CRCs unchecked, so the change reaches the decoder) and
/// both backends give the same image or both an error.
fn wl_codec(inp: &mut Input<'_>, gpu: &Backend, damage: bool) {
    let at = inp.u16() as usize;
    let flip = inp.u8() | 1;
    let (image, options) = wl_case(inp);
    let on_cpu = codec::encode(&image, &options, &Backend::Cpu).expect("CPU encode");
    let on_gpu = codec::encode(&image, &options, gpu).expect("GPU encode");
    assert_eq!(on_gpu.bytes, on_cpu.bytes, ".wl file {options:?}");
    let interleaved = Interleaved::from_image(&image);
    let from_samples = codec::encode_interleaved(&interleaved, &options, gpu).expect("GPU encode");
    assert_eq!(
        from_samples.bytes, on_cpu.bytes,
        "interleaved .wl file {options:?}"
    );
    let mut file = on_cpu.bytes;
    if damage {
        let at = at % file.len();
        file[at] ^= flip;
    }
    let read = DecodeOptions {
        read: ReadOptions {
            max_samples: 1 << 16,
            check_crc: !damage,
        },
        ..DecodeOptions::default()
    };
    let a = codec::decode(&file, &read, &Backend::Cpu);
    let b = codec::decode(&file, &read, gpu);
    // The GPU's interleaved download: the same samples, or an error too.
    match (&a, codec::decode_interleaved(&file, &read, gpu)) {
        (Ok(a), Ok(c)) => assert!(c.image == Interleaved::from_image(&a.image), "interleaved"),
        (Err(_), Err(_)) => {}
        (a, c) => panic!("interleaved: {:?} against {:?}", a.is_ok(), c.map(|_| ())),
    }
    match (a, b) {
        (Ok(a), Ok(b)) => {
            assert_eq!(b.image, a.image, "decoded image");
            if options.target == RateTarget::Lossless && !damage {
                assert_eq!(a.image, image, "lossless round trip");
            }
        }
        (Err(_), Err(_)) => assert!(damage, "the decode of an intact file failed"),
        (a, b) => panic!(
            "CPU and GPU disagree: {:?} against {:?}",
            a.map(|_| ()),
            b.map(|_| ())
        ),
    }
}

/// Seeds: each algorithm on a few shapes.
pub fn seeds() -> Vec<Vec<u8>> {
    let payload: Vec<u8> = (0..4000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut out = vec![
        SeedWriter::new().u8(0).bytes(&payload).finish(),
        SeedWriter::new()
            .u8(3)
            .u8(8)
            .u8(3)
            .bytes(b"abracadabra, abracadabra")
            .finish(),
        SeedWriter::new()
            .u8(3)
            .u8(16)
            .u8(0)
            .bytes(&payload)
            .finish(),
    ];
    for (alg, w, h, levels, bits) in [
        (1u8, 37u8, 21u8, 3u8, 8u8),
        (2, 64, 64, 5, 12),
        (1, 1, 9, 2, 16),
        (2, 33, 1, 4, 1),
    ] {
        out.push(
            SeedWriter::new()
                .u8(alg)
                .u8(w - 1)
                .u8(h - 1)
                .u8(levels)
                .u8(bits - 1)
                .bytes(&payload)
                .finish(),
        );
    }
    // BPC-PaCo: (mode, count, then width - 1, height - 1, bits - 1 per
    // codeblock); decode first takes its codeword and pass limits.
    let bpc = |mode: u8, blocks: &[(u8, u8, u8)]| {
        let mut w = SeedWriter::new().u8(mode).u8(blocks.len() as u8 - 1);
        for &(width, height, bits) in blocks {
            w = w.u8(width - 1).u8(height - 1).u8(bits - 1);
        }
        w.bytes(&payload)
    };
    out.push(
        SeedWriter::new()
            .u8(4)
            .bytes(&bpc(1, &[(64, 16, 16), (3, 5, 27)]).finish())
            .finish(),
    );
    out.push(
        SeedWriter::new()
            .u8(4)
            .bytes(&bpc(0, &[(17, 9, 8)]).finish())
            .finish(),
    );
    out.push(
        SeedWriter::new()
            .u8(5)
            .u16(40)
            .u8(7)
            .bytes(&bpc(1, &[(64, 8, 12), (5, 30, 3)]).finish())
            .finish(),
    );
    // .wl files: (damage offset, flip, width - 1, height - 1, components -
    // 1, bits - 1, target kind, rate, wavelet, passes - 2, layers - 1):
    // lossless RGB, 1 bpp 3-pass 9/7 with 2 layers, PSNR gray 12-bit, and
    // the damaged decode of a lossy and of a lossless file.
    for (alg, case) in [
        (6u8, [0u8, 0, 23, 16, 2, 7, 0, 0, 0, 0, 0]),
        (6, [0, 0, 40, 30, 2, 7, 1, 3, 1, 1, 1]),
        (6, [0, 0, 12, 20, 0, 11, 2, 15, 0, 0, 0]),
        (7, [0, 90, 5, 31, 12, 0, 3, 1, 7, 1, 0]),
        (7, [0, 200, 3, 17, 17, 3, 9, 0, 0, 0, 0]),
    ] {
        out.push(
            SeedWriter::new()
                .u8(alg)
                .bytes(&case)
                .bytes(&payload)
                .finish(),
        );
    }
    out
}
