//! Decode time against input size for the worst-case-shaped inputs of
//! `wavelane_tests::worst_inputs`: prints nanoseconds per input byte at
//! growing sizes, and the ratio largest/smallest. A linear decoder keeps
//! the ratio near 1 (fixed costs push it below 1); a quadratic one shows
//! the size ratio (16x or more). Measured, never asserted in the test
//! suite: `cargo bench -p wavelane-tests --bench decoder_scaling`. The
//! figures are recorded in docs/fuzzing.md.

use std::time::Instant;

use wavelane_tests::worst_inputs::{
    bpc_decode, bpc_worst, h264_headers, h264_parse, h264_slice, vle_decompress, vle_worst,
};

/// Fastest of five runs, in seconds.
fn fastest(decode: &dyn Fn(), runs: usize) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            decode();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Prints ns/byte for each `(len, decode)` and the largest/smallest ratio.
fn report(what: &str, cases: Vec<(usize, Box<dyn Fn()>)>) {
    let mut per_byte = Vec::new();
    for (len, decode) in &cases {
        decode(); // warm up (thread pools, lazy tables)
        let ns = fastest(decode.as_ref(), 5) * 1e9 / *len as f64;
        println!("{what:>24}: {len:>10} bytes  {ns:>9.2} ns/byte");
        per_byte.push(ns);
    }
    let (first, last) = (per_byte[0], per_byte[per_byte.len() - 1]);
    println!(
        "{what:>24}: size x{:.0}, time per byte x{:.2}",
        cases[cases.len() - 1].0 as f64 / cases[0].0 as f64,
        last / first
    );
}

fn main() {
    let vle = [1usize << 16, 1 << 18, 1 << 20, 1 << 22]
        .into_iter()
        .map(|n| {
            let file = vle_worst(n);
            (
                file.len(),
                Box::new(move || vle_decompress(&file)) as Box<dyn Fn()>,
            )
        })
        .collect();
    report("vle::decompress", vle);

    let bpc = [1usize, 4, 16, 64]
        .into_iter()
        .map(|n| {
            let (like, file) = bpc_worst(n, 3000);
            (
                file.len(),
                Box::new(move || bpc_decode(&like, &file)) as Box<dyn Fn()>,
            )
        })
        .collect();
    report("BPC-PaCo batch decode", bpc);

    let h264 = [1000usize, 4000, 16000, 64000]
        .into_iter()
        .map(|n| {
            let mut s = h264_headers(16, n.div_ceil(16) as u32);
            s.extend(h264_slice(n, n));
            (s.len(), Box::new(move || h264_parse(&s)) as Box<dyn Fn()>)
        })
        .collect();
    report("h264 parse_stream", h264);
}
