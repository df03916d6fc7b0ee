//! Byte compatibility with the published BPC-PaCo reference encoder.
//!
//! `tests/data/bpc/reference-output-{2,3}pass.bin.gz` are what the reference
//! encoder wrote for the sample (`sample-codeblocks.bin.gz`) with its own
//! tables: per codeblock u8 `M`, u32 little-endian codeword count, then the
//! codewords as u16 big-endian (docs/bpc-paco.md describes the coder; the
//! record layout is the `encoded blocks` format of docs/format.md). The CPU
//! and GPU encoders must write these files byte for byte, and decoding them
//! must give back the sample exactly. The files are parsed here by the test
//! itself, not by the library's reader, so that a bug shared by the
//! library's writer and reader cannot hide a difference.

mod bpc_common;

use std::io::Read;

use bpc_common::sample;
use wavelane::bpc::{cpu, formats, gpu, CodeblockBatch, EncodedBatch};
use wavelane_core::bpc::{DecodeLimits, Mode, ProbabilityTables};
use wavelane_tests::{assert_same, gpu as test_gpu};

const MODES: [Mode; 2] = [Mode::TwoPass, Mode::ThreePass];

fn reference_bytes(mode: Mode) -> Vec<u8> {
    let path = format!(
        "{}/data/bpc/reference-output-{}pass.bin.gz",
        env!("CARGO_MANIFEST_DIR"),
        mode.passes()
    );
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut bytes)
        .expect("gunzip the reference output");
    bytes
}

/// One record of a reference file: `M` and the codewords.
type Record = (u8, Vec<u16>);

fn parse_reference(bytes: &[u8]) -> Vec<Record> {
    let mut records = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let top = bytes[at];
        let n = u32::from_le_bytes(bytes[at + 1..at + 5].try_into().unwrap()) as usize;
        at += 5;
        let words = bytes[at..at + 2 * n]
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        at += 2 * n;
        records.push((top, words));
    }
    records
}

/// Panics naming the first codeblock (and in it the first codeword) where
/// `got` differs from the reference records.
fn assert_matches_reference(what: &str, want: &[Record], got: &EncodedBatch) {
    assert_eq!(want.len(), got.len(), "{what}: codeblock count");
    for (i, (want_top, want_words)) in want.iter().enumerate() {
        let (top, words) = got.block(i);
        let top = top.unwrap_or(formats::EMPTY_TOP);
        assert_eq!(
            *want_top, top,
            "{what}: codeblock {i} has M = {top}, the reference {want_top}"
        );
        if let Some(k) = (0..want_words.len().min(words.len())).find(|&k| want_words[k] != words[k])
        {
            panic!(
                "{what}: codeblock {i} differs first at codeword {k}: {:#06x}, the reference {:#06x}",
                words[k], want_words[k]
            );
        }
        assert_eq!(
            want_words.len(),
            words.len(),
            "{what}: codeblock {i} has {} codewords, the reference {} (the shorter is a prefix)",
            words.len(),
            want_words.len()
        );
    }
}

/// The reference records as an encoded batch, to feed the decoders.
fn to_batch(records: &[Record]) -> EncodedBatch {
    let mut enc = EncodedBatch {
        offsets: vec![0],
        ..Default::default()
    };
    for (top, words) in records {
        enc.tops.push((*top != formats::EMPTY_TOP).then_some(*top));
        enc.codewords.extend_from_slice(words);
        enc.offsets.push(enc.codewords.len());
    }
    enc
}

fn check_decodes_to_sample(what: &str, batch: &CodeblockBatch, decoded: &[i32]) {
    assert_same(what, &batch.coefficients, decoded);
}

#[test]
fn cpu_encoder_writes_the_reference_output_byte_for_byte() {
    let batch = sample();
    for mode in MODES {
        let bytes = reference_bytes(mode);
        let want = parse_reference(&bytes);
        let tables = ProbabilityTables::reference(mode);
        for form in [cpu::CoreForm::Sequential, cpu::CoreForm::Lanes] {
            let got = cpu::encode(&batch, tables, form).unwrap();
            let what = format!("CPU {form:?} {}-pass", mode.passes());
            assert_matches_reference(&what, &want, &got);
            assert!(
                formats::write_encoded(&got) == bytes,
                "{what}: the written file differs from the reference file"
            );
        }
    }
}

#[test]
fn cpu_decoder_reconstructs_the_sample_from_the_reference_output() {
    let batch = sample();
    for mode in MODES {
        let enc = to_batch(&parse_reference(&reference_bytes(mode)));
        let tables = ProbabilityTables::reference(mode);
        let (decoded, summaries) =
            cpu::decode(&batch, &enc, tables, None, cpu::CoreForm::Lanes).unwrap();
        check_decodes_to_sample("CPU decode of the reference output", &batch, &decoded);
        assert!(summaries.iter().all(|s| s.complete));
    }
}

#[test]
fn gpu_encoder_writes_the_reference_output_byte_for_byte() {
    let gpu = test_gpu();
    let batch = sample();
    for mode in MODES {
        let bytes = reference_bytes(mode);
        let want = parse_reference(&bytes);
        let (got, _) = gpu::encode(&gpu, &batch, ProbabilityTables::reference(mode)).unwrap();
        let what = format!("GPU {}-pass", mode.passes());
        assert_matches_reference(&what, &want, &got);
        assert!(
            formats::write_encoded(&got) == bytes,
            "{what}: the written file differs from the reference file"
        );
    }
}

#[test]
fn gpu_decoder_reconstructs_the_sample_from_the_reference_output() {
    let gpu = test_gpu();
    let batch = sample();
    for mode in MODES {
        let enc = to_batch(&parse_reference(&reference_bytes(mode)));
        let tables = ProbabilityTables::reference(mode);
        let (decoded, summaries, _) =
            gpu::decode(&gpu, &batch, &enc, tables, DecodeLimits::ALL).unwrap();
        check_decodes_to_sample("GPU decode of the reference output", &batch, &decoded);
        assert!(summaries.iter().all(|s| s.complete));
    }
}
