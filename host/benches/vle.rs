//! VLE (Huffman) CPU throughput in input bytes per second: the core's
//! sequential encoder and decoder on one thread, and the all-cores CPU
//! backend (histogram + code + encode; decode), on 16 MB of generated text
//! and skewed bytes. GPU figures and ≥ 100 MB inputs come from
//! `wavelane bench vle`.
//!
//! The inputs are `wavelane::bench::vle::input`, the ones `wavelane bench
//! vle` times.
//!
//! Run: `cargo bench -p wavelane --features bench --bench vle`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use wavelane::bench::vle::input;
use wavelane::vle::sample::SampleKind;
use wavelane::vle::{cpu, VleFile, DEFAULT_CHUNK_SYMBOLS};
use wavelane_core::vle::{self as core_vle, CodeTable, DecodeTable, DEFAULT_LUT_SIZE};

const BYTES: usize = 16 << 20;

fn vle(c: &mut Criterion) {
    let mut group = c.benchmark_group("vle");
    group.throughput(Throughput::Bytes(BYTES as u64));
    group.sample_size(10);
    for kind in [SampleKind::Text, SampleKind::Skewed] {
        let name = format!("{kind:?}").to_lowercase();
        let data = input(kind, BYTES, 42);
        let table = CodeTable::from_histogram(&cpu::histogram(&data), 16).unwrap();
        let chunks = core_vle::chunk_count(data.len(), DEFAULT_CHUNK_SYMBOLS);

        let mut packed = vec![0u8; BYTES * 3];
        let mut index = vec![0u64; chunks];
        group.bench_function(BenchmarkId::new("core-encode-1-thread", &name), |b| {
            b.iter(|| {
                core_vle::encode(
                    &data,
                    &table,
                    DEFAULT_CHUNK_SYMBOLS,
                    &mut packed,
                    &mut index,
                )
                .unwrap()
            })
        });
        let bits = core_vle::encode(
            &data,
            &table,
            DEFAULT_CHUNK_SYMBOLS,
            &mut packed,
            &mut index,
        )
        .unwrap();
        let decoder = DecodeTable::<DEFAULT_LUT_SIZE>::new(&table).unwrap();
        let mut out = vec![0u8; BYTES];
        group.bench_function(BenchmarkId::new("core-decode-1-thread", &name), |b| {
            b.iter(|| {
                core_vle::decode(
                    &decoder,
                    &packed,
                    bits,
                    &index,
                    DEFAULT_CHUNK_SYMBOLS,
                    &mut out,
                )
                .unwrap()
            })
        });
        assert!(out == data, "core decode round trip");

        group.bench_function(BenchmarkId::new("cpu-encode-all-cores", &name), |b| {
            b.iter(|| {
                let table = CodeTable::from_histogram(&cpu::histogram(&data), 16).unwrap();
                cpu::encode(&data, &table, DEFAULT_CHUNK_SYMBOLS).unwrap()
            })
        });
        let encoded = cpu::encode(&data, &table, DEFAULT_CHUNK_SYMBOLS).unwrap();
        let file = encoded.file(BYTES as u64, 0).to_bytes();
        let file = VleFile::parse(&file).unwrap();
        let offsets = file.chunk_offsets();
        group.bench_function(BenchmarkId::new("cpu-decode-all-cores", &name), |b| {
            b.iter(|| {
                cpu::decode(
                    &file.table,
                    file.data,
                    file.data_bits,
                    &offsets,
                    DEFAULT_CHUNK_SYMBOLS,
                    &mut out,
                )
                .unwrap()
            })
        });
        assert!(out == data, "CPU decode round trip");
    }
    group.finish();
}

criterion_group!(benches, vle);
criterion_main!(benches);
