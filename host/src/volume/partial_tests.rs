//! Cut and damaged volume files: a plain decode refuses them with a typed
//! error, `partial` decodes what is intact (docs/format.md, "Damaged
//! files"), and a segment lost to a cut or to a failed CRC is left out the
//! same way.

use super::format::VolumeContainer;
use super::*;
use crate::backend::Backend;
use crate::codec::FormatError;

/// A two-layer lossy file and a lossless one of a small textured volume.
fn files() -> Vec<(Volume, Vec<u8>)> {
    let v = Volume::from_fn(40, 24, 12, SampleType::I16, |x, y, z| {
        let r = ((x * x + 2 * y * y + 3 * z * z) % 1013) as i32;
        r * 17 - 9000 + ((x * 31 + y * 7 + z * 13) % 29) as i32
    });
    let lossy = VolumeOptions {
        layers: 2,
        ..VolumeOptions::bpp(1.0)
    };
    [lossy, VolumeOptions::lossless()]
        .iter()
        .map(|o| {
            let enc = encode_volume(&v, o, &Backend::Cpu).unwrap();
            (v.clone(), enc.bytes)
        })
        .collect()
}

fn partial() -> VolumeDecodeOptions {
    VolumeDecodeOptions {
        partial: true,
        ..Default::default()
    }
}

fn decode(bytes: &[u8], o: &VolumeDecodeOptions) -> Result<VolumeDecoded, VolumeError> {
    decode_volume(bytes, o, &Backend::Cpu)
}

fn squared_error(a: &Volume, b: &Volume) -> f64 {
    a.samples
        .iter()
        .zip(&b.samples)
        .map(|(&x, &y)| ((x - y) as f64).powi(2))
        .sum()
}

#[test]
fn a_whole_file_decodes_the_same_with_partial() {
    for (_, bytes) in files() {
        let whole = decode(&bytes, &Default::default()).unwrap();
        let p = decode(&bytes, &partial()).unwrap();
        assert_eq!(p.volume, whole.volume);
        assert!(p.report.damaged_segments.is_empty() && p.report.missing_segments.is_empty());
        assert_eq!(p.report.file_bytes, p.report.expected_bytes);
    }
}

/// Cut at every segment boundary: refused without `partial`; with it the
/// segments from the cut on are reported missing, every cut decodes worse
/// than the whole file, and a cut file decodes exactly as the whole file
/// with every segment from the cut on damaged. (The error need not shrink
/// from one cut to the next: a detail band's first layer alone can cost
/// more than it brings.)
#[test]
fn a_cut_at_every_segment_boundary_decodes_the_prefix() {
    for (v, bytes) in files() {
        let c = VolumeContainer::parse(&bytes, u64::MAX).unwrap();
        let whole = decode(&bytes, &partial()).unwrap();
        let whole_error = squared_error(&v, &whole.volume);
        for (k, s) in c.segments.iter().enumerate().filter(|(_, s)| s.len > 0) {
            let cut = &bytes[..s.offset];
            match decode(cut, &Default::default()) {
                Err(VolumeError::Format(FormatError::Truncated { needed, .. })) => {
                    assert_eq!(needed, bytes.len() as u64)
                }
                other => panic!("cut at segment {k}: {:?}", other.map(|d| d.report)),
            }
            let p = decode(cut, &partial()).unwrap();
            let missing: Vec<usize> = (k..c.segments.len())
                .filter(|&j| c.segments[j].len > 0)
                .collect();
            assert_eq!(p.report.missing_segments, missing, "cut at segment {k}");
            assert!(p.report.damaged_segments.is_empty());
            assert_eq!(p.report.expected_bytes, bytes.len() as u64);
            p.volume.validate().unwrap();
            let e = squared_error(&v, &p.volume);
            assert!(
                e > whole_error,
                "cut at segment {k}: {e} against {whole_error}"
            );
            let mut flipped = bytes.clone();
            for &j in &missing {
                flipped[c.segments[j].offset] ^= 0x5a;
            }
            let d = decode(&flipped, &partial()).unwrap();
            assert_eq!(d.report.damaged_segments, missing);
            assert_eq!(d.volume, p.volume, "cut and damage at segment {k} differ");
        }
    }
}

/// A flipped byte in each segment: a typed CRC error naming the segment
/// without `partial`; with it only that segment's resolution stops at the
/// damaged layer, so a damaged second layer still gives the first layer's
/// quality there.
#[test]
fn a_flipped_byte_in_every_segment_is_caught_and_skipped() {
    for (_, bytes) in files() {
        let c = VolumeContainer::parse(&bytes, u64::MAX).unwrap();
        let whole = decode(&bytes, &Default::default()).unwrap();
        for (k, s) in c.segments.iter().enumerate().filter(|(_, s)| s.len > 0) {
            let mut bad = bytes.clone();
            bad[s.offset + s.len / 2] ^= 0x01;
            match decode(&bad, &Default::default()) {
                Err(VolumeError::Format(FormatError::SegmentCrc {
                    resolution, layer, ..
                })) => assert_eq!((resolution, layer), (s.resolution, s.layer)),
                other => panic!("segment {k}: {:?}", other.map(|d| d.report)),
            }
            let p = decode(&bad, &partial()).unwrap();
            assert_eq!(p.report.damaged_segments, vec![k]);
            assert_ne!(
                p.volume, whole.volume,
                "segment {k} left out changes nothing"
            );
            // The same resolution with only the layers before the damaged
            // one is what a file without the damaged layer's bytes gives.
            let mut later = bad.clone();
            for j in (0..c.segments.len()).filter(|&j| {
                let t = c.segments[j];
                t.len > 0 && t.resolution == s.resolution && t.layer > s.layer
            }) {
                later[c.segments[j].offset] ^= 0x80;
            }
            assert_eq!(decode(&later, &partial()).unwrap().volume, p.volume);
        }
    }
}

/// A cut inside the header or the index leaves nothing to decode.
#[test]
fn a_cut_inside_the_header_is_an_error_even_with_partial() {
    for (_, bytes) in files() {
        let c = VolumeContainer::parse(&bytes, u64::MAX).unwrap();
        for cut in [0, 8, 20, c.header_len / 2, c.header_len - 1] {
            assert!(decode(&bytes[..cut], &partial()).is_err(), "cut {cut}");
        }
    }
}

/// `reduce` gives exactly the low band of that many levels of the
/// file's volume (lossless, so the low band of the original), from fewer
/// codeblocks, with `slices` counting reduced slices; too many levels are
/// an error.
#[test]
fn a_reduced_decode_is_the_low_band_of_the_volume() {
    use wavelane_core::dwt::volume::{forward_3d, reduced_dims, scratch_len_3d, uniform_reduction};
    use wavelane_core::dwt::Cdf53;
    let v = Volume::from_fn(37, 22, 19, SampleType::U8, |x, y, z| {
        ((x * 5 + y * 3 + z * 7) % 200 + (x * y + z) % 37) as i32
    });
    let o = VolumeOptions {
        levels: Some([3, 2, 2]),
        ..VolumeOptions::lossless()
    };
    let bytes = encode_volume(&v, &o, &Backend::Cpu).unwrap().bytes;
    for n in 1..=3u8 {
        let reduce = uniform_reduction([3, 2, 2], n as u32);
        let dims = [v.width, v.height, v.depth];
        // The low band: the level-shifted samples through `reduce` levels.
        let mut low: Vec<i32> = v.samples.iter().map(|&s| s - 128).collect();
        let mut scratch = vec![0; scratch_len_3d(dims[0], dims[1], dims[2])];
        let layout = wavelane_core::dwt::volume::VolumeLayout::new(dims[0], dims[1], dims[2]);
        forward_3d::<Cdf53>(&mut low, layout, reduce, &mut scratch).unwrap();
        let out = reduced_dims(dims, [3, 2, 2], reduce);
        let mut want = Vec::new();
        for z in 0..out[2] {
            for y in 0..out[1] {
                let row = (z * dims[1] + y) * dims[0];
                want.extend(
                    low[row..row + out[0]]
                        .iter()
                        .map(|&s| (s + 128).clamp(0, 255)),
                );
            }
        }
        let o = VolumeDecodeOptions {
            reduce: n,
            ..Default::default()
        };
        let d = decode(&bytes, &o).unwrap();
        assert_eq!(
            [d.volume.width, d.volume.height, d.volume.depth],
            out,
            "reduce {n}"
        );
        assert_eq!(d.volume.samples, want, "reduce {n}");
        assert!(d.report.blocks_decoded < d.report.blocks_total);
        for a in 0..out[2] {
            for b in a..out[2] {
                let o = VolumeDecodeOptions {
                    reduce: n,
                    slices: Some((a, b)),
                    ..Default::default()
                };
                let s = decode(&bytes, &o).unwrap().volume;
                let plane = out[0] * out[1];
                assert_eq!(
                    s.samples,
                    want[a * plane..(b + 1) * plane],
                    "reduce {n} slices {a}..{b}"
                );
            }
        }
    }
    let too_many = VolumeDecodeOptions {
        reduce: 4,
        ..Default::default()
    };
    assert!(matches!(
        decode(&bytes, &too_many),
        Err(VolumeError::Options(_))
    ));
}
