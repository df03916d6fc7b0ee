//! A GPU that fails part-way through a batch (issue: nothing lost on
//! faults): the file being coded when the device fails is reported and
//! left out, with no partial file, and the files before and after it are
//! coded as usual. The fault is injected through the test hook
//! `wavelane::backend::gpu::fault` (built with the `internals` feature),
//! which fails the first command-buffer submission of the second file's
//! encode (picked by its image size) as a lost device would.
//! One test in its own binary: the hook is process-wide.

use std::path::Path;

use clap::Parser;
use wavelane::backend::gpu::fault;
use wavelane::backend::Backend;
use wavelane::codec::{self, DecodeOptions, Image};
use wavelane_tests::gpu;

fn write_ppm(path: &Path, w: usize, h: usize, seed: usize) -> Image {
    let planes: Vec<Vec<i32>> = (0..3)
        .map(|c| {
            (0..w * h)
                .map(|i| {
                    (((i % w) * (3 + c) + (i / w) * (5 + seed) + (i * 7919 % 13)) % 256) as i32
                })
                .collect()
        })
        .collect();
    let image = Image {
        width: w,
        height: h,
        bit_depth: 8,
        signed: false,
        planes,
    };
    wavelane::image_io::save(&image, path).unwrap();
    image
}

fn encode(args: &[&str]) -> wavelane_cli::CliResult {
    let mut all = vec!["wavelane", "encode", "--lossless"];
    all.extend_from_slice(args);
    wavelane_cli::run(wavelane_cli::Cli::parse_from(all))
}

#[test]
fn gpu_fault_mid_batch_loses_only_the_file_it_hit() {
    gpu();
    let dir = std::env::temp_dir().join(format!("wavelane-faults-gpu-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let names = ["a", "b", "c"];
    let inputs: Vec<_> = names.iter().map(|n| dir.join(format!("{n}.ppm"))).collect();
    // The second file has a size of its own: the fault is armed for the
    // encode of that size.
    let widths = [96, 104, 96];
    let images: Vec<Image> = (0..3)
        .map(|k| write_ppm(&inputs[k], widths[k], 80, k))
        .collect();
    let s = |p: &Path| p.to_str().unwrap().to_string();

    // The device fails at the second file's first submission.
    let out = dir.join("out");
    fault::fail_on_encode_of(Some((104, 80)));
    let result = encode(&[
        &s(&inputs[0]),
        &s(&inputs[1]),
        &s(&inputs[2]),
        "-o",
        &s(&out),
        "--backend",
        "gpu",
    ]);
    fault::fail_on_encode_of(None);
    fault::fail_after(None);
    let err = result.expect_err("the batch reports the failed file");
    let failed = err
        .downcast_ref::<wavelane_cli::BatchFailed>()
        .unwrap_or_else(|| panic!("not a batch failure: {err}"));
    assert_eq!((failed.failed, failed.total), (1, 3));

    // Only the finished files are there: no partial or temporary file.
    let mut listed: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    listed.sort();
    assert_eq!(listed, ["a.wl", "c.wl"]);
    let decodes_losslessly = |k: usize| {
        let bytes = std::fs::read(out.join(format!("{}.wl", names[k]))).unwrap();
        let decoded = codec::decode(&bytes, &DecodeOptions::default(), &Backend::Cpu).unwrap();
        assert_eq!(
            decoded.image, images[k],
            "{} does not decode losslessly",
            names[k]
        );
    };
    decodes_losslessly(0);
    decodes_losslessly(2);

    // Run again with --skip-existing: the failed file is coded, the others kept.
    encode(&[
        &s(&inputs[0]),
        &s(&inputs[1]),
        &s(&inputs[2]),
        "-o",
        &s(&out),
        "--backend",
        "gpu",
        "--skip-existing",
    ])
    .unwrap();
    decodes_losslessly(1);
    std::fs::remove_dir_all(&dir).unwrap();
}
