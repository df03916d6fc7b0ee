//! CAVLC CPU throughput: single blocks through the core encoder and decoder,
//! and all residual blocks of a 1280x720 picture (QP 26) through the CPU
//! entropy coder (all cores) and the stream parser (one thread). GPU
//! timings and the 1080p/4K sizes come from `wavelane bench cavlc`.
//!
//! Run: `cargo bench -p wavelane --features bench --bench cavlc`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use wavelane::bench::cavlc::{coded_blocks, synthetic_picture};
use wavelane::h264::decode::parse_stream;
use wavelane::h264::encode::{
    code_picture, encode_sequence, slice_header_bits, CpuEntropy, EncodeOptions, EntropyCoder,
};
use wavelane::h264::params::StreamParams;
use wavelane_core::bits::{BitReader, BitWriter};
use wavelane_core::cavlc::{decode_block, encode_block, BlockKind};

fn single_blocks(c: &mut Criterion) {
    let mut group = c.benchmark_group("cavlc-block");
    group.throughput(Throughput::Elements(1));
    // A typical mid-QP 4x4 block and a dense QP 0 block (scan order).
    let cases: [(&str, [i16; 16], i8); 2] = [
        (
            "sparse-nC2",
            [7, -3, 2, 0, 1, -1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
            2,
        ),
        (
            "dense-nC9",
            [90, -41, 33, 20, -17, 12, 9, -8, 6, 5, -4, 3, 2, -1, 1, 1],
            9,
        ),
    ];
    for (name, coeffs, nc) in cases {
        let mut buf = [0u8; 64];
        group.bench_function(BenchmarkId::new("encode", name), |b| {
            b.iter(|| {
                let mut w = BitWriter::new(&mut buf);
                encode_block(
                    &mut w,
                    BlockKind::Luma4x4,
                    nc,
                    std::hint::black_box(&coeffs),
                )
                .unwrap()
            })
        });
        let mut w = BitWriter::new(&mut buf);
        encode_block(&mut w, BlockKind::Luma4x4, nc, &coeffs).unwrap();
        let len = w.bit_position();
        let mut out = [0i16; 16];
        group.bench_function(BenchmarkId::new("decode", name), |b| {
            b.iter(|| {
                let mut r = BitReader::with_bit_len(std::hint::black_box(&buf), len);
                decode_block(&mut r, BlockKind::Luma4x4, nc, &mut out).unwrap()
            })
        });
    }
    group.finish();
}

fn picture_720p(c: &mut Criterion) {
    let (w, h) = (1280, 720);
    let src = synthetic_picture(w, h);
    let opts = EncodeOptions {
        qp: 26,
        ..Default::default()
    };
    let picture = code_picture(&src, &opts);
    let header = slice_header_bits(
        &StreamParams {
            width: w,
            height: h,
            qp: 26,
        },
        0,
    );
    let stream = encode_sequence(&[src], &opts, &CpuEntropy, &|| {})
        .unwrap()
        .stream;
    let mut group = c.benchmark_group("cavlc-720p-q26");
    group.throughput(Throughput::Elements(coded_blocks(&picture) as u64));
    group.sample_size(20);
    group.bench_function("cpu-encode-all-cores", |b| {
        b.iter(|| CpuEntropy.slice_rbsp(&header, &picture).unwrap())
    });
    group.bench_function("cpu-decode-1-thread", |b| {
        b.iter(|| parse_stream(&stream).unwrap())
    });
    group.finish();
}

criterion_group!(benches, single_blocks, picture_720p);
criterion_main!(benches);
