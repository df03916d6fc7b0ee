//! Host <-> device transfers (`host/src/backend/gpu/transfer.rs`): uploads
//! and downloads of any size go through two reused staging chunks; these
//! tests cross the chunk boundaries, the odd tails and the empty case, and
//! check that the byte-to-word upload zero-pads.

use rand::Rng;
use wavelane::backend::gpu::STAGING_CHUNK;
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
