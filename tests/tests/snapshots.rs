//! Pins every bitstream format wavelane writes. For fixed inputs each test
//! records the output's length, an FNV-1a 64 digest and its first bytes in
//! an insta snapshot (tests/tests/snapshots/). Any change to an encoder's
//! output fails here until the new snapshot is reviewed and accepted
//! (`cargo insta review`, or `INSTA_UPDATE=always cargo test --test
//! snapshots` then `git diff`). CI never accepts: insta only writes
//! `.snap.new` files, and not at all when `CI` is set.

use wavelane::backend::Backend;
use wavelane::bpc::{cpu as bpc_cpu, formats as bpc_formats, BlockDesc, CodeblockBatch};
use wavelane::codec::{self, EncodeOptions, Image, RateTarget};
use wavelane::h264::encode::EncodeOptions as H264Options;
use wavelane::h264::{encode_sequence, CpuEntropy, Picture, Plane};
use wavelane::vle::{self, VleOptions};
use wavelane_core::bits::BitWriter;
use wavelane_core::bpc::{self, Codeblock, CodingParams, Mode, ProbabilityTables, Scratch};
use wavelane_core::cavlc::{encode_block, BlockKind};

/// FNV-1a, 64 bits: simple, stable, and implemented here so that no
/// dependency update can change a digest.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The snapshot text of a byte string.
fn digest(bytes: &[u8]) -> String {
    let prefix: String = bytes.iter().take(24).map(|b| format!("{b:02x}")).collect();
    format!(
        "len: {}\nfnv1a64: {:016x}\nprefix: {prefix}",
        bytes.len(),
        fnv1a64(bytes)
    )
}

/// A deterministic pseudo-random source (xorshift32), so inputs never
/// depend on a crate's RNG algorithm.
struct Xorshift(u32);

impl Xorshift {
    fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
}

/// Wavelet-like coefficients: mostly small, a few large, signs mixed.
fn coefficients(n: usize, seed: u32) -> Vec<i32> {
    let mut r = Xorshift(seed);
    (0..n)
        .map(|_| {
            let x = r.next();
            let mag = (x >> 8) & ((1 << (x % 11)) - 1);
            if x & 1 == 1 {
                -(mag as i32)
            } else {
                mag as i32
            }
        })
        .collect()
}

fn bpc_stream(mode: Mode) -> Vec<u8> {
    let coeffs = coefficients(64 * 64, 7);
    let block = Codeblock::new(&coeffs, 64, 64, 64).unwrap();
    let params = CodingParams::new(
        ProbabilityTables::reference(mode),
        bpc::group_index(1, bpc::Orientation::HH),
    );
    let mut words = vec![0u16; bpc::max_codewords_any(64, 64)];
    let mut scratch = Box::new(Scratch::<64>::new());
    let enc = bpc::encode_sequential(&block, &params, &mut scratch, &mut words, None).unwrap();
    let mut bytes = vec![0u8; 2 * enc.codewords];
    bpc::codewords_to_be_bytes(&words[..enc.codewords], &mut bytes).unwrap();
    bytes
}

#[test]
fn bpc_codeblock_stream_two_pass() {
    insta::assert_snapshot!(digest(&bpc_stream(Mode::TwoPass)));
}

#[test]
fn bpc_codeblock_stream_three_pass() {
    insta::assert_snapshot!(digest(&bpc_stream(Mode::ThreePass)));
}

/// The encoded-codeblocks file of `wavelane bpc`: codeblocks of several
/// sizes and groups, one of them empty.
fn bpc_file(mode: Mode) -> Vec<u8> {
    let sizes = [(64, 64, 0), (32, 16, 5), (13, 7, 15), (8, 8, 2)];
    let mut batch = CodeblockBatch::default();
    for (i, &(w, h, group)) in sizes.iter().enumerate() {
        batch.blocks.push(BlockDesc {
            offset: batch.coefficients.len(),
            stride: w,
            width: w,
            height: h,
            group,
        });
        let c = if i == 3 {
            vec![0; w * h]
        } else {
            coefficients(w * h, 11 + i as u32)
        };
        batch.coefficients.extend(c);
    }
    let encoded = bpc_cpu::encode(
        &batch,
        ProbabilityTables::reference(mode),
        bpc_cpu::CoreForm::Sequential,
    )
    .unwrap();
    bpc_formats::write_encoded(&encoded)
}

#[test]
fn bpc_encoded_file_two_pass() {
    insta::assert_snapshot!(digest(&bpc_file(Mode::TwoPass)));
}

#[test]
fn bpc_encoded_file_three_pass() {
    insta::assert_snapshot!(digest(&bpc_file(Mode::ThreePass)));
}

/// CAVLC: blocks of every kind at several nC, back to back in one stream.
#[test]
fn cavlc_blocks() {
    let mut r = Xorshift(3);
    let mut buf = vec![0u8; 64 * 1024];
    let mut w = BitWriter::new(&mut buf);
    for kind in BlockKind::ALL {
        let ncs: &[i8] = if kind == BlockKind::ChromaDc {
            &[-1]
        } else {
            &[0, 2, 4, 8, 16]
        };
        for &nc in ncs {
            for density in [0u32, 2, 5, 9, 16] {
                let coeffs: Vec<i16> = (0..kind.max_coeffs())
                    .map(|_| {
                        let x = r.next();
                        if x % 16 >= density {
                            0
                        } else {
                            let mag = [1, 1, 1, 2, 3, 7, 20, 300][(x >> 4) as usize % 8];
                            if x & 1 == 1 {
                                -mag
                            } else {
                                mag
                            }
                        }
                    })
                    .collect();
                encode_block(&mut w, kind, nc, &coeffs).unwrap();
            }
        }
    }
    let n = w.byte_len();
    insta::assert_snapshot!(digest(&buf[..n]));
}

/// H.264: two 48x32 frames (gradient and noise) at QP 28.
#[test]
fn h264_stream() {
    let mut r = Xorshift(5);
    let plane = |w: usize, h: usize, f: &mut dyn FnMut(usize, usize) -> u8| {
        let mut p = Plane::filled(w, h, 0);
        for y in 0..h {
            for x in 0..w {
                p.data[y * w + x] = f(x, y);
            }
        }
        p
    };
    let gradient = Picture {
        y: plane(48, 32, &mut |x, y| (x * 5 + y * 3) as u8),
        cb: plane(24, 16, &mut |x, _| (100 + x) as u8),
        cr: plane(24, 16, &mut |_, y| (140 - y) as u8),
    };
    let noise = Picture {
        y: plane(48, 32, &mut |_, _| r.next() as u8),
        cb: plane(24, 16, &mut |x, y| (128 + x as i32 - y as i32) as u8),
        cr: plane(24, 16, &mut |_, _| 128),
    };
    let opts = H264Options {
        qp: 28,
        ..Default::default()
    };
    let encoded = encode_sequence(&[gradient, noise], &opts, &CpuEntropy, &|| {}).unwrap();
    insta::assert_snapshot!(digest(&encoded.stream));
}

fn vle_payload() -> Vec<u8> {
    let mut r = Xorshift(9);
    let mut data = b"wavelane pins its formats. ".repeat(40);
    data.extend((0..3000).map(|_| (r.next() % 7 * (r.next() % 5)) as u8));
    data
}

#[test]
fn vle_file_default_options() {
    let file = vle::compress(&vle_payload(), &Backend::Cpu, &VleOptions::default()).unwrap();
    insta::assert_snapshot!(digest(&file));
}

#[test]
fn vle_file_small_chunks_short_codes() {
    let opts = VleOptions {
        max_len: 9,
        chunk_symbols: 64,
    };
    let file = vle::compress(&vle_payload(), &Backend::Cpu, &opts).unwrap();
    insta::assert_snapshot!(digest(&file));
}

/// A 3-component 8-bit test image with edges, texture and flat areas.
fn test_image() -> Image {
    Image::from_fn(45, 29, 3, 8, |x, y, c| {
        let v = match c {
            0 => (x * 5 + y * 3) % 256,
            1 => {
                if (x / 8 + y / 8) % 2 == 0 {
                    40
                } else {
                    200
                }
            }
            _ => (x * y * 7 + x) % 97 + 80,
        };
        v as i32
    })
}

#[test]
fn wl_image_lossless() {
    let encoded = codec::encode(&test_image(), &EncodeOptions::lossless(), &Backend::Cpu).unwrap();
    insta::assert_snapshot!(digest(&encoded.bytes));
}

#[test]
fn wl_image_lossy() {
    let opts = EncodeOptions {
        target: RateTarget::Bpp(1.5),
        ..EncodeOptions::default()
    };
    let encoded = codec::encode(&test_image(), &opts, &Backend::Cpu).unwrap();
    insta::assert_snapshot!(digest(&encoded.bytes));
}

/// What version 1 wrote (the old default: 2 passes, reference tables) is,
/// but for the version field, what version 2 writes with those settings:
/// this snapshot is `wl_image_lossless`'s from before version 2, so the
/// version 1 files `tests/tests/codec_presets.rs` decodes are real ones.
#[test]
fn wl_image_lossless_version_1() {
    let opts = EncodeOptions {
        passes: 2,
        tables: codec::TableChoice::Preset(codec::tables::PRESET_REFERENCE),
        ..EncodeOptions::lossless()
    };
    let mut bytes = codec::encode(&test_image(), &opts, &Backend::Cpu)
        .unwrap()
        .bytes;
    bytes[8..10].copy_from_slice(&1u16.to_le_bytes());
    let header_len = u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
    let crc = crc32fast::hash(&bytes[..header_len - 4]);
    bytes[header_len - 4..header_len].copy_from_slice(&crc.to_le_bytes());
    insta::assert_snapshot!(digest(&bytes));
}

/// The digest itself is pinned, so a snapshot can be checked by hand.
#[test]
fn fnv1a64_known_values() {
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
}
