//! Volume files are byte-identical on the CPU and GPU backends (the 3-D
//! DWT shaders, and for lossless single-layer files the BPC-PaCo encoder
//! shader), and decode to the same volumes on both (the decoder shader).

use wavelane::backend::Backend;
use wavelane::volume::{self, SampleType, Volume, VolumeDecodeOptions, VolumeOptions};
use wavelane_tests::{assert_same, for_random_cases, gpu};

use rand::Rng;

fn random_volume(rng: &mut impl Rng) -> Volume {
    let t = [
        SampleType::U8,
        SampleType::I8,
        SampleType::U16,
        SampleType::I16,
    ][rng.random_range(0..4)];
    let (w, h, d) = (
        rng.random_range(1..90),
        rng.random_range(1..40),
        rng.random_range(1..24),
    );
    let (lo, hi) = t.range();
    let amp = rng.random_range(1..=(hi - lo));
    let seed: u32 = rng.random();
    Volume::from_fn(w, h, d, t, |x, y, z| {
        // Smooth structure plus hashed noise reaching both ends of the range.
        let s = ((x as f64 * 0.2).sin() + (y as f64 * 0.15).cos() + (z as f64 * 0.3).sin()) / 3.0;
        let n = ((x as u32 * 7919) ^ (y as u32 * 104_729) ^ (z as u32 * 1_299_709) ^ seed) % 64;
        lo + ((s * 0.5 + 0.5) * amp as f64) as i32 + n as i32 - 32
    })
}

#[test]
fn volume_gpu_files_and_decodes_equal_the_cpu() {
    let g = Backend::Gpu(gpu());
    for_random_cases("volume cpu = gpu", 6, |rng| {
        let v = random_volume(rng);
        let options = [
            VolumeOptions::lossless(),
            VolumeOptions {
                layers: 2,
                ..VolumeOptions::lossless()
            },
            VolumeOptions::bpp(1.0),
        ];
        for o in options {
            let cpu = volume::encode_volume(&v, &o, &Backend::Cpu).unwrap();
            let on_gpu = volume::encode_volume(&v, &o, &g).unwrap();
            assert_same("volume file", &cpu.bytes, &on_gpu.bytes);
            let opts = VolumeDecodeOptions::default();
            let a = volume::decode_volume(&cpu.bytes, &opts, &Backend::Cpu).unwrap();
            let b = volume::decode_volume(&cpu.bytes, &opts, &g).unwrap();
            assert_same("decoded volume", &a.volume.samples, &b.volume.samples);
            if o.target == volume::VolumeTarget::Lossless {
                assert_eq!(a.volume, v);
            }
        }
    });
}
