//! BPC-PaCo CPU throughput on the reference sample (1024 codeblocks of
//! 64x64, 4 Mi coefficients): the core forms on one thread, and the rayon
//! backend on all cores. GPU timings come from `wavelane bench bpc`.
//!
//! The rayon encoder's stream is checked against the sequential core's with
//! `wavelane::bench::bpc::first_stream_difference`, the check `wavelane
//! bench bpc` makes of every GPU stream.
//!
//! Run: `cargo bench -p wavelane --features bench --bench bpc`.

use std::io::Read;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use wavelane::bench::bpc::first_stream_difference;
use wavelane::bpc::{cpu, CodeblockBatch, RefFile};
use wavelane_core::bpc::{self, CodingParams, DecodeLimits, Mode, ProbabilityTables, Scratch};

fn sample() -> CodeblockBatch {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/bpc/sample-codeblocks.bin.gz"
    );
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut bytes)
        .expect("gunzip sample");
    CodeblockBatch::from_ref(&RefFile::parse(&bytes).expect("sample parses"))
}

fn bench(c: &mut Criterion) {
    let batch = sample();
    let coefficients = batch.coefficient_count() as u64;
    for mode in [Mode::TwoPass, Mode::ThreePass] {
        let tables = ProbabilityTables::reference(mode);
        let mut group = c.benchmark_group(format!("bpc-{}pass", mode.passes()));
        group.throughput(Throughput::Elements(coefficients));
        group.sample_size(10);
        let mut scratch = Scratch::<64>::new();
        let mut out = vec![0u16; bpc::max_codewords_any(64, 64)];
        group.bench_function("encode-sequential-1thread", |b| {
            b.iter(|| {
                for i in 0..batch.len() {
                    let params = CodingParams::new(tables, batch.blocks[i].group);
                    let block = batch.block(i).unwrap();
                    bpc::encode_sequential(&block, &params, &mut scratch, &mut out, None).unwrap();
                }
            })
        });
        group.bench_function("encode-lanes-1thread", |b| {
            b.iter(|| {
                for i in 0..batch.len() {
                    let params = CodingParams::new(tables, batch.blocks[i].group);
                    let block = batch.block(i).unwrap();
                    bpc::encode_lanes(&block, &params, &mut scratch, &mut out, None, 32).unwrap();
                }
            })
        });
        let encoded = cpu::encode(&batch, tables, cpu::CoreForm::Sequential).unwrap();
        let lanes = cpu::encode(&batch, tables, cpu::CoreForm::Lanes).unwrap();
        assert_eq!(
            first_stream_difference(std::slice::from_ref(&encoded), &[lanes]),
            None,
            "the core forms differ"
        );
        group.bench_function("decode-sequential-1thread", |b| {
            let mut decoded = vec![0i32; 64 * 64];
            b.iter(|| {
                for i in 0..batch.len() {
                    let params = CodingParams::new(tables, batch.blocks[i].group);
                    let (top, words) = encoded.block(i);
                    let dst = bpc::CodeblockMut::new(&mut decoded, 64, 64, 64).unwrap();
                    bpc::decode_sequential(
                        &params,
                        top,
                        words,
                        DecodeLimits::ALL,
                        dst,
                        &mut scratch,
                    )
                    .unwrap();
                }
            })
        });
        group.bench_function("decode-phases-1thread", |b| {
            let mut decoded = vec![0i32; 64 * 64];
            let mut mags = bpc::LaneMagnitudes::<64>::new();
            b.iter(|| {
                for i in 0..batch.len() {
                    let params = CodingParams::new(tables, batch.blocks[i].group);
                    let (top, words) = encoded.block(i);
                    let dst = bpc::CodeblockMut::new(&mut decoded, 64, 64, 64).unwrap();
                    bpc::decode_phases(
                        &params,
                        top,
                        words,
                        DecodeLimits::ALL,
                        dst,
                        &mut scratch,
                        &mut mags,
                    )
                    .unwrap();
                }
            })
        });
        group.bench_function("encode-rayon", |b| {
            b.iter(|| cpu::encode(&batch, tables, cpu::CoreForm::Sequential).unwrap())
        });
        group.bench_function("decode-rayon", |b| {
            b.iter(|| {
                cpu::decode(&batch, &encoded, tables, None, cpu::CoreForm::Sequential).unwrap()
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
