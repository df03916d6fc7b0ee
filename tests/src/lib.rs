//! The cross-check harness shared by wavelane's workspace-level tests.
//!
//! Every algorithm has up to three implementations that must agree byte for
//! byte: core (sequential, the reference), the CPU backend (rayon) and the
//! GPU backend (Vulkan). Tests here draw random inputs from a seeded RNG and
//! compare them; on failure the seed is printed, and `WAVELANE_SEED=<n>`
//! replays exactly that case.
//!
//! GPU tests must have `gpu` in their name: the test script re-runs them at
//! lavapipe subgroup sizes 4 and 16 and under the validation layer by
//! filtering on that word.

pub mod alloc_meter;
pub mod fuzz_bodies;
pub mod worst_inputs;

use std::sync::Arc;

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wavelane::backend::Gpu;

/// The random generator of the harness.
pub type TestRng = ChaCha8Rng;

/// The seed for this run: `WAVELANE_SEED` if set, otherwise a fresh one.
pub fn base_seed() -> u64 {
    match std::env::var("WAVELANE_SEED") {
        Ok(s) => s
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("WAVELANE_SEED={s:?} is not a u64")),
        Err(_) => rand::rng().next_u64(),
    }
}

/// Prints the seed if the test panics while this guard is alive.
pub struct SeedReport {
    label: String,
    seed: u64,
}

impl Drop for SeedReport {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "\n*** {} failed with seed {}: rerun with WAVELANE_SEED={} ***\n",
                self.label, self.seed, self.seed
            );
        }
    }
}

/// Runs `cases` random cases of a check. Case `i` gets an RNG seeded with
/// `seed + i`; `WAVELANE_SEED` pins `seed` (and then only that one case runs
/// when `WAVELANE_SEED_CASE_ONLY=1`). The failing seed is printed.
pub fn for_random_cases(label: &str, cases: u64, mut check: impl FnMut(&mut TestRng)) {
    let base = base_seed();
    let only_one = std::env::var("WAVELANE_SEED_CASE_ONLY").is_ok_and(|v| v == "1");
    let cases = if only_one { 1 } else { cases };
    for i in 0..cases {
        let seed = base.wrapping_add(i);
        let _report = SeedReport {
            label: format!("{label} (case {i})"),
            seed,
        };
        let mut rng = TestRng::seed_from_u64(seed);
        check(&mut rng);
    }
}

/// The GPU for tests. Panics (the test fails, it is never skipped) when no
/// Vulkan device can be opened, with the fix in the message.
///
/// Also panics when called from a test whose name lacks `gpu`: the reruns
/// of scripts/test.sh (other subgroup sizes, the validation layer) select
/// GPU tests by that word, so such a test would silently miss them. The
/// test harness names each test's thread after the test; other callers
/// (fuzz binaries, examples) run on `main` or an unnamed thread.
pub fn gpu() -> Arc<Gpu> {
    if let Some(name) = std::thread::current().name() {
        assert!(
            name == "main" || name.contains("gpu"),
            "test `{name}` opens the GPU but its name lacks `gpu`, so the GPU reruns \
             of scripts/test.sh would skip it: rename it"
        );
    }
    Gpu::shared().unwrap_or_else(|e| {
        panic!(
            "GPU tests need a Vulkan device and none could be opened: {e}\n\
             On a machine without a GPU install lavapipe (./scripts/setup.sh does: \
             apt-get install mesa-vulkan-drivers) and set \
             VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
        )
    })
}

/// Asserts two byte-like slices are equal, reporting the first difference
/// (index and both values) instead of dumping megabytes.
pub fn assert_same<T: PartialEq + std::fmt::Debug>(what: &str, expected: &[T], actual: &[T]) {
    if let Some(i) = expected.iter().zip(actual).position(|(a, b)| a != b) {
        panic!(
            "{what}: first difference at index {i}: expected {:?}, got {:?} (lengths {} and {})",
            expected[i],
            actual[i],
            expected.len(),
            actual.len()
        );
    }
    assert_eq!(
        expected.len(),
        actual.len(),
        "{what}: equal prefix but lengths differ"
    );
}

/// The kind of a VLE decode failure, for comparing backends: the GPU must
/// reject what the CPU rejects for the same reason. A chunk that does not
/// decode is one kind whichever backend reports it (`Chunk` on the CPU,
/// `GpuChunk` on the GPU) and whichever failing chunk it names (the CPU
/// decodes chunks in parallel and reports any one of them); every other
/// error comes from the shared parsing and checks, so its text must agree.
pub fn vle_error_kind(e: &wavelane::vle::VleCodecError) -> String {
    use wavelane::vle::VleCodecError;
    match e {
        VleCodecError::Chunk { .. } | VleCodecError::GpuChunk { .. } => {
            "a chunk does not decode".into()
        }
        other => other.to_string(),
    }
}
