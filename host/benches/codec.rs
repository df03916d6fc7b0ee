//! The image codec end to end on the CPU backend: lossless encode and
//! decode, and lossy encode and decode at 1 bpp, of the demo photograph
//! (`cli/assets/astronaut-384.png`, 384x384 RGB) and its 4x4 mirror tiling
//! (1536x1536, the large image of `scripts/bench-codec.py`). In memory: no
//! file or image-format I/O, which `scripts/bench-lossless-speed.sh` times
//! with the peers' whole command lines.
//!
//! Run: `cargo bench -p wavelane --features bench --bench codec`
//! (`WAVELANE_SIMD=baseline|v3|v4` compares the CPU copies of the hot
//! loops, docs/perf/README.md).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use wavelane::backend::Backend;
use wavelane::codec::{self, DecodeOptions, EncodeOptions, Image};

const DEMO_PNG: &[u8] = include_bytes!("../../cli/assets/astronaut-384.png");

/// `image` tiled `n x n`, every other tile mirrored so that the seams are
/// smooth (the layout `scripts/bench-codec.py` writes).
fn mirror_tiled(image: &Image, n: usize) -> Image {
    let (w, h) = (image.width, image.height);
    let planes = image
        .planes
        .iter()
        .map(|p| {
            let mut out = Vec::with_capacity(w * h * n * n);
            for y in 0..h * n {
                let (ty, sy) = (y / h, y % h);
                let sy = if ty % 2 == 1 { h - 1 - sy } else { sy };
                for x in 0..w * n {
                    let (tx, sx) = (x / w, x % w);
                    let sx = if tx % 2 == 1 { w - 1 - sx } else { sx };
                    out.push(p[sy * w + sx]);
                }
            }
            out
        })
        .collect();
    Image {
        width: w * n,
        height: h * n,
        planes,
        ..image.clone()
    }
}

fn bench(c: &mut Criterion) {
    let demo = wavelane::image_io::decode_bytes(DEMO_PNG).expect("the demo image decodes");
    let big = mirror_tiled(&demo, 4);
    let backend = Backend::Cpu;
    for (name, image) in [("384x384-rgb", &demo), ("1536x1536-rgb", &big)] {
        let samples = (image.width * image.height * image.planes.len()) as u64;
        let mut group = c.benchmark_group(format!("codec-{name}"));
        group.throughput(Throughput::Elements(samples));
        group.sample_size(10);
        for (mode, options) in [
            ("lossless", EncodeOptions::lossless()),
            ("1bpp", EncodeOptions::bpp(1.0)),
        ] {
            group.bench_function(format!("encode-{mode}"), |b| {
                b.iter(|| codec::encode(image, &options, &backend).expect("encode"))
            });
            let file = codec::encode(image, &options, &backend)
                .expect("encode")
                .bytes;
            let decode = DecodeOptions::default();
            let back = codec::decode(&file, &decode, &backend).expect("decode");
            if mode == "lossless" {
                assert!(back.image.planes == image.planes, "{name}: not lossless");
            }
            group.bench_function(format!("decode-{mode}"), |b| {
                b.iter(|| codec::decode(&file, &decode, &backend).expect("decode"))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
