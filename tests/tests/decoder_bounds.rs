//! Decoder hardening: heap use bounded by the input size for
//! worst-case-shaped inputs of growing size and for truncations of real
//! streams (docs/fuzzing.md records the measured bounds). Decode *time*
//! against input size is measured, not asserted, by
//! `cargo bench -p wavelane-tests --bench decoder_scaling` on the same
//! inputs (`wavelane_tests::worst_inputs`).
//!
//! Memory is measured with a counting global allocator. Tests run one at a
//! time (a lock) so they do not share the allocator counters.

use std::path::Path;
use std::sync::Mutex;

use wavelane::bpc::formats as bpc_formats;
use wavelane_tests::alloc_meter::{measure, HeapUse, Meter};
use wavelane_tests::worst_inputs::{
    bpc_decode, bpc_worst, h264_headers, h264_parse, h264_slice, vle_decompress, vle_worst,
};

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

// ---------------------------------------------------------------- VLE

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

// ---------------------------------------------------------------- BPC-PaCo

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

// ---------------------------------------------------------------- H.264

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
