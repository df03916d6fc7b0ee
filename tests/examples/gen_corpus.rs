//! Writes the seed corpora of the fuzz targets: `fuzz/corpus/<target>/seed-NN`
//! from our own encoders (see `wavelane_tests::fuzz_bodies`). Files other
//! than `seed-*` (regressions, minimized fuzzer finds) are left alone.
//!
//! Run from anywhere: `cargo run -p wavelane-tests --example gen_corpus`
//! (or `scripts/gen-fuzz-corpus.sh`). Every seed is run through its target
//! before it is written.

use std::fs;
use std::path::PathBuf;

use wavelane_tests::fuzz_bodies::TARGETS;

fn main() -> std::io::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus");
    // Optional target names restrict the run: `gen_corpus gpu_diff`.
    let only: Vec<String> = std::env::args().skip(1).collect();
    for target in TARGETS
        .iter()
        .filter(|t| only.is_empty() || only.iter().any(|n| n == t.name))
    {
        let dir = root.join(target.name);
        fs::create_dir_all(&dir)?;
        for entry in fs::read_dir(&dir)? {
            let path = entry?.path();
            if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("seed-"))
            {
                fs::remove_file(path)?;
            }
        }
        let seeds = (target.seeds)();
        let mut bytes = 0;
        for (i, seed) in seeds.iter().enumerate() {
            (target.run)(seed);
            fs::write(dir.join(format!("seed-{i:02}")), seed)?;
            bytes += seed.len();
        }
        println!(
            "{:<18} {:>3} seeds {:>7} bytes",
            target.name,
            seeds.len(),
            bytes
        );
    }
    Ok(())
}
