//! Prefix sum: core sequential = core lane model = CPU backend = GPU
//! (`shaders/scan/scan.comp`), on random inputs of sizes around the workgroup
//! boundaries and up to 1M elements.

use rand::Rng;
use wavelane::backend::cpu;
use wavelane::backend::gpu::SCAN_WORKGROUP_SIZE;
use wavelane_core::scan::{exclusive_scan, exclusive_scan_lanes, lanes_scratch_len};
use wavelane_tests::{assert_same, for_random_cases, gpu, TestRng};

fn random_values(rng: &mut TestRng, n: usize) -> Vec<u32> {
    // Mix small values (the usual use: output lengths) with full-range ones
    // so that wrap-around is exercised too.
    let big = rng.random_bool(0.3);
    (0..n)
        .map(|_| {
            if big {
                rng.random()
            } else {
                rng.random_range(0..1000)
            }
        })
        .collect()
}

const SIZES: &[usize] = &[1, 2, 255, 256, 257, 511, 4096, 65535, 65537, 1 << 20];

#[test]
fn scan_core_lane_model_and_cpu_agree() {
    for_random_cases("scan core/cpu", 4, |rng| {
        for &n in SIZES {
            let input = random_values(rng, n);
            let mut expected = input.clone();
            let total = exclusive_scan(&mut expected);

            for sg in [4usize, 8, 16, 32, 64] {
                let mut lanes = input.clone();
                let wg = SCAN_WORKGROUP_SIZE as usize;
                let mut scratch = vec![0; lanes_scratch_len(n, wg)];
                let t = exclusive_scan_lanes(&mut lanes, wg, sg, &mut scratch).unwrap();
                assert_eq!(t, total, "lane model total, n={n} subgroup={sg}");
                assert_same(
                    &format!("lane model n={n} subgroup={sg}"),
                    &expected,
                    &lanes,
                );
            }

            let mut on_cpu = input.clone();
            assert_eq!(cpu::exclusive_scan(&mut on_cpu), total);
            assert_same(&format!("cpu n={n}"), &expected, &on_cpu);
        }
    });
}

#[test]
fn scan_gpu_equals_core() {
    let gpu = gpu();
    for_random_cases("scan gpu", 2, |rng| {
        for &n in SIZES {
            let input = random_values(rng, n);
            let mut expected = input.clone();
            let total = exclusive_scan(&mut expected);

            let buf = gpu.upload(&input).unwrap();
            let (gpu_total, timing) = gpu.exclusive_scan(&buf, n as u32).unwrap();
            let got = gpu.download(&buf).unwrap();
            assert_eq!(gpu_total, total, "gpu total, n={n}, {}", gpu.info().name);
            assert_same(
                &format!("gpu n={n} subgroup={}", gpu.info().subgroup_size),
                &expected,
                &got[..n],
            );
            assert_eq!(timing.dispatch_ns.len(), 3, "one time per dispatch");
        }
    });
}

#[test]
fn scan_gpu_rejects_too_short_buffer() {
    let gpu = gpu();
    let buf = gpu.upload(&[1u32, 2, 3]).unwrap();
    let err = gpu.exclusive_scan(&buf, 4).unwrap_err();
    assert!(err.to_string().contains("scan of 4 values"), "{err}");
}

/// The copy references that benchmarks report against: both the
/// `vkCmdCopyBuffer` and the copy-kernel timings are taken, and the
/// combined reference is the faster one.
#[test]
fn gpu_copy_references_are_measured() {
    let gpu = gpu();
    let (command, kernel) = gpu.time_copies(1 << 20, 2).expect("copy timings");
    let (command, kernel) = (
        command.expect("vkCmdCopyBuffer timing (timestamps)"),
        kernel.expect("copy kernel timing (timestamps)"),
    );
    assert!(command > 0.0 && kernel > 0.0, "{command} ns, {kernel} ns");
    let best = gpu.time_copy(1 << 20, 2).expect("copy").expect("timing");
    assert!(best > 0.0);
}

/// Benchmarks' clock warm-up: the busy kernel runs (and is timed like any
/// dispatch); a CPU device (lavapipe) gets no warm-up, a GPU a calibrated
/// one; timed work after it still runs and is timed on its own.
#[test]
fn gpu_clock_warm_up_runs_and_stays_out_of_timings() {
    let gpu = gpu();
    let t = gpu.busy(64).expect("busy kernel");
    assert_eq!(t.dispatch_ns.len(), 1);
    let iterations = gpu
        .set_clock_warm_up(std::time::Duration::from_millis(20))
        .expect("warm-up");
    let cpu_device = gpu.info().device_type == "Cpu";
    assert_eq!(
        iterations == 0,
        cpu_device,
        "{iterations} iterations on {}",
        gpu.info().device_type
    );
    let input: Vec<u32> = (0..1000).collect();
    let buf = gpu.upload(&input).unwrap();
    let (total, timing) = gpu.exclusive_scan(&buf, 1000).unwrap();
    assert_eq!(total, 999 * 1000 / 2);
    assert_eq!(
        timing.dispatch_ns.len(),
        3,
        "the warm-up is not a timed step"
    );
    assert_eq!(gpu.set_clock_warm_up(std::time::Duration::ZERO).unwrap(), 0);
}
