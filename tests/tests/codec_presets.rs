//! The codec's probability-table presets and the header fields that name
//! them (format version 2): the natural-image presets are the defaults and
//! round-trip, the table row offset follows bit depth and step and pays
//! where it moves rows, and version 1 files still decode while anything
//! outside the documented values is a typed error.

use wavelane::backend::Backend;
use wavelane::codec::file::{Container, ReadOptions};
use wavelane::codec::header::Tables;
use wavelane::codec::tables::{PRESET_NATURAL_LOSSLESS, PRESET_NATURAL_LOSSY, PRESET_REFERENCE};
use wavelane::codec::{
    self, CodecError, DecodeOptions, EncodeOptions, FormatError, Image, TableChoice,
};
use wavelane_cli::demo::demo_image;
use wavelane_core::bpc::{Mode, ProbabilityTables};

/// Offset of the version field and of the table row offset byte.
const VERSION_AT: usize = 8;
const ROW_OFFSET_AT: usize = 35;
const TABLES_AT: usize = 31;

fn decode(bytes: &[u8]) -> Result<Image, CodecError> {
    Ok(codec::decode(bytes, &DecodeOptions::default(), &Backend::Cpu)?.image)
}

fn header_of(bytes: &[u8]) -> wavelane::codec::header::Header {
    Container::parse(bytes, ReadOptions::default())
        .unwrap()
        .header
}

/// `(preset id, row offset)` of a file's tables (plain or adjusted).
fn preset_of(bytes: &[u8]) -> (u8, i8) {
    let tables = header_of(bytes).tables;
    (tables.base_preset().expect("a preset"), tables.row_offset())
}

fn natural(lossless: bool) -> TableChoice {
    TableChoice::Preset(if lossless {
        PRESET_NATURAL_LOSSLESS
    } else {
        PRESET_NATURAL_LOSSY
    })
}

/// A `w` x `h` crop at (`x`, `y`) of the demo photograph's first `components` planes.
fn crop(components: usize, x: usize, y: usize, w: usize, h: usize) -> Image {
    let full = demo_image();
    let planes = full.planes[..components]
        .iter()
        .map(|p| {
            (0..h)
                .flat_map(|r| p[(r + y) * full.width + x..][..w].to_vec())
                .collect()
        })
        .collect();
    Image {
        width: w,
        height: h,
        planes,
        ..full
    }
}

/// A 64x48 crop of the demo photograph.
fn photo(components: usize) -> Image {
    crop(components, 160, 150, 64, 48)
}

/// `image` at `bits` bits: the 8-bit samples scaled up, the new low bits
/// filled with a deterministic pattern (sensor-like noise), or scaled down.
fn at_depth(image: &Image, bits: u8) -> Image {
    let mut out = image.clone();
    out.bit_depth = bits;
    for plane in out.planes.iter_mut() {
        for (i, v) in plane.iter_mut().enumerate() {
            *v = if bits >= 8 {
                let hash = (i as u32).wrapping_mul(2_654_435_761) >> 13;
                let low = hash as i32 & ((1 << (bits - 8)) - 1);
                (*v << (bits - 8)) | low
            } else {
                *v >> (8 - bits)
            };
        }
    }
    out
}

/// Rewrites a header byte and its CRC (the header's last 4 bytes).
fn patch_header(bytes: &mut [u8], at: usize, value: u8) {
    bytes[at] = value;
    let len = u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
    let crc = crc32fast::hash(&bytes[..len - 4]);
    bytes[len - 4..len].copy_from_slice(&crc.to_le_bytes());
}

fn encode(image: &Image, options: &EncodeOptions) -> Vec<u8> {
    codec::encode(image, options, &Backend::Cpu).unwrap().bytes
}

/// Decoding `bytes` fails on the header field `want`.
fn assert_bad_field(bytes: &[u8], want: &str) {
    match decode(bytes) {
        Err(CodecError::Format(FormatError::BadField { field, .. })) => assert_eq!(field, want),
        other => panic!("expected a bad `{want}`, got {other:?}"),
    }
}

#[test]
fn natural_presets_are_the_defaults_and_round_trip() {
    for passes in [2, 3] {
        for components in [1, 3] {
            let image = photo(components);
            let lossless = EncodeOptions {
                passes,
                ..EncodeOptions::lossless()
            };
            let bytes = encode(&image, &lossless);
            // Fitted: the row offset may move by one from the bit depth's.
            let (id, offset) = preset_of(&bytes);
            assert_eq!(id, PRESET_NATURAL_LOSSLESS);
            assert!(offset.abs() <= 1);
            assert_eq!(bytes[VERSION_AT], 2);
            assert_eq!(decode(&bytes).unwrap(), image);
            let lossy = EncodeOptions {
                passes,
                ..EncodeOptions::bpp(2.0)
            };
            let bytes = encode(&image, &lossy);
            // Fitted to the coded passes: the row offset may move by one.
            let (id, offset) = preset_of(&bytes);
            assert_eq!(id, PRESET_NATURAL_LOSSY);
            assert!(offset.abs() <= 1);
            let decoded = decode(&bytes).unwrap();
            assert!(codec::psnr(&image, &decoded).unwrap() > 30.0);
        }
    }
}

#[test]
fn natural_presets_code_a_photo_smaller_than_the_reference() {
    let image = photo(3);
    let natural = encode(&image, &EncodeOptions::lossless());
    let reference = EncodeOptions {
        tables: TableChoice::Preset(PRESET_REFERENCE),
        ..EncodeOptions::lossless()
    };
    let reference = encode(&image, &reference);
    assert_eq!(preset_of(&reference), (PRESET_REFERENCE, 0));
    assert_eq!(decode(&reference).unwrap(), image);
    assert!(
        natural.len() < reference.len(),
        "natural {} >= reference {}",
        natural.len(),
        reference.len()
    );
}

#[test]
fn row_offsets_follow_bit_depth_and_step_and_round_trip() {
    let gray = photo(1);
    for (bits, offset) in [(1, -7), (4, -4), (8, 0), (12, 4), (16, 8)] {
        let image = at_depth(&gray, bits);
        let plain = EncodeOptions {
            tables: natural(true),
            ..EncodeOptions::lossless()
        };
        let bytes = encode(&image, &plain);
        assert_eq!(
            preset_of(&bytes),
            (PRESET_NATURAL_LOSSLESS, offset),
            "{bits} bits"
        );
        assert_eq!(decode(&bytes).unwrap(), image, "{bits} bits");
        // Lossy at the default step 2^(bits-8) needs no offset (before the
        // fit, which may move it by one).
        let lossy = EncodeOptions {
            tables: natural(false),
            ..EncodeOptions::bpp(2.0)
        };
        let bytes = encode(&image, &lossy);
        assert_eq!(preset_of(&bytes), (PRESET_NATURAL_LOSSY, 0), "{bits} bits");
        decode(&bytes).unwrap();
    }
    let half_step = EncodeOptions {
        base_step: Some(0.5),
        tables: natural(false),
        ..EncodeOptions::bpp(1.0)
    };
    assert_eq!(
        preset_of(&encode(&gray, &half_step)),
        (PRESET_NATURAL_LOSSY, 1)
    );
}

/// The offsets the encoder picks beat leaving the rows where they are, in
/// both directions of the scale.
#[test]
fn moved_rows_code_better_than_unmoved_ones() {
    let image = at_depth(&photo(3), 12);
    let size = |offset: Option<i8>| {
        let o = EncodeOptions {
            tables: natural(true),
            table_row_offset: offset,
            ..EncodeOptions::lossless()
        };
        let bytes = encode(&image, &o);
        assert_eq!(decode(&bytes).unwrap(), image);
        bytes.len()
    };
    assert!(size(None) < size(Some(0)), "12-bit lossless");

    let image = photo(3);
    let psnr = |offset: Option<i8>| {
        let o = EncodeOptions {
            base_step: Some(0.25),
            table_row_offset: offset,
            ..EncodeOptions::bpp(1.0)
        };
        let bytes = encode(&image, &o);
        codec::psnr(&image, &decode(&bytes).unwrap()).unwrap()
    };
    let (moved, unmoved) = (psnr(None), psnr(Some(0)));
    assert!(moved > unmoved + 0.5, "step 1/4: {moved} vs {unmoved} dB");
}

#[test]
fn table_row_offsets_outside_presets_or_range_are_refused() {
    let image = photo(1);
    let custom = TableChoice::Custom(Box::new(
        ProbabilityTables::natural_lossless(Mode::ThreePass).clone(),
    ));
    for (tables, offset) in [
        (TableChoice::Default, 15),
        (TableChoice::Default, -15),
        (TableChoice::Trained, 15),
        (custom, 0),
    ] {
        let o = EncodeOptions {
            tables,
            table_row_offset: Some(offset),
            ..EncodeOptions::lossless()
        };
        assert!(matches!(
            codec::encode(&image, &o, &Backend::Cpu),
            Err(CodecError::Options(_))
        ));
    }
    let o = EncodeOptions {
        tables: TableChoice::Preset(1),
        ..EncodeOptions::lossless()
    };
    assert!(codec::encode(&image, &o, &Backend::Cpu).is_err());
}

/// A version 1 file is a version 2 file with preset 0 or embedded tables
/// and a zero row offset: such a file with its version set to 1 decodes
/// to the same image (tests/tests/snapshots.rs pins that these are the
/// bytes the version 1 encoder wrote).
#[test]
fn version_1_files_decode() {
    let image = photo(3);
    for options in [
        EncodeOptions {
            tables: TableChoice::Preset(PRESET_REFERENCE),
            ..EncodeOptions::lossless()
        },
        EncodeOptions {
            tables: TableChoice::Custom(Box::new(
                ProbabilityTables::reference(Mode::TwoPass).with_row_offset(1),
            )),
            passes: 2,
            ..EncodeOptions::bpp(3.0)
        },
    ] {
        let v2 = encode(&image, &options);
        let mut v1 = v2.clone();
        patch_header(&mut v1, VERSION_AT, 1);
        assert_eq!(decode(&v1).unwrap(), decode(&v2).unwrap());
        let version = |b: &[u8]| Container::parse(b, ReadOptions::default()).unwrap().version;
        assert_eq!((version(&v1), version(&v2)), (1, 2));
    }
}

#[test]
fn header_table_fields_outside_their_version_are_typed_errors() {
    let image = photo(1);
    let plain = EncodeOptions {
        tables: natural(true),
        ..EncodeOptions::lossless()
    };
    let natural = encode(&image, &plain);
    assert_eq!(preset_of(&natural), (PRESET_NATURAL_LOSSLESS, 0));
    // Version 1 knew preset 0 only and had a reserved byte.
    let mut v1 = natural.clone();
    patch_header(&mut v1, VERSION_AT, 1);
    assert_bad_field(&v1, "tables");
    let mut v1 = natural.clone();
    patch_header(&mut v1, TABLES_AT, PRESET_REFERENCE);
    patch_header(&mut v1, ROW_OFFSET_AT, 1);
    patch_header(&mut v1, VERSION_AT, 1);
    assert_bad_field(&v1, "reserved");
    // Version 2: unknown presets, offsets beyond 14, offsets with embedded tables.
    for id in [1, 2, 5, 254] {
        let mut bad = natural.clone();
        patch_header(&mut bad, TABLES_AT, id);
        assert_bad_field(&bad, "tables");
    }
    for offset in [15i8, -15, i8::MAX, i8::MIN] {
        let mut bad = natural.clone();
        patch_header(&mut bad, ROW_OFFSET_AT, offset as u8);
        assert_bad_field(&bad, "table_row_offset");
    }
    let custom = EncodeOptions {
        tables: TableChoice::Custom(Box::new(
            ProbabilityTables::natural_lossy(Mode::ThreePass).clone(),
        )),
        ..EncodeOptions::lossless()
    };
    let mut embedded = encode(&image, &custom);
    assert!(matches!(header_of(&embedded).tables, Tables::Embedded(_)));
    assert_eq!(decode(&embedded).unwrap(), image);
    patch_header(&mut embedded, ROW_OFFSET_AT, 1);
    assert_bad_field(&embedded, "table_row_offset");
    // Versions around the known ones.
    for version in [0, 3] {
        let mut bad = natural.clone();
        patch_header(&mut bad, VERSION_AT, version);
        assert!(matches!(
            decode(&bad),
            Err(CodecError::Format(FormatError::UnsupportedVersion(v))) if v == version as u16
        ));
    }
    // A valid offset passes the header checks; the data, coded with other
    // rows, then no longer fits its tables: the codeblock decoder reports
    // it (a typed error of the data, not of the header).
    let mut moved = natural.clone();
    patch_header(&mut moved, ROW_OFFSET_AT, (-3i8) as u8);
    assert_eq!(preset_of(&moved), (PRESET_NATURAL_LOSSLESS, -3));
    match decode(&moved) {
        Err(CodecError::Bpc(_)) => {}
        Ok(moved) => assert_ne!(moved, image, "other table rows decode to another image"),
        Err(e) => panic!("a valid row offset: {e:?}"),
    }
}

/// The compiled presets the header names are the ones core exports.
#[test]
fn preset_ids_name_the_compiled_tables() {
    for mode in [Mode::TwoPass, Mode::ThreePass] {
        let t = |id, offset| Tables::preset(id, mode, offset).unwrap();
        assert_eq!(
            t(PRESET_NATURAL_LOSSLESS, 0).probability_tables(),
            ProbabilityTables::natural_lossless(mode)
        );
        assert_eq!(
            t(PRESET_NATURAL_LOSSY, 0).probability_tables(),
            ProbabilityTables::natural_lossy(mode)
        );
        assert_eq!(
            t(PRESET_REFERENCE, 2).probability_tables(),
            &ProbabilityTables::reference(mode).with_row_offset(2)
        );
        assert!(Tables::preset(PRESET_REFERENCE, mode, 15).is_none());
        assert!(Tables::preset(7, mode, 0).is_none());
    }
}

/// A 192x160 crop of the demo photograph (enough codeblocks for fitted
/// tables to pay).
fn large_photo() -> Image {
    crop(demo_image().planes.len(), 100, 100, 192, 160)
}

/// Lossless by default fits the preset to a sample of the blocks, listing
/// changes in the header; fitting on every block does at least as well,
/// and both beat the plain preset. (Lossy targets: the next test.)
#[test]
fn fitted_tables_pay_on_lossless_photographs_and_round_trip() {
    let image = large_photo();
    let with = |tables: TableChoice| {
        let o = EncodeOptions {
            tables,
            ..EncodeOptions::lossless()
        };
        let bytes = encode(&image, &o);
        assert_eq!(decode(&bytes).unwrap(), image);
        bytes
    };
    let plain = with(natural(true));
    let auto = with(TableChoice::Default);
    let trained = with(TableChoice::Trained);
    for bytes in [&auto, &trained] {
        let h = header_of(bytes);
        assert_eq!(h.tables.name(), "adjusted");
        assert_eq!(h.tables.base_preset(), Some(PRESET_NATURAL_LOSSLESS));
        assert!(bytes[TABLES_AT] == 254);
    }
    assert!(
        auto.len() < plain.len(),
        "{} vs {}",
        auto.len(),
        plain.len()
    );
    assert!(
        trained.len() <= auto.len(),
        "{} vs {}",
        trained.len(),
        auto.len()
    );
    // `Natural` is the wavelet's preset, never fitted: the plain files.
    assert_eq!(with(TableChoice::Natural), plain);
}

/// Lossy targets fit the preset to the symbols of the passes a first
/// allocation keeps: on the 384x384 photograph the change list pays at
/// some rate (not on small crops: it costs too much of their budget), the
/// file decodes, still fills the budget within 0.5% and is no worse than
/// the plain preset's; `Natural` skips the fit.
#[test]
fn lossy_targets_fit_the_coded_passes_and_round_trip() {
    let image = demo_image();
    let pixels = (image.width * image.height) as f64;
    let mut adjusted = 0;
    for bpp in [0.5, 1.0, 2.0] {
        let with = |tables: TableChoice| {
            let o = EncodeOptions {
                tables,
                ..EncodeOptions::bpp(bpp)
            };
            let bytes = encode(&image, &o);
            let got = bytes.len() as f64 * 8.0 / pixels;
            assert!(got <= bpp && got >= 0.995 * bpp, "--bpp {bpp}: {got:.4}");
            let psnr = codec::psnr(&image, &decode(&bytes).unwrap()).unwrap();
            (bytes, psnr)
        };
        let (fitted, fitted_psnr) = with(TableChoice::Default);
        let (plain, plain_psnr) = with(TableChoice::Natural);
        assert_eq!(header_of(&plain).tables.name(), "natural-lossy");
        let h = header_of(&fitted);
        if h.tables.name() == "adjusted" {
            assert_eq!(fitted[TABLES_AT], 254);
            adjusted += 1;
        } else {
            assert_eq!(fitted, plain, "--bpp {bpp}: not fitted, so the plain file");
        }
        assert_eq!(h.tables.base_preset(), Some(PRESET_NATURAL_LOSSY));
        // Kept only where rate control predicts a gain; the prediction is
        // not exact, so allow a hair below.
        assert!(
            fitted_psnr > plain_psnr - 0.05,
            "--bpp {bpp}: {fitted_psnr:.3} vs {plain_psnr:.3} dB"
        );
    }
    assert!(adjusted >= 1, "the fit pays at some rate on a photograph");
}

/// Adjusted tables are a version 2 structure: a version 1 header cannot
/// name them, their base must be a preset, and a damaged change list is a
/// typed error.
#[test]
fn adjusted_tables_are_validated() {
    let image = large_photo();
    let trained = EncodeOptions {
        tables: TableChoice::Trained,
        ..EncodeOptions::lossless()
    };
    let good = encode(&image, &trained);
    let steps = 2 * (1 + 3 * 5);
    let base_at = 36 + steps;
    assert_eq!(good[base_at], PRESET_NATURAL_LOSSLESS);
    let mut v1 = good.clone();
    patch_header(&mut v1, ROW_OFFSET_AT, 0);
    patch_header(&mut v1, VERSION_AT, 1);
    assert_bad_field(&v1, "tables");
    for base in [1, 2, 254, 255] {
        let mut bad = good.clone();
        patch_header(&mut bad, base_at, base);
        assert_bad_field(&bad, "tables");
    }
    // Another valid base: the change list, fitted to the first base, must
    // keep every changed cell of the new one in 0..=127 or be rejected by
    // that rule (it is here); an image, if any, is another one.
    let mut other = good.clone();
    patch_header(&mut other, base_at, PRESET_REFERENCE);
    match decode(&other) {
        Err(CodecError::Format(FormatError::BadField { field, .. })) => {
            assert_eq!(field, "table_changes")
        }
        Ok(other) => assert_ne!(other, image, "another base decodes to another image"),
        Err(e) => panic!("another valid base: {e:?}"),
    }
    // Every byte of the change list damaged: a typed error of the header
    // (the list's rules) or of the data (valid changes, so other tables the
    // codewords no longer fit), or an image of the file's size; never a
    // panic or another kind of error.
    let len = u16::from_le_bytes([good[base_at + 1], good[base_at + 2]]) as usize;
    for i in base_at + 3..base_at + 3 + len {
        let mut bad = good.clone();
        patch_header(&mut bad, i, good[i] ^ 0x24);
        match decode(&bad) {
            Ok(img) => assert_eq!((img.width, img.height), (image.width, image.height)),
            Err(CodecError::Format(_) | CodecError::Bpc(_)) => {}
            Err(e) => panic!("change-list byte {i}: {e:?}"),
        }
    }
}
