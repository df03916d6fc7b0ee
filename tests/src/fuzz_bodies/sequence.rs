//! Sequence target: the `.wls` container parser (complete and partial)
//! and the frame decoder on arbitrary bytes.

use std::io::Cursor;

use wavelane::backend::Backend;
use wavelane::codec::EncodeOptions;
use wavelane::sequence::container::{SequenceFile, SequenceLimits, SequenceWriter};
use wavelane::sequence::verify::verify_sequence;
use wavelane::sequence::{
    decode_frame, encode_frame, ChromaLayout, Frame, FrameFormat, SequenceHeader, VideoParams,
};

/// Small bounds keep every fuzz input cheap to decode.
const LIMITS: SequenceLimits = SequenceLimits {
    max_frame_samples: 1 << 13,
    max_frames: 64,
};

/// Any bytes as a `.wls` file. A file that opens has a header that writes
/// back to the same bytes and records that tile the file from the header
/// to the index; the partial reader finds at least the frames the index
/// lists when the index is good; every frame that reads decodes to planes
/// of its component's size with samples in range; `verify` finds nothing
/// wrong exactly when opening and reading every frame succeed.
pub fn sequence_container(data: &[u8]) {
    let full = SequenceFile::open(Cursor::new(data), LIMITS);
    let partial = SequenceFile::open_partial(Cursor::new(data), LIMITS);
    let mut all_read = full.is_ok();
    match (&full, &partial) {
        (Ok(_), Err(e)) => panic!("the partial reader rejects a file that opens: {e}"),
        (Ok(f), Ok((p, why))) => {
            assert!(why.is_none(), "a good index is used");
            assert_eq!(f.frames, p.frames);
        }
        _ => {}
    }
    if let Ok((mut p, _)) = partial {
        let header = p.header.to_bytes().expect("a parsed header writes");
        assert_eq!(
            &data[..p.header_len as usize],
            &header[..],
            "header not canonical"
        );
        let mut at = p.header_len;
        for e in &p.frames {
            assert_eq!(e.offset, at, "records must be contiguous");
            at += e.len;
        }
        assert!(at <= data.len() as u64);
        if let Some(index) = p.index_offset {
            assert_eq!(at, index);
        }
        let format = p.header.format;
        let max = (1i64 << format.bit_depth) - 1;
        for k in 0..p.frame_count() {
            let Ok(streams) = p.read_frame(k) else {
                all_read = false;
                continue;
            };
            let Ok(frame) = decode_frame(&streams, &format, &Backend::Cpu) else {
                continue;
            };
            for (c, plane) in frame.planes.iter().enumerate() {
                let (w, h) = format.plane_size(c);
                assert_eq!(plane.len(), w * h);
                assert!(plane.iter().all(|&v| (0..=max).contains(&(v as i64))));
            }
        }
    }
    if data.len() < 1 << 20 {
        let v = verify_sequence(data);
        if full.is_ok() {
            assert_eq!(v.problems.is_empty(), all_read, "{:?}", v.problems);
        }
    }
}

fn clip(format: &FrameFormat, frames: usize) -> Vec<Frame> {
    let max = (1i32 << format.bit_depth) - 1;
    (0..frames)
        .map(|t| {
            Frame::from_fn(format, |x, y, c| {
                ((x + 2 * t) * 9 + y * 5 + c * 30) as i32 % (max + 1)
            })
        })
        .collect()
}

/// Sequences of the encoder: gray lossless, 4:2:0 at a rate with Y4M
/// parameters, 10-bit 4:2:2 lossless.
pub fn seeds() -> Vec<Vec<u8>> {
    let params = VideoParams {
        frame_rate: Some((25, 1)),
        aspect: Some((1, 1)),
        interlace: Some(b'p'),
        colour_tag: Some("420jpeg".into()),
        extra: vec!["XCOLORRANGE=LIMITED".into()],
    };
    let cases = [
        (
            ChromaLayout::Mono,
            8,
            VideoParams::default(),
            EncodeOptions::lossless(),
            2,
        ),
        (ChromaLayout::C420, 8, params, EncodeOptions::bpp(2.0), 3),
        (
            ChromaLayout::C422,
            10,
            VideoParams::default(),
            EncodeOptions::lossless(),
            2,
        ),
    ];
    cases
        .into_iter()
        .map(|(layout, bit_depth, params, options, n)| {
            let format = FrameFormat {
                width: 24,
                height: 16,
                layout,
                bit_depth,
            };
            let header = SequenceHeader::new(format, params, &options);
            let mut w = SequenceWriter::new(Vec::new(), &header).expect("header writes");
            for f in clip(&format, n) {
                let s = encode_frame(&f, &format, &options, &Backend::Cpu).expect("seed encodes");
                w.write_frame(&s).expect("frame writes");
            }
            w.finish().expect("index writes")
        })
        .collect()
}
