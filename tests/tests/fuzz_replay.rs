//! Replays every committed fuzz corpus file through its target body on
//! stable Rust: the regression suite of the fuzzers (`fuzz/`, see
//! docs/fuzzing.md). A target without a corpus directory, or with an empty
//! one, fails; so does a fuzz target file without a body or the reverse.

use std::collections::BTreeSet;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use wavelane_tests::fuzz_bodies::{Target, TARGETS};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The corpus files of `target`; panics if the directory is missing or empty.
fn corpus(target: &Target) -> Vec<PathBuf> {
    let dir = fuzz_dir().join("corpus").join(target.name);
    let entries = fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "corpus directory {} of target {} is missing ({e}); \
             run scripts/gen-fuzz-corpus.sh",
            dir.display(),
            target.name
        )
    });
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("readable directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "corpus directory {} is empty",
        dir.display()
    );
    files
}

/// Runs one input, naming the file when the body panics.
fn replay(target: &Target, path: &Path) -> Result<(), String> {
    let data = fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    catch_unwind(AssertUnwindSafe(|| (target.run)(&data))).map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!("{} ({} bytes): {msg}", path.display(), data.len())
    })
}

fn replay_target(name: &str) {
    let target = TARGETS
        .iter()
        .find(|t| t.name == name)
        .expect("known target");
    let failures: Vec<String> = corpus(target)
        .iter()
        .filter_map(|p| replay(target, p).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} corpus files fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

macro_rules! replay_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                replay_target(stringify!($name));
            }
        )*

        /// The list above names every target exactly once.
        #[test]
        fn every_target_is_replayed() {
            let listed: BTreeSet<&str> = [$(stringify!($name)),*].into_iter().collect();
            let known: BTreeSet<&str> = TARGETS.iter().map(|t| t.name).collect();
            assert_eq!(listed, known, "replay list and fuzz_bodies::TARGETS differ");
        }
    };
}

replay_tests!(
    bpc_decode,
    bpc_roundtrip,
    bpc_lanes_diff,
    cavlc_decode,
    cavlc_roundtrip,
    h264_parse,
    vle_decode,
    vle_roundtrip,
    vle_lanes_diff,
    dwt_roundtrip,
    dwt_blocked_diff,
    scan_lanes_diff,
    wl_container,
    wl_decode,
    image_pnm,
    gpu_diff,
    volume_container,
    nifti_read,
    sequence_container,
);

/// Every fuzz target binary calls a body, every body has a binary, and the
/// fuzz crate declares each as a `[[bin]]`.
#[test]
fn fuzz_crate_matches_the_bodies() {
    let targets_dir = fuzz_dir().join("fuzz_targets");
    let files: BTreeSet<String> = fs::read_dir(&targets_dir)
        .unwrap_or_else(|e| panic!("{}: {e}", targets_dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().expect("stem").to_string_lossy().into_owned())
        .collect();
    let known: BTreeSet<String> = TARGETS.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        files, known,
        "fuzz/fuzz_targets/*.rs and fuzz_bodies::TARGETS differ"
    );
    let manifest = fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for t in TARGETS {
        let source =
            fs::read_to_string(targets_dir.join(format!("{}.rs", t.name))).expect("target");
        assert!(
            source.contains(&format!("fuzz_bodies::{}", t.name))
                || source.contains(&format!("::{}(", t.name)),
            "fuzz/fuzz_targets/{}.rs does not call its body",
            t.name
        );
        assert!(
            manifest.contains(&format!("name = \"{}\"", t.name)),
            "fuzz/Cargo.toml has no [[bin]] {}",
            t.name
        );
    }
}

/// Runs every seed of `t` through its body.
fn seeds_pass(t: &Target) {
    let seeds = (t.seeds)();
    assert!(!seeds.is_empty(), "{} has no seeds", t.name);
    for (i, s) in seeds.iter().enumerate() {
        catch_unwind(AssertUnwindSafe(|| (t.run)(s)))
            .unwrap_or_else(|_| panic!("seed {i} of {} fails its target", t.name));
    }
}

/// The seed generators run and every seed passes its target (the committed
/// corpus may be older; this keeps the generator itself honest). The GPU
/// target runs in its own test, whose name carries `gpu` so that the
/// subgroup-size and validation-layer reruns of scripts/test.sh take it.
#[test]
fn seeds_pass_their_targets() {
    for t in TARGETS.iter().filter(|t| !uses_gpu(t)) {
        seeds_pass(t);
    }
}

#[test]
fn gpu_diff_seeds_pass_their_target() {
    let gpu: Vec<&Target> = TARGETS.iter().filter(|t| uses_gpu(t)).collect();
    assert_eq!(gpu.len(), 1, "one GPU fuzz target, gpu_diff");
    seeds_pass(gpu[0]);
}

/// The fuzz targets that open the GPU: their names say so.
fn uses_gpu(t: &Target) -> bool {
    t.name.contains("gpu")
}
