//! CPU-vs-GPU differential target: the same input through the CPU backend
//! and the GPU backend (whatever `Gpu::shared()` opens: lavapipe in CI, a
//! real GPU on a workstation) must give the same bytes. Inputs are kept
//! small (at most 64 Ki elements) so an execution stays in milliseconds.
//!
//! First byte: which algorithm. 0 = prefix scan, 1 = 2-D 5/3, 2 = 2-D
//! fixed-point 9/7, 3 = VLE compress (and GPU decompress of the CPU file).

use wavelane::backend::Backend;
use wavelane::dwt::{forward_2d, inverse_2d};
use wavelane::vle::{self, VleOptions};
use wavelane_core::dwt::{max_levels, Cdf53, Fixed97, ImageLayout};

use super::input::{Input, SeedWriter};
use crate::gpu;

const MAX_ELEMENTS: usize = 1 << 16;

/// The differential body.
pub fn gpu_diff(data: &[u8]) {
    let mut inp = Input::new(data);
    let gpu = Backend::Gpu(gpu());
    match inp.u8() % 4 {
        0 => scan(&mut inp, &gpu),
        1 => dwt::<Cdf53>(&mut inp, &gpu),
        2 => dwt::<Fixed97>(&mut inp, &gpu),
        _ => vle_codec(&mut inp, &gpu),
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
    out
}
