//! wavelane-core on a Cortex-M4F: core/firmware, built for
//! thumbv7em-none-eabihf and run under QEMU (mps2-an386), encodes a 256x256
//! 8-bit image held in flash losslessly (5/3) and lossily (fixed-point 9/7),
//! and its bitstreams must equal what wavelane-core produces on the host for
//! the same image and parameters, decode to the image (lossless) or close
//! to it (lossy), and fit the RAM budget. docs/firmware.md has the numbers.
//!
//! Needs qemu-system-arm and the thumbv7em-none-eabihf target; fails (never
//! skips) without them.

// The test image is the firmware's own generator, compiled here as well.
#[allow(dead_code)]
#[path = "../../core/firmware/src/test_image.rs"]
mod test_image;

#[path = "firmware/elf.rs"]
mod elf;
#[path = "firmware/reference.rs"]
mod reference;
#[path = "firmware/run.rs"]
mod run;

use reference::Path;
use run::{firmware_run, firmware_run_defmt};

/// RAM origin of the firmware's memory.x.
const RAM_ORIGIN: u32 = 0x2000_0000;
/// RAM the encode may use besides the coefficient buffer (docs/firmware.md).
const RAM_BUDGET_BEYOND_IMAGE: u64 = 32 * 1024;
/// The i32 coefficient buffer of a 256x256 image.
const IMAGE_BUFFER_BYTES: u64 = (reference::WIDTH * reference::HEIGHT * 4) as u64;

static IMAGE: [u8; test_image::WIDTH * test_image::HEIGHT] = test_image::generate();

/// Describes where two streams first differ.
fn first_difference(got: &[u8], expected: &[u8]) -> String {
    let at = got
        .iter()
        .zip(expected)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(expected.len()));
    let record = reference::parse(expected)
        .ok()
        .and_then(|s| s.records.iter().rposition(|r| r.offset <= at))
        .map_or("the header".to_string(), |i| {
            format!("codeblock record {i}")
        });
    format!(
        "lengths {} (firmware) vs {} (host); first difference at byte {at}, in {record}",
        got.len(),
        expected.len()
    )
}

#[test]
fn firmware_streams_equal_the_host_encoder() {
    let run = firmware_run();
    for (path, got) in [(Path::Lossless, &run.lossless), (Path::Lossy, &run.lossy)] {
        let expected = reference::encode(path, &IMAGE);
        assert!(
            *got == expected,
            "{} stream of the firmware differs from the host's: {}",
            path.name(),
            first_difference(got, &expected)
        );
        let reported = run.value("stream", Some(path.name()), "bytes");
        assert_eq!(
            reported,
            got.len() as u64,
            "reported {} stream size",
            path.name()
        );
    }
}

#[test]
fn firmware_console_carries_the_report() {
    let run = firmware_run();
    assert_eq!(
        String::from_utf8_lossy(&run.console),
        run.report_text,
        "console and report.txt differ"
    );
}

#[test]
fn firmware_defmt_build_logs_frames_and_writes_the_same_streams() {
    let plain = firmware_run();
    let defmt = firmware_run_defmt();
    assert!(
        defmt.lossless == plain.lossless,
        "defmt build: lossless stream differs"
    );
    assert!(
        defmt.lossy == plain.lossy,
        "defmt build: lossy stream differs"
    );
    assert_eq!(
        defmt.report_text.lines().count(),
        plain.report_text.lines().count()
    );
    // Every report line becomes one defmt frame on the console: rzCOBS
    // frames end with a zero byte and contain no other zero.
    let frames = defmt
        .console
        .split(|&b| b == 0)
        .filter(|f| !f.is_empty())
        .count();
    assert_eq!(
        frames,
        plain.report_text.lines().count(),
        "defmt frames on the console"
    );
    assert!(
        defmt.console != plain.console,
        "the defmt build printed the text report"
    );
}

#[test]
fn firmware_lossless_stream_decodes_to_the_image() {
    let run = firmware_run();
    let stream = reference::parse(&run.lossless).unwrap();
    assert_eq!((stream.wavelet, stream.passes), (0, 2));
    assert!(
        stream.steps.iter().all(|&s| s == reference::STEP_ONE),
        "lossless steps {:x?}",
        stream.steps
    );
    let decoded = reference::decode(&stream).unwrap();
    assert!(
        decoded == IMAGE[..],
        "lossless decode differs from the image"
    );
    let bpp = run.lossless.len() as f64 * 8.0 / IMAGE.len() as f64;
    eprintln!("lossless: {} bytes, {bpp:.3} bpp", run.lossless.len());
    assert!(
        bpp < 8.0,
        "lossless stream larger than the raw image ({bpp:.3} bpp)"
    );
}

#[test]
fn firmware_lossy_stream_decodes_near_the_image() {
    let run = firmware_run();
    let stream = reference::parse(&run.lossy).unwrap();
    assert_eq!((stream.wavelet, stream.passes), (2, 3));
    assert_eq!(
        stream.steps,
        reference::step_codes(Path::Lossy),
        "quantization steps drifted from the subband norms"
    );
    let decoded = reference::decode(&stream).unwrap();
    let psnr = reference::psnr(&IMAGE, &decoded);
    let bpp = run.lossy.len() as f64 * 8.0 / IMAGE.len() as f64;
    eprintln!(
        "lossy: {} bytes, {bpp:.3} bpp, PSNR {psnr:.2} dB",
        run.lossy.len()
    );
    // Base step 16 in the image domain: uniform error of about 16/sqrt(12)
    // per sample before the dead zone, i.e. roughly 35 dB; the bounds leave
    // room for the test image changing, not for a broken quantizer.
    assert!(psnr.is_finite() && psnr > 32.0, "lossy PSNR {psnr:.2} dB");
    assert!(bpp < 1.5, "lossy stream {bpp:.3} bpp");
}

#[test]
fn firmware_memory_stays_within_budget() {
    let run = firmware_run();
    let elf_bytes = std::fs::read(&run.elf).unwrap();
    let sections = elf::allocated_sections(&elf_bytes).unwrap();
    let (flash, ram) = elf::memory_use(&sections, RAM_ORIGIN);
    for s in &sections {
        eprintln!("{:<16} {:>8} bytes at {:#010x}", s.name, s.size, s.addr);
    }
    assert_eq!(
        run.value("ram", None, "image_buffer_bytes"),
        IMAGE_BUFFER_BYTES
    );
    let stack_peak = run.value("ram", None, "stack_peak_bytes");
    let stack_region = run.value("ram", None, "stack_region_bytes");
    let statics_beyond_image = ram - IMAGE_BUFFER_BYTES;
    let beyond_image = statics_beyond_image + stack_peak;
    eprintln!(
        "flash {flash} bytes (image {} in .rodata); RAM statics {ram} bytes = image buffer \
         {IMAGE_BUFFER_BYTES} + {statics_beyond_image}; stack peak {stack_peak} of {stack_region}; \
         RAM beyond the image buffer {beyond_image} of {RAM_BUDGET_BEYOND_IMAGE}",
        IMAGE.len()
    );
    assert!(
        ram >= IMAGE_BUFFER_BYTES,
        "RAM statics {ram} smaller than the coefficient buffer"
    );
    assert!(
        stack_peak > 0 && stack_peak < stack_region,
        "stack peak {stack_peak} of {stack_region}"
    );
    assert!(
        beyond_image <= RAM_BUDGET_BEYOND_IMAGE,
        "RAM beyond the image buffer {beyond_image} bytes exceeds the budget of {RAM_BUDGET_BEYOND_IMAGE}"
    );
    // Flash holds the image, so it is at least that large.
    assert!(flash > IMAGE.len() as u64);
    for path in ["lossless", "lossy"] {
        let probed = run.value("codeblock", Some(path), "codeblocks");
        let one = run.value("codeblock", Some(path), "stack_call_bytes");
        let whole = run.value("stream", Some(path), "stack_call_bytes");
        eprintln!(
            "{path}: stack {whole} bytes for the 256x256 encode, {one} for one 64x64 codeblock"
        );
        // 256x256 with 5 levels: four 64x64 codeblocks in each level-0
        // subband and one in each level-1 subband.
        assert_eq!(probed, 15, "{path}: 64x64 codeblocks probed");
        assert!(
            one > 0 && one < whole,
            "{path}: codeblock stack {one} vs encode {whole}"
        );
    }
}
