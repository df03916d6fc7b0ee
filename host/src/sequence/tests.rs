//! Sequence input, the container and its failure modes.

use std::io::{Cursor, Read, Seek, SeekFrom};

use super::container::{SequenceFile, SequenceLimits, SequenceWriter};
use super::frame::{ChromaLayout, Frame, FrameFormat};
use super::raw::{parse_pix_fmt, RawReader};
use super::verify::verify_sequence;
use super::y4m::{parse_colour_tag, VideoParams, Y4mReader, Y4mWriter};
use super::{decode_frame, encode_frame, SequenceError, SequenceHeader};
use crate::backend::Backend;
use crate::codec::EncodeOptions;

const LAYOUTS: [ChromaLayout; 4] = [
    ChromaLayout::Mono,
    ChromaLayout::C420,
    ChromaLayout::C422,
    ChromaLayout::C444,
];

fn fmt(layout: ChromaLayout, bit_depth: u8) -> FrameFormat {
    FrameFormat {
        width: 64,
        height: 48,
        layout,
        bit_depth,
    }
}

/// Frame `t` of a moving gradient with hash noise, in range for the depth.
fn frame(format: &FrameFormat, t: usize) -> Frame {
    let max = (1i64 << format.bit_depth) - 1;
    Frame::from_fn(format, |x, y, c| {
        let noise = ((x * 7919 + y * 104_729 + t * 13 + c * 31) * 2_654_435_761) >> 7 & 15;
        let v = ((x + 3 * t) * 5 + y * 3 + c * 40 + noise) as i64 * (max + 1) / 512;
        v.clamp(0, max) as i32
    })
}

fn clip(format: &FrameFormat, frames: usize) -> Vec<Frame> {
    (0..frames).map(|t| frame(format, t)).collect()
}

fn wls(format: &FrameFormat, frames: &[Frame], options: &EncodeOptions) -> Vec<u8> {
    let header = SequenceHeader::new(*format, VideoParams::default(), options);
    let mut w = SequenceWriter::new(Vec::new(), &header).unwrap();
    for f in frames {
        w.write_frame(&encode_frame(f, format, options, &Backend::Cpu).unwrap())
            .unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn every_y4m_colour_tag_reads_and_bad_ones_do_not() {
    let cases = [
        ("mono", ChromaLayout::Mono, 8),
        ("mono16", ChromaLayout::Mono, 16),
        ("420", ChromaLayout::C420, 8),
        ("420jpeg", ChromaLayout::C420, 8),
        ("420paldv", ChromaLayout::C420, 8),
        ("420mpeg2", ChromaLayout::C420, 8),
        ("420p10", ChromaLayout::C420, 10),
        ("422p12", ChromaLayout::C422, 12),
        ("444p16", ChromaLayout::C444, 16),
        ("444", ChromaLayout::C444, 8),
    ];
    for (tag, layout, depth) in cases {
        assert_eq!(parse_colour_tag(tag), Some((layout, depth)), "{tag}");
    }
    for tag in [
        "411", "420p8", "420p17", "mono7", "444p", "422p1x", "", "444alpha",
    ] {
        assert_eq!(parse_colour_tag(tag), None, "{tag}");
    }
    for (name, layout, depth) in [
        ("gray", ChromaLayout::Mono, 8),
        ("gray12le", ChromaLayout::Mono, 12),
        ("yuv420p", ChromaLayout::C420, 8),
        ("yuv422p10le", ChromaLayout::C422, 10),
        ("yuv444p16le", ChromaLayout::C444, 16),
    ] {
        assert_eq!(parse_pix_fmt(name), Some((layout, depth)), "{name}");
    }
    for name in ["yuv420p10be", "yuv420p11le", "rgb24", "yuv410p"] {
        assert_eq!(parse_pix_fmt(name), None, "{name}");
    }
}

#[test]
fn y4m_and_raw_stream_back_what_was_written() {
    for layout in LAYOUTS {
        for depth in [8, 10, 16] {
            let format = fmt(layout, depth);
            let frames = clip(&format, 3);
            let params = VideoParams {
                frame_rate: Some((30000, 1001)),
                aspect: Some((1, 1)),
                interlace: Some(b'p'),
                colour_tag: None,
                extra: vec!["XCOLORRANGE=LIMITED".into()],
            };
            let mut w = Y4mWriter::new(Vec::new(), format, &params).unwrap();
            let mut raw = Vec::new();
            for f in &frames {
                w.write_frame(f).unwrap();
                f.write_bytes(&format, &mut raw);
            }
            let bytes = w.into_inner();
            let mut r = Y4mReader::new(Cursor::new(&bytes)).unwrap();
            assert_eq!(r.format, format);
            assert_eq!(r.params.frame_rate, params.frame_rate);
            assert_eq!(r.params.extra, params.extra);
            let mut rr = RawReader::new(Cursor::new(&raw), format).unwrap();
            for f in &frames {
                assert_eq!(&r.next_frame().unwrap().unwrap(), f);
                assert_eq!(&rr.next_frame().unwrap().unwrap(), f);
            }
            assert!(r.next_frame().unwrap().is_none());
            assert!(rr.next_frame().unwrap().is_none());
        }
    }
}

#[test]
fn bad_y4m_and_raw_inputs_are_typed_errors() {
    let y4m = |s: &str| Y4mReader::new(Cursor::new(s.as_bytes().to_vec())).map(|_| ());
    assert!(matches!(
        y4m("YUV4MPEG W64 H48\n"),
        Err(SequenceError::Y4m(_))
    ));
    assert!(matches!(y4m("YUV4MPEG2 W64\n"), Err(SequenceError::Y4m(_))));
    assert!(matches!(
        y4m("YUV4MPEG2 W64 H48 C411\n"),
        Err(SequenceError::Y4m(_))
    ));
    assert!(matches!(y4m(""), Err(SequenceError::Y4m(_))));
    assert!(matches!(y4m(&"x".repeat(5000)), Err(SequenceError::Y4m(_))));
    // A frame beyond the codec's memory budget is refused before any read.
    assert!(matches!(
        y4m("YUV4MPEG2 W65534 H65534 C444p16\nFRAME\n"),
        Err(SequenceError::TooLarge { .. })
    ));
    // Odd size where the layout halves the chroma.
    assert!(matches!(
        y4m("YUV4MPEG2 W63 H48 C420\n"),
        Err(SequenceError::Format(_))
    ));
    assert!(matches!(y4m("YUV4MPEG2 W64 H47 C422\n"), Ok(())));
    assert!(matches!(
        y4m("YUV4MPEG2 W64 H47 C420jpeg\n"),
        Err(SequenceError::Format(_))
    ));
    // A truncated last frame names it.
    let format = fmt(ChromaLayout::C420, 10);
    let mut w = Y4mWriter::new(Vec::new(), format, &VideoParams::default()).unwrap();
    for f in clip(&format, 3) {
        w.write_frame(&f).unwrap();
    }
    let mut bytes = w.into_inner();
    bytes.truncate(bytes.len() - 5);
    let mut r = Y4mReader::new(Cursor::new(&bytes)).unwrap();
    r.next_frame().unwrap();
    r.next_frame().unwrap();
    assert!(matches!(
        r.next_frame(),
        Err(SequenceError::TruncatedFrame { frame: 2, .. })
    ));
    // A sample above the depth is an error, not clipped.
    let mut raw = Vec::new();
    frame(&format, 0).write_bytes(&format, &mut raw);
    raw[0..2].copy_from_slice(&1024u16.to_le_bytes());
    let mut rr = RawReader::new(Cursor::new(&raw[..]), format).unwrap();
    assert!(matches!(rr.next_frame(), Err(SequenceError::Format(_))));
    let mut rr = RawReader::new(Cursor::new(&raw[..100]), format).unwrap();
    assert!(matches!(
        rr.next_frame(),
        Err(SequenceError::TruncatedFrame {
            frame: 0,
            have: 100,
            ..
        })
    ));
}

#[test]
fn every_layout_and_depth_round_trips_losslessly() {
    for layout in LAYOUTS {
        for depth in [8, 12] {
            let format = fmt(layout, depth);
            let frames = clip(&format, 3);
            let bytes = wls(&format, &frames, &EncodeOptions::lossless());
            let mut f = SequenceFile::open(Cursor::new(&bytes), SequenceLimits::default()).unwrap();
            assert_eq!(f.header.format, format);
            assert_eq!(f.frame_count(), 3);
            for (k, want) in frames.iter().enumerate().rev() {
                let streams = f.read_frame(k as u64).unwrap();
                assert_eq!(streams.len(), layout.components());
                assert_eq!(
                    &decode_frame(&streams, &format, &Backend::Cpu).unwrap(),
                    want
                );
            }
            assert!(verify_sequence(&bytes).problems.is_empty());
        }
    }
}

#[test]
fn bpp_is_per_frame_and_split_by_samples() {
    let format = fmt(ChromaLayout::C420, 8);
    let frames = clip(&format, 2);
    // A rate the small test frame's three .wl headers leave room for.
    let bytes = wls(&format, &frames, &EncodeOptions::bpp(3.0));
    let mut f = SequenceFile::open(Cursor::new(&bytes), SequenceLimits::default()).unwrap();
    for k in 0..2 {
        let streams = f.read_frame(k).unwrap();
        let total: usize = streams.iter().map(|s| s.len()).sum();
        assert!(
            total as f64 <= 3.0 * 64.0 * 48.0 / 8.0 + 3.0,
            "{total} bytes"
        );
        // Luma has 4 times the samples of each chroma plane, so about 4
        // times the bytes (the .wl headers make small planes dearer).
        assert!(
            streams[0].len() > 2 * streams[1].len(),
            "{:?}",
            streams.iter().map(|s| s.len()).collect::<Vec<_>>()
        );
    }
}

/// A reader that records every byte range read.
struct Recording<'a> {
    inner: Cursor<&'a [u8]>,
    reads: Vec<(u64, u64)>,
}

impl Read for Recording<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let at = self.inner.position();
        let n = self.inner.read(buf)?;
        self.reads.push((at, at + n as u64));
        Ok(n)
    }
}

impl Seek for Recording<'_> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

#[test]
fn decoding_frame_k_reads_only_frame_k_and_the_index() {
    let format = fmt(ChromaLayout::C422, 8);
    let bytes = wls(&format, &clip(&format, 4), &EncodeOptions::lossless());
    let rec = Recording {
        inner: Cursor::new(&bytes),
        reads: Vec::new(),
    };
    let mut f = SequenceFile::open(rec, SequenceLimits::default()).unwrap();
    let index_at = f.index_offset.unwrap();
    let opened = f.frames.clone();
    let header_len = f.header_len;
    f.read_frame(2).unwrap();
    let rec = f.into_reader();
    let frame = opened[2];
    for &(a, b) in &rec.reads {
        let in_header = b <= header_len;
        let in_index = a >= index_at;
        let in_frame = a >= frame.offset && b <= frame.offset + frame.len;
        assert!(in_header || in_index || in_frame, "read {a}..{b}");
    }
    let frame_bytes: u64 = rec
        .reads
        .iter()
        .filter(|&&(a, _)| a >= header_len && a < index_at)
        .map(|&(a, b)| b - a)
        .sum();
    assert_eq!(frame_bytes, frame.len);
}

#[test]
fn truncation_at_every_frame_boundary_and_a_flipped_byte_in_every_frame() {
    let format = fmt(ChromaLayout::C420, 8);
    let frames = clip(&format, 4);
    let bytes = wls(&format, &frames, &EncodeOptions::lossless());
    let f = SequenceFile::open(Cursor::new(&bytes), SequenceLimits::default()).unwrap();
    let entries = f.frames.clone();
    let limits = SequenceLimits::default();
    // Cut at every frame boundary, one byte into each frame, and inside the index.
    let mut cuts: Vec<(u64, usize)> = Vec::new();
    for (k, e) in entries.iter().enumerate() {
        cuts.push((e.offset, k));
        cuts.push((e.offset + 1, k));
    }
    let end = entries[3].offset + entries[3].len;
    cuts.push((end, 4));
    cuts.push((bytes.len() as u64 - 1, 4));
    for (cut, whole) in cuts {
        let b = &bytes[..cut as usize];
        let e = SequenceFile::open(Cursor::new(b), limits).unwrap_err();
        assert!(matches!(e, SequenceError::NoIndex(_)), "cut {cut}: {e}");
        let (mut p, why) = SequenceFile::open_partial(Cursor::new(b), limits).unwrap();
        assert!(why.is_some());
        assert_eq!(p.frame_count(), whole as u64, "cut {cut}");
        for (k, want) in frames.iter().enumerate().take(whole) {
            let s = p.read_frame(k as u64).unwrap();
            assert_eq!(&decode_frame(&s, &format, &Backend::Cpu).unwrap(), want);
        }
        let v = verify_sequence(b);
        assert!(
            !v.problems.is_empty() && v.problems[0].contains("truncated"),
            "{:?}",
            v.problems
        );
    }
    // A flipped byte in each frame's record header and in its data.
    for (k, e) in entries.iter().enumerate() {
        for at in [e.offset + 6, e.offset + e.len / 2, e.offset + e.len - 1] {
            let mut bad = bytes.clone();
            bad[at as usize] ^= 0x20;
            let mut f = SequenceFile::open(Cursor::new(&bad), limits).unwrap();
            for j in 0..4u64 {
                match f.read_frame(j) {
                    Ok(_) => assert_ne!(j, k as u64),
                    Err(SequenceError::DamagedFrame { frame, .. }) => assert_eq!(frame, k as u64),
                    Err(e) => panic!("frame {j}: {e}"),
                }
            }
            let v = verify_sequence(&bad);
            assert_eq!(v.damaged_frames, [k as u64], "{:?}", v.problems);
        }
    }
    // The header and the index are checked too.
    let mut bad = bytes.clone();
    bad[20] ^= 1;
    assert!(matches!(
        SequenceFile::open(Cursor::new(&bad), limits),
        Err(SequenceError::HeaderCrc { .. })
    ));
    let mut bad = bytes.clone();
    bad[end as usize + 10] ^= 1;
    assert!(matches!(
        SequenceFile::open(Cursor::new(&bad), limits),
        Err(SequenceError::IndexCrc { .. })
    ));
    let (p, why) = SequenceFile::open_partial(Cursor::new(&bad), limits).unwrap();
    assert!(why.is_some());
    assert_eq!(p.frame_count(), 4, "the scan finds every frame");
}

#[test]
fn the_reader_bounds_frame_size_and_count() {
    let format = fmt(ChromaLayout::C444, 8);
    let bytes = wls(&format, &clip(&format, 3), &EncodeOptions::lossless());
    let small = SequenceLimits {
        max_frame_samples: 64 * 48 * 3 - 1,
        ..SequenceLimits::default()
    };
    assert!(matches!(
        SequenceFile::open(Cursor::new(&bytes), small),
        Err(SequenceError::TooLarge {
            what: "frame samples",
            ..
        })
    ));
    let few = SequenceLimits {
        max_frames: 2,
        ..SequenceLimits::default()
    };
    assert!(matches!(
        SequenceFile::open(Cursor::new(&bytes), few),
        Err(SequenceError::TooLarge {
            what: "frame count",
            ..
        })
    ));
    // A codestream of another size than its component is refused.
    let mut f = SequenceFile::open(Cursor::new(&bytes), SequenceLimits::default()).unwrap();
    let mut s = f.read_frame(0).unwrap();
    s.swap(0, 1);
    assert!(decode_frame(&s, &format, &Backend::Cpu).is_ok());
    let other = fmt(ChromaLayout::C420, 8);
    assert!(matches!(
        decode_frame(&s, &other, &Backend::Cpu),
        Err(SequenceError::Codec { component: 1, .. })
    ));
}

#[test]
fn every_cut_and_every_flipped_byte_is_a_typed_error_or_a_good_frame() {
    let format = FrameFormat {
        width: 16,
        height: 8,
        layout: ChromaLayout::C420,
        bit_depth: 8,
    };
    let frames = clip(&format, 2);
    let bytes = wls(&format, &frames, &EncodeOptions::lossless());
    let limits = SequenceLimits::default();
    // Whatever the damage, a frame that reads and decodes is the original:
    // the CRCs leave nothing else through.
    let check = |b: &[u8]| {
        let _ = verify_sequence(b);
        if let Ok((mut f, _)) = SequenceFile::open_partial(Cursor::new(b), limits) {
            for k in 0..f.frame_count() {
                if let Ok(s) = f.read_frame(k) {
                    let d = decode_frame(&s, &format, &Backend::Cpu).unwrap();
                    assert_eq!(d, frames[k as usize]);
                }
            }
        }
    };
    for cut in 0..bytes.len() {
        check(&bytes[..cut]);
    }
    for at in 0..bytes.len() {
        let mut b = bytes.clone();
        b[at] ^= 0x41;
        check(&b);
    }
}
