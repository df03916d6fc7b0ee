//! What a GPU encode and decode move over the bus (docs/codec.md,
//! "Backends"), from the reports' transfer counts (`Gpu::counts`): the
//! index planes stay on the device between quantization and the coder and
//! between the decoder and dequantization.
//!
//! - `--lossless` encode: up at most the samples at their own width, down
//!   at most the file, each + 64 KiB (+ 1% down), with the default tables
//!   too: their fit counts the symbols of a sample of the codeblocks on
//!   the device, and only the counts come down.
//! - `--bpp` encode (`--tables natural`): up at most the samples + 64
//!   KiB; down the real-valued distortions' sums (made on the device,
//!   1808 bytes a codeblock), the coder's records and cut decreases, and
//!   the file: nothing plane-sized.
//! - decode, every mode: up at most the file + 64 KiB, down at most the
//!   image at its sample width + 64 KiB.
//!
//! Each test opens a device of its own: the counters of the shared one
//! also count the other tests of the binary, which run beside it. The
//! files and images are also checked equal to the CPU backend's.

use rand::Rng;
use wavelane::backend::{Backend, Gpu};
use wavelane::bpc::train::sampled;
use wavelane::codec::codeblocks::codeblocks;
use wavelane::codec::tables::lossless_fit_sample;
use wavelane::codec::{self, DecodeOptions, EncodeOptions, Image, RateTarget, TableChoice};
use wavelane_tests::{for_random_cases, TestRng};

/// What every bound allows beyond the data itself: descriptors, tables,
/// per-block words, scan totals.
const SLACK: u64 = 64 * 1024;

fn own_device() -> Backend {
    Backend::Gpu(Gpu::new().expect("a device of its own"))
}

/// A smooth ramp with a little noise (compresses like a photograph).
fn image(rng: &mut TestRng, w: usize, h: usize, comps: usize, bits: u8) -> Image {
    let max = (1i64 << bits) - 1;
    let noise = (max / 32).max(1);
    let phase: Vec<i64> = (0..comps).map(|_| rng.random_range(0..=max)).collect();
    let mut image = Image::from_fn(w, h, comps, bits, |_, _, _| 0);
    for (c, plane) in image.planes.iter_mut().enumerate() {
        for (i, v) in plane.iter_mut().enumerate() {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            let ramp = (phase[c] + (x + 2 * y) * (max / 256 + 1)) % (max + 1);
            *v = (ramp + rng.random_range(0..=noise)).clamp(0, max) as i32;
        }
    }
    image
}

/// Bytes of the image's samples at their own width (1 byte up to 8 bits,
/// 2 above): what the encoder uploads and the decoder downloads.
fn sample_bytes(image: &Image) -> u64 {
    let per = if image.bit_depth <= 8 { 1 } else { 2 };
    (image.width * image.height * image.components() * per) as u64
}

/// A random size and depth with index planes (4 bytes a coefficient) far
/// larger than the slack, so that a plane crossing the bus breaks a bound.
fn random_image(rng: &mut TestRng) -> Image {
    let comps = [1, 3, 4][rng.random_range(0..3)];
    let bits = [8, 12, 16][rng.random_range(0..3)];
    let (w, h) = (rng.random_range(230..=330), rng.random_range(190..=260));
    image(rng, w, h, comps, bits)
}

fn check_decodes(file: &[u8], image: &Image, gpu: &Backend, what: &str) {
    let levels = codec::decode(file, &DecodeOptions::default(), &Backend::Cpu)
        .unwrap()
        .report
        .resolutions
        - 1;
    for (reduce, layers) in [(0, None), (0, Some(1)), (1.min(levels) as u8, None)] {
        let d = DecodeOptions {
            reduce,
            layers,
            ..DecodeOptions::default()
        };
        let cpu = codec::decode(file, &d, &Backend::Cpu).unwrap().image;
        let got = codec::decode(file, &d, gpu).unwrap();
        assert!(got.image == cpu, "GPU decode of {what} differs");
        let t = got.report.transfers;
        let out = sample_bytes(&got.image);
        assert!(
            t.upload_bytes <= file.len() as u64 + SLACK,
            "decode of {what} --reduce {reduce} --layers {layers:?} uploaded {} bytes for a {}-byte file",
            t.upload_bytes,
            file.len()
        );
        assert!(
            t.download_bytes <= out + SLACK,
            "decode of {what} --reduce {reduce} --layers {layers:?} downloaded {} bytes for {out} bytes of image (of {} samples)",
            t.download_bytes,
            image.width * image.height * image.components()
        );
    }
}

/// A `--lossless` encode with tables that need no fit: the samples up,
/// the file down, nothing plane-sized either way; its decodes likewise.
#[test]
fn gpu_lossless_encode_and_decode_move_only_the_image_and_the_file() {
    let gpu = own_device();
    for_random_cases("lossless transfers", 3, |rng| {
        let image = random_image(rng);
        let opts = EncodeOptions {
            tables: TableChoice::Natural,
            ..EncodeOptions::lossless()
        };
        let what = format!(
            "{}x{}x{} {}-bit lossless",
            image.width,
            image.height,
            image.components(),
            image.bit_depth
        );
        let e = codec::encode(&image, &opts, &gpu).unwrap();
        let cpu = codec::encode(&image, &opts, &Backend::Cpu).unwrap();
        assert!(e.bytes == cpu.bytes, "GPU file of {what} differs");
        let (t, file) = (e.report.transfers, e.bytes.len() as u64);
        assert!(
            t.upload_bytes <= sample_bytes(&image) + SLACK,
            "encode of {what} uploaded {} bytes for {} bytes of samples",
            t.upload_bytes,
            sample_bytes(&image)
        );
        assert!(
            t.download_bytes <= file + SLACK + file / 100,
            "encode of {what} downloaded {} bytes for a {file}-byte file",
            t.download_bytes
        );
        check_decodes(&e.bytes, &image, &gpu, &what);
    });
}

/// The default lossless tables are fitted to the symbols of a sample of
/// the codeblocks, counted on the device where the index planes are: the
/// encode downloads at most the file + 64 KiB + 1%, as with tables that
/// need no fit, though the sampled blocks' indices alone are more than
/// that. An image past 2^16 samples, so that only some blocks are sampled.
#[test]
fn gpu_lossless_table_fit_downloads_no_indices() {
    let gpu = own_device();
    for_random_cases("lossless fit transfers", 2, |rng| {
        let (w, h) = (rng.random_range(230..=330), rng.random_range(190..=260));
        let comps = rng.random_range(3..=4);
        let image = image(rng, w, h, comps, 8);
        let (w, h, comps) = (image.width, image.height, image.components());
        let e = codec::encode(&image, &EncodeOptions::lossless(), &gpu).unwrap();
        let cpu = codec::encode(&image, &EncodeOptions::lossless(), &Backend::Cpu).unwrap();
        assert!(e.bytes == cpu.bytes, "GPU file of {w}x{h}x{comps} differs");
        let every = lossless_fit_sample(w * h * comps);
        assert!(every > 1, "the image must be large enough to be sampled");
        let blocks = codeblocks(w, h, comps, e.report.levels as u32, 64);
        assert_eq!(blocks.len(), e.report.codeblocks);
        let sampled_bytes: u64 = (blocks.iter().enumerate())
            .filter(|&(i, _)| sampled(i, every))
            .map(|(_, b)| 4 * (b.rect.width * b.rect.height) as u64)
            .sum();
        let (t, file) = (e.report.transfers, e.bytes.len() as u64);
        // The bound would let the sampled indices through if they were a
        // small part of it.
        assert!(
            sampled_bytes > SLACK + file / 100,
            "{sampled_bytes} bytes of sampled blocks"
        );
        assert!(t.upload_bytes <= sample_bytes(&image) + SLACK);
        assert!(
            t.download_bytes <= file + SLACK + file / 100,
            "downloaded {} bytes for a {file}-byte file (sampled blocks: {sampled_bytes} bytes)",
            t.download_bytes
        );
        check_decodes(&e.bytes, &image, &gpu, "a default-tables lossless file");
    });
}

/// Bytes of the distortion sums a block: 16 a sum, the energy and four
/// per bitplane (`codec::distortion::sums`).
const SUMS_BYTES: u64 = 16 * (1 + 4 * wavelane_core::bpc::COEFFICIENT_BITS as u64);

/// A `--bpp` encode with `--tables natural`: the samples up and nothing
/// else plane-sized; down the distortion sums (computed on the device
/// beside quantization: 1808 bytes a block), the coder's records (16
/// bytes per pass, at most 82 passes a block), its codewords and
/// candidate cuts (2 bytes per codeword before truncation, and 12 bytes
/// per candidate, a few per pass: 10 bytes per codeword before truncation
/// in all is allowed), and the file: neither the
/// coefficients nor the index planes. The codewords before truncation are
/// those of the same image coded with every pass (its file holds them, 2
/// bytes each); the step is coarse enough that everything allowed beside
/// the file stays below the coefficients' (or the index planes') 4 bytes
/// a sample, so the planes coming down break the bound. Its decodes (full, one layer, reduced) bring down
/// only the image.
#[test]
fn gpu_lossy_encode_downloads_neither_coefficients_nor_indices() {
    let gpu = own_device();
    for_random_cases("lossy transfers", 3, |rng| {
        let image = random_image(rng);
        let (w, h, comps) = (image.width, image.height, image.components());
        let step = (1u64 << (image.bit_depth - 8)) as f64 * rng.random_range(12.0..24.0);
        let opts = EncodeOptions {
            target: RateTarget::Bpp(0.5),
            tables: TableChoice::Natural,
            base_step: Some(step),
            layers: 2,
            ..EncodeOptions::default()
        };
        let e = codec::encode(&image, &opts, &gpu).unwrap();
        let cpu = codec::encode(&image, &opts, &Backend::Cpu).unwrap();
        let what = format!("{w}x{h}x{comps} {}-bit at 0.5 bpp", image.bit_depth);
        assert!(e.bytes == cpu.bytes, "GPU file of {what} differs");
        let all = EncodeOptions {
            target: RateTarget::AllPasses,
            layers: 1,
            ..opts.clone()
        };
        let words = codec::encode(&image, &all, &Backend::Cpu)
            .unwrap()
            .bytes
            .len() as u64
            / 2;
        let blocks = e.report.codeblocks as u64;
        let (records, sums) = (16 * 82 * blocks, SUMS_BYTES * blocks);
        let planes = 4 * (w * h * comps) as u64;
        let allowed = sums + records + 10 * words + SLACK;
        assert!(
            allowed < planes,
            "{what}: the allowance ({allowed} bytes: sums {sums}, records {records}, {words} codewords) must stay below the planes ({planes}) for the test to see them"
        );
        let (t, file) = (e.report.transfers, e.bytes.len() as u64);
        assert!(
            t.upload_bytes <= sample_bytes(&image) + SLACK,
            "encode of {what} uploaded {} bytes for {} bytes of samples",
            t.upload_bytes,
            sample_bytes(&image)
        );
        assert!(
            t.download_bytes <= file + allowed,
            "encode of {what} downloaded {} bytes, over {} (file {file}, sums {sums}, records {records}, {words} codewords; the planes are {planes})",
            t.download_bytes,
            file + allowed
        );
        check_decodes(&e.bytes, &image, &gpu, &what);
    });
}
