//! `.wl` image file targets: the container parser and the full image
//! decoder on arbitrary bytes.

use wavelane::backend::Backend;
use wavelane::codec::file::{Container, ReadOptions};
use wavelane::codec::header::Header;
use wavelane::codec::{self, DecodeOptions, EncodeOptions, Image, RateTarget};

/// A small sample budget keeps every fuzz input cheap to decode.
const READ: ReadOptions = ReadOptions {
    max_samples: 1 << 16,
    check_crc: false,
};

/// Container target: any bytes as a `.wl` file. A file that parses has a
/// header that writes and re-parses to itself, a canonical index (packing
/// the parsed index gives its bytes back), segments that tile the data
/// exactly, and codeword lists within the index's counts.
pub fn wl_container(data: &[u8]) {
    let Ok(c) = Container::parse(data, READ) else {
        return;
    };
    let mut written = Vec::new();
    c.header
        .write(&mut written)
        .expect("a parsed header is writable");
    let (again, _, len) = Header::parse(&written).expect("a written header parses");
    assert_eq!(again, c.header, "header does not survive write + parse");
    assert_eq!(len, written.len());
    let packed = c
        .index
        .pack(c.header.block_shifts)
        .expect("a parsed index packs");
    // The index follows the header and its 4-byte length.
    let at = written.len() + 4;
    assert_eq!(
        data.get(at..at + packed.len()),
        Some(packed.as_slice()),
        "the index is not canonical"
    );
    let mut offset = c.header_len as u64;
    for s in &c.segments {
        assert_eq!(s.offset, offset, "segments must be contiguous");
        offset += s.len;
    }
    assert_eq!(offset, c.full_len);
    assert!(data.len() as u64 <= c.full_len);
    for k in 0..c.segments.len() {
        let _ = c.check_segment(k);
    }
    for i in 0..c.blocks.len() {
        let words = c.block_codewords(i, c.index.layers);
        assert!(words.len() as u64 <= c.index.codewords_through(i, c.index.layers));
    }
}

/// Decode target: any bytes as a `.wl` file, decoded whole, reduced and
/// with one layer (CRCs unchecked, so damage reaches the deep checks). A
/// decode never succeeds where the container is rejected, and gives an
/// image of the header's size with every sample in range; with CRCs
/// checked a successful decode is the same image.
pub fn wl_decode(data: &[u8]) {
    let parsed = Container::parse(data, READ);
    let unchecked = DecodeOptions {
        read: READ,
        ..DecodeOptions::default()
    };
    let full = codec::decode(data, &unchecked, &Backend::Cpu);
    match (&parsed, &full) {
        (Err(_), Ok(_)) => panic!("decode accepted a file the container parser rejects"),
        (Ok(c), Ok(d)) => {
            let size = (c.header.width as usize, c.header.height as usize);
            assert_eq!((d.image.width, d.image.height), size);
            d.image.validate().expect("decoded samples are in range");
        }
        _ => {}
    }
    if let Ok(c) = &parsed {
        let reduced = DecodeOptions {
            reduce: c.header.levels.min(1),
            layers: Some(1),
            read: READ,
        };
        if let Ok(d) = codec::decode(data, &reduced, &Backend::Cpu) {
            d.image.validate().expect("decoded samples are in range");
        }
    }
    let checked = DecodeOptions {
        read: ReadOptions {
            check_crc: true,
            ..READ
        },
        ..DecodeOptions::default()
    };
    if let Ok(d) = codec::decode(data, &checked, &Backend::Cpu) {
        let full = full.expect("a CRC-checked decode succeeded, the unchecked one failed");
        assert_eq!(d.image, full.image);
    }
}

/// Small files from the encoder: lossless gray, lossy RGB with layers,
/// three-pass with early termination and trained embedded tables.
pub fn seeds() -> Vec<Vec<u8>> {
    let gray = Image::from_fn(13, 7, 1, 8, |x, y, _| ((x * 19 + y * 7) % 256) as i32);
    let rgb = Image::from_fn(21, 11, 3, 8, |x, y, c| {
        ((x * 11 + y * 5 + c * 40) % 256) as i32
    });
    // Noise-like texture: the fit pays on it at this size.
    let textured = Image::from_fn(96, 80, 1, 8, |x, y, _| {
        let v = (x * 2654435761usize) ^ (y * 40503usize) ^ (x * y);
        ((v >> 3) % 64 + x + y) as i32 % 256
    });
    let options = [
        (&gray, EncodeOptions::lossless()),
        (
            &rgb,
            EncodeOptions {
                target: RateTarget::Bpp(2.0),
                layers: 2,
                ..EncodeOptions::default()
            },
        ),
        (
            &gray,
            EncodeOptions {
                target: RateTarget::Bpp(3.0),
                passes: 3,
                early_termination: true,
                tables: codec::TableChoice::Trained,
                ..EncodeOptions::default()
            },
        ),
        // Format version 2's table fields: a lossless fit large enough to
        // write a change list (table code 254), the reference preset, and
        // an embedded table (255).
        (
            &textured,
            EncodeOptions {
                tables: codec::TableChoice::Trained,
                ..EncodeOptions::lossless()
            },
        ),
        (
            &rgb,
            EncodeOptions {
                tables: codec::TableChoice::Preset(codec::tables::PRESET_REFERENCE),
                ..EncodeOptions::lossless()
            },
        ),
        (
            &gray,
            EncodeOptions {
                target: RateTarget::Bpp(1.0),
                passes: 2,
                tables: codec::TableChoice::Custom(Box::new(
                    wavelane_core::bpc::ProbabilityTables::reference(
                        wavelane_core::bpc::Mode::TwoPass,
                    )
                    .clone(),
                )),
                ..EncodeOptions::default()
            },
        ),
    ];
    options
        .iter()
        .map(|(image, o)| {
            codec::encode(image, o, &Backend::Cpu)
                .expect("seed images encode")
                .bytes
        })
        .collect()
}
