//! `wavelane bench codec --frames N`: steady-state throughput of a batch.
//!
//! N copies of one image (generated, or `--input`) go through the same
//! pipeline as a batch of files ([`crate::batch::pipeline`]): reader
//! threads hand each frame over from host memory, its samples at their own
//! width and pixel by pixel as a file reader gives them, one coder per
//! worker (`--devices`, or the one `--backend`) codes it
//! ([`codec::encode_interleaved`]; the decodes
//! [`codec::decode_interleaved`], as `wavelane encode` and `decode` do),
//! and writer threads check it. Encodes, then decodes of the file, are
//! timed as two batches.
//!
//! # What is timed
//!
//! Wall clock from the first frame handed to the pipeline to the last one
//! checked, after one untimed encode and decode on every worker (pipelines,
//! caches): frames per second, samples per second, and the bytes the
//! devices' counters saw cross the bus (`Gpu::counts`, summed over the
//! devices) per second of that wall time. `kernel_busy` is the kernels'
//! GPU-timestamp time over wall time times devices: how much of the time
//! the devices computed.
//!
//! # Checks
//!
//! Every encode must give the untimed encode's bytes and every decode its
//! image (a lossless target: the image itself); a difference fails the
//! benchmark.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use wavelane::backend::gpu::GpuCounts;
use wavelane::backend::{Backend, BackendKind, Gpu, Job};
use wavelane::codec::{self, DecodeOptions, EncodeOptions, Image, Interleaved, RateTarget};

use super::batch::devices::{Coder, DeviceList};
use super::batch::pipeline::{self, Flow, Threads};
use super::{CliError, CliResult};

/// What `--frames` runs.
pub(crate) struct BatchBench<'a> {
    pub image: Image,
    pub options: EncodeOptions,
    pub frames: usize,
    pub backend: BackendKind,
    pub devices: Option<&'a DeviceList>,
    pub json: bool,
}

/// Runs the batch benchmark and prints its report.
pub(crate) fn run(b: BatchBench<'_>) -> CliResult {
    if b.frames == 0 {
        return Err("--frames must be positive".into());
    }
    let t = Instant::now();
    let indices = b.devices.map(DeviceList::resolve).transpose()?;
    let mut coders = match &indices {
        Some(list) => Coder::devices(list, b.backend)?,
        None => vec![Coder::fixed(
            Backend::select(b.backend)?,
            format!("--backend {}", b.backend),
        )],
    };
    let device_start_seconds = t.elapsed().as_secs_f64();
    let mut gpus: Vec<Arc<Gpu>> = Vec::new();
    for g in coders.iter().filter_map(Coder::gpu) {
        if !gpus.iter().any(|h| Arc::ptr_eq(h, g)) {
            gpus.push(g.clone());
        }
    }
    let frame = Interleaved::from_image(&b.image);
    let (bytes, decoded) = warm_up(&mut coders, &frame, &b.options)?;
    if b.options.target == RateTarget::Lossless && decoded != frame {
        return Err("the lossless file does not decode to the image".into());
    }
    let samples = b.image.samples();
    let enc_job = Job::Encode {
        samples: samples as u64,
        lossless: b.options.target == RateTarget::Lossless,
    };
    let counts = || sum_counts(&gpus);
    // Each frame is a copy of the image made on a reader thread, as a
    // frame read from a file would arrive.
    let encode = timed(
        &mut coders,
        b.frames,
        counts,
        || frame.clone(),
        |coder, frame| {
            let (backend, _, _) = coder.backend(enc_job)?;
            let coded = codec::encode_interleaved(&frame, &b.options, &backend)?;
            Ok(coded.bytes == bytes)
        },
    )?;
    let dec_job = Job::Decode {
        samples: samples as u64,
        reversible: true,
    };
    let decode = timed(
        &mut coders,
        b.frames,
        counts,
        || (),
        |coder, ()| {
            let (backend, _, _) = coder.backend(dec_job)?;
            let image =
                codec::decode_interleaved(&bytes, &DecodeOptions::default(), &backend)?.image;
            Ok(image == decoded)
        },
    )?;
    let figures = |op: &str, (seconds, c): (f64, GpuCounts)| {
        let moved = (c.upload_bytes + c.download_bytes) as f64;
        json!({
            "op": op, "seconds": seconds,
            "frames_per_s": b.frames as f64 / seconds,
            "gsamples_per_s": (b.frames * samples) as f64 / seconds / 1e9,
            "transfers": {"upload_bytes": c.upload_bytes, "download_bytes": c.download_bytes},
            "transfer_gb_per_s": moved / seconds / 1e9,
            "dispatches": c.dispatches,
            "kernel_seconds": c.kernel_ns as f64 / 1e9,
            "kernel_busy": if gpus.is_empty() { 0.0 }
                else { c.kernel_ns as f64 / 1e9 / (seconds * gpus.len() as f64) },
        })
    };
    let report = json!({
        "area": "codec-batch",
        "backend": coders[0].describe(),
        "workers": coders.len(),
        "devices": indices,
        "device_start_seconds": device_start_seconds,
        "width": b.image.width, "height": b.image.height,
        "components": b.image.components(), "bit_depth": b.image.bit_depth,
        "samples": samples, "target": b.options.target,
        "file_bytes": bytes.len(),
        "bpp": bytes.len() as f64 * 8.0 / (b.image.width * b.image.height) as f64,
        "frames": b.frames,
        "timing": "wall clock from the first frame handed to the pipeline to the last one \
                   checked, after one untimed encode and decode per worker; transfers: the \
                   devices' counters",
        "results": [figures("encode", encode), figures("decode", decode)],
    });
    if b.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "codec batch of {} frames {}x{}x{} {}-bit, {:?}: {} bytes ({:.4} bpp) on {} ({} worker(s)); \
         device start-up {:.3} s",
        b.frames,
        b.image.width,
        b.image.height,
        b.image.components(),
        b.image.bit_depth,
        b.options.target,
        bytes.len(),
        report["bpp"].as_f64().unwrap_or(0.0),
        report["backend"].as_str().unwrap_or(""),
        coders.len(),
        device_start_seconds
    );
    for r in report["results"].as_array().into_iter().flatten() {
        let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
        println!(
            "{}: {:.3} s, {:.2} frames/s, {:.3} GS/s; transfers {:.3} GB/s (up {} B, down {} B); \
             kernels {:.3} s, busy {:.0}% of the device time",
            r["op"].as_str().unwrap_or(""),
            f("seconds"),
            f("frames_per_s"),
            f("gsamples_per_s"),
            f("transfer_gb_per_s"),
            r["transfers"]["upload_bytes"],
            r["transfers"]["download_bytes"],
            f("kernel_seconds"),
            100.0 * f("kernel_busy"),
        );
    }
    Ok(())
}

/// One untimed encode and decode on every worker at once; all must agree.
/// Returns the file and its decoded image.
fn warm_up(
    coders: &mut [Coder],
    image: &Interleaved,
    options: &EncodeOptions,
) -> Result<(Vec<u8>, Interleaved), CliError> {
    let results: Vec<Result<(Vec<u8>, Interleaved), CliError>> = std::thread::scope(|s| {
        let handles: Vec<_> = coders
            .iter_mut()
            .map(|coder| {
                s.spawn(move || -> Result<(Vec<u8>, Interleaved), CliError> {
                    let (backend, _, _) = coder.backend(Job::Vle)?;
                    let bytes = codec::encode_interleaved(image, options, &backend)?.bytes;
                    let decoded =
                        codec::decode_interleaved(&bytes, &DecodeOptions::default(), &backend)?;
                    Ok((bytes, decoded.image))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("warm-up panicked"))
            .collect()
    });
    let mut results = results.into_iter();
    let first = results.next().ok_or("no worker")??;
    for other in results {
        if other? != first {
            return Err("two workers coded the frame differently".into());
        }
    }
    Ok(first)
}

/// Runs `frames` frames (each from `read`) through the pipeline with `code` (which says
/// whether its frame came out as the untimed one did); returns the wall
/// seconds and what the devices counted meanwhile.
fn timed<L: Send>(
    coders: &mut [Coder],
    frames: usize,
    counts: impl Fn() -> GpuCounts,
    read: impl Fn() -> L + Sync,
    code: impl Fn(&mut Coder, L) -> Result<bool, CliError> + Sync,
) -> Result<(f64, GpuCounts), CliError> {
    let before = counts();
    let t = Instant::now();
    let mut first_error = None;
    pipeline::run(
        frames,
        coders,
        Threads::for_workers(coders.len()),
        |_| Ok(Flow::<L, ()>::Code(read())),
        |coder, _, frame| code(coder, frame),
        |_, same| match same {
            true => Ok(()),
            false => Err("a frame came out unlike the untimed one".into()),
        },
        |_, outcome: Result<(), CliError>| {
            if let (Err(e), None) = (outcome, &first_error) {
                first_error = Some(e);
            }
        },
    );
    let seconds = t.elapsed().as_secs_f64();
    match first_error {
        Some(e) => Err(e),
        None => Ok((seconds, counts().since(before))),
    }
}

/// The counters of `gpus`, summed.
fn sum_counts(gpus: &[Arc<Gpu>]) -> GpuCounts {
    gpus.iter()
        .map(|g| g.counts())
        .fold(GpuCounts::default(), |a, c| GpuCounts {
            upload_bytes: a.upload_bytes + c.upload_bytes,
            download_bytes: a.download_bytes + c.download_bytes,
            dispatches: a.dispatches + c.dispatches,
            kernel_ns: a.kernel_ns + c.kernel_ns,
        })
}
