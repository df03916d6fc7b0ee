//! DWT CPU throughput: the core transforms on one thread (minimal scratch,
//! as on an MCU, and a 64-column scratch), and the rayon backend on all
//! cores, 5 levels of a 2048x2048 image. GPU timings come from
//! `wavelane bench dwt --backend gpu`.
//!
//! The image is `wavelane::bench::dwt::noise_image`, the one
//! `wavelane bench dwt` times.
//!
//! Run: `cargo bench -p wavelane --features bench --bench dwt`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use wavelane::backend::Backend;
use wavelane::bench::dwt::noise_image;
use wavelane::dwt::{self, HostWavelet};
use wavelane_core::dwt::{forward_2d, inverse_2d, Cdf53, Cdf97, Fixed97, ImageLayout};

const SIDE: usize = 2048;
const LEVELS: u32 = 5;

fn image<T>(convert: impl Fn(i32) -> T) -> Vec<T> {
    noise_image(SIDE * SIDE).into_iter().map(convert).collect()
}

fn bench_wavelet<W: HostWavelet>(c: &mut Criterion, name: &str, input: Vec<W::Sample>) {
    let layout = ImageLayout::new(SIDE, SIDE);
    let mut group = c.benchmark_group(format!("dwt-{name}-{SIDE}x{SIDE}-L{LEVELS}"));
    group.throughput(Throughput::Elements((SIDE * SIDE) as u64));
    group.sample_size(10);
    let mut data = input.clone();
    for (label, scratch_len) in [
        ("core-1thread-min-scratch", SIDE),
        ("core-1thread-64col-scratch", 64 * SIDE),
    ] {
        let mut scratch = vec![W::Sample::default(); scratch_len];
        group.bench_function(BenchmarkId::new("forward", label), |b| {
            b.iter(|| {
                data.copy_from_slice(&input);
                forward_2d::<W>(&mut data, layout, LEVELS, &mut scratch).unwrap();
            })
        });
    }
    group.bench_function(BenchmarkId::new("forward", "cpu-rayon"), |b| {
        b.iter(|| {
            data.copy_from_slice(&input);
            dwt::forward_2d::<W>(&Backend::Cpu, &mut data, layout, LEVELS).unwrap();
        })
    });
    let mut coeffs = input.clone();
    dwt::forward_2d::<W>(&Backend::Cpu, &mut coeffs, layout, LEVELS).unwrap();
    let mut scratch = vec![W::Sample::default(); 64 * SIDE];
    group.bench_function(
        BenchmarkId::new("inverse", "core-1thread-64col-scratch"),
        |b| {
            b.iter(|| {
                data.copy_from_slice(&coeffs);
                inverse_2d::<W>(&mut data, layout, LEVELS, &mut scratch).unwrap();
            })
        },
    );
    group.bench_function(BenchmarkId::new("inverse", "cpu-rayon"), |b| {
        b.iter(|| {
            data.copy_from_slice(&coeffs);
            dwt::inverse_2d::<W>(&Backend::Cpu, &mut data, layout, LEVELS).unwrap();
        })
    });
    group.bench_function("copy-reference", |b| {
        b.iter(|| data.copy_from_slice(&input))
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    bench_wavelet::<Cdf53>(c, "53", image(|v| v));
    bench_wavelet::<Fixed97>(c, "97i", image(|v| v));
    bench_wavelet::<Cdf97>(c, "97", image(|v| v as f32));
}

criterion_group!(benches, bench);
criterion_main!(benches);
