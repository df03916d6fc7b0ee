//! Host <-> device transfers (`host/src/backend/gpu/transfer.rs`): uploads
//! and downloads of any size go through two reused staging chunks; these
//! tests cross the chunk boundaries, the odd tails and the empty case, and
//! check that the byte-to-word upload zero-pads; and the counters of what
//! a device moved and ran (`Gpu::counts`) are exact.

use rand::Rng;
use wavelane::backend::gpu::{GpuCounts, STAGING_CHUNK};
use wavelane::backend::Gpu;
use wavelane::dwt::gpu::GpuDwt;
use wavelane_core::dwt::volume::VolumeLayout;
use wavelane_core::dwt::Cdf53;
use wavelane_tests::{for_random_cases, gpu};

#[test]
fn gpu_transfers_round_trip_across_staging_chunks() {
    let gpu = gpu();
    let chunk = STAGING_CHUNK as usize / 4; // u32 elements per chunk
    for len in [
        1,
        7,
        chunk - 1,
        chunk,
        chunk + 1,
        2 * chunk,
        2 * chunk + 3,
        5 * chunk / 2 + 1,
    ] {
        let data: Vec<u32> = (0..len as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let buf = gpu.upload(&data).expect("upload");
        assert_eq!(buf.len() as usize, len);
        let back = gpu.download(&buf).expect("download");
        assert!(back == data, "round trip of {len} words differs");
    }
    // Vulkan has no empty buffers: an empty upload is one zero element.
    let buf = gpu.upload::<i32>(&[]).expect("empty upload");
    assert_eq!(gpu.download(&buf).expect("download"), vec![0]);
}

#[test]
fn gpu_byte_uploads_zero_pad_and_reads_come_in_order() {
    let gpu = gpu();
    for_random_cases("byte upload", 4, |rng| {
        let words = rng.random_range(1..=(3 * STAGING_CHUNK / 4 + 5));
        // Fewer bytes than the buffer (padding), as many, or more (cut).
        let n = match rng.random_range(0..3) {
            0 => rng.random_range(0..=4 * words as usize),
            1 => 4 * words as usize,
            _ => 4 * words as usize + rng.random_range(1..100),
        };
        let bytes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
        let buf = gpu.upload_bytes(&bytes, words).expect("upload_bytes");
        let mut seen = Vec::new();
        let mut next = 0u64;
        gpu.read_bytes(&buf.into_bytes(), |offset, chunk| {
            assert_eq!(offset, next, "chunks out of order");
            assert!(chunk.len() as u64 <= STAGING_CHUNK);
            next += chunk.len() as u64;
            seen.extend_from_slice(chunk);
        })
        .expect("read_bytes");
        assert_eq!(seen.len() as u64, 4 * words);
        let kept = n.min(seen.len());
        assert!(
            seen[..kept] == bytes[..kept],
            "{n} bytes into {words} words"
        );
        assert!(seen[kept..].iter().all(|&b| b == 0), "padding is not zero");
    });
}

/// A GPU DWT round trip of a known size counts exactly its buffer up and
/// down each way, each dispatch once and their timestamped time; byte
/// uploads count their padding and an empty upload its one element. A
/// device of its own: the shared one's counters also count the other
/// tests of this binary, which run beside this one.
#[test]
fn gpu_counts_are_exact_for_a_dwt_round_trip() {
    let _ = gpu(); // the name check, and a device exists
    let own = Gpu::new().expect("a second device");
    assert_eq!(own.counts(), GpuCounts::default());
    let (w, h, levels) = (45usize, 31usize, 3u32);
    let image: Vec<i32> = (0..w * h).map(|i| (i * 37 % 255) as i32 - 128).collect();
    let bytes = (4 * w * h) as u64;
    let plan =
        GpuDwt::new(own.clone(), VolumeLayout::new(w, h, 1), [levels, levels, 0]).expect("plan");
    let mut kernel_ns = 0.0;
    let mut dispatches = 0;
    let mut per_shader = std::collections::BTreeMap::<&str, u64>::new();
    let mut data = image.clone();
    for forward in [true, false] {
        let input = own.upload(&data).expect("upload");
        let output = own.uninit::<i32>(data.len() as u64).expect("buffer");
        let scratch = plan.scratch::<i32>().expect("scratch");
        let list = if forward {
            plan.forward_dispatches::<Cdf53>(&input, &output, &scratch)
        } else {
            plan.inverse_dispatches::<Cdf53>(&input, &output, &scratch)
        }
        .expect("dispatches");
        let timing = own.run(&list).expect("run");
        dispatches += list.len() as u64;
        for d in &list {
            *per_shader.entry(d.shader_name()).or_default() += 1;
        }
        kernel_ns += timing.dispatch_ns.iter().sum::<f64>().round();
        data = own.download(&output).expect("download");
    }
    assert_eq!(data, image, "the round trip gives the image back");
    let counts = own.counts();
    assert_eq!(counts.upload_bytes, 2 * bytes, "{counts:?}");
    assert_eq!(counts.download_bytes, 2 * bytes, "{counts:?}");
    assert_eq!(counts.dispatches, dispatches, "{counts:?}");
    assert!(dispatches >= 2 * levels as u64, "{dispatches}");
    assert_eq!(counts.kernel_ns, kernel_ns as u64, "{counts:?}");
    // The tally counts each shader's own dispatches, and its times add up
    // to the kernel time (each dispatch rounded on its own: a few ns).
    let tally = own.kernel_tally();
    let tallied: std::collections::BTreeMap<&str, u64> =
        tally.shaders.iter().map(|(&s, &(n, _))| (s, n)).collect();
    assert_eq!(tallied, per_shader, "{tally:?}");
    let tally_ns: u64 = tally.shaders.values().map(|&(_, ns)| ns).sum();
    assert!(
        tally_ns.abs_diff(counts.kernel_ns) <= dispatches,
        "{tally:?} {counts:?}"
    );
    assert_eq!(tally.since(&tally), Default::default());

    let before = own.counts();
    own.upload_bytes(&[1, 2, 3, 4, 5], 3).expect("byte upload");
    own.upload::<i32>(&[]).expect("empty upload");
    let moved = own.counts().since(before);
    assert_eq!(
        moved,
        GpuCounts {
            upload_bytes: 12 + 4,
            ..GpuCounts::default()
        }
    );
}

/// Device-local buffers are made once and handed out again
/// (`host/src/backend/gpu/recycle.rs`): a freed buffer serves the next
/// request of a size it holds, at the requested length, and one that is
/// still held (by the caller or by a dispatch list waiting to run) never
/// does. A device of its own, so that no other test takes the buffers.
#[test]
fn gpu_buffers_are_reused_once_free_and_never_while_held() {
    use std::sync::Arc;
    let _shared = gpu(); // fails loudly without a device
    let (_, picked) = Gpu::list().expect("devices");
    let own = Gpu::open(picked).expect("a device of the test's own");
    let a = own.uninit::<u32>(1000).expect("buffer");
    // The buffer's identity (its address, stable while the device keeps
    // it), without holding it.
    let a_id = Arc::as_ptr(a.buffer()) as usize;
    let held = own.uninit::<u32>(1000).expect("buffer");
    assert_ne!(
        Arc::as_ptr(held.buffer()) as usize,
        a_id,
        "a held buffer was handed out"
    );
    let in_list =
        wavelane::backend::gpu::Dispatch::new(&wavelane::shaders::SCAN, [1, 1, 1]).buffer(&a);
    drop(a);
    let other = own.uninit::<u8>(3000).expect("buffer");
    assert_ne!(
        Arc::as_ptr(other.buffer()) as usize,
        a_id,
        "a buffer bound in a dispatch list was handed out"
    );
    drop(in_list);
    let again = own.uninit::<u8>(3000).expect("buffer");
    assert_eq!(
        Arc::as_ptr(again.buffer()) as usize,
        a_id,
        "a free buffer was not reused"
    );
    assert_eq!(again.len(), 3000, "the requested length");
    // What is written through a later holder is what it reads back.
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
    let up = own.upload(&data).expect("upload");
    assert_eq!(own.download(&up).expect("download"), data);
    drop((held, other, again));
}
