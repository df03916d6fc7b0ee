//! The hard limits of docs/format.md (`.wl`, "Hard limits") at their edges:
//! a file just inside each decodes, and the same file with the field moved
//! just outside gets the validator's typed error. Every patched header has
//! its CRC recomputed, so that the field checks, not the CRC, reject it.

use wavelane::backend::Backend;
use wavelane::codec::file::ReadOptions;
use wavelane::codec::{
    self, CodecError, DecodeOptions, EncodeOptions, FormatError, Image, RateTarget,
};

/// Header offsets (docs/format.md, main header).
const WIDTH_AT: usize = 14;
const HEIGHT_AT: usize = 18;
const COMPONENTS_AT: usize = 22;
const BIT_DEPTH_AT: usize = 23;
const LEVELS_AT: usize = 27;
const CODEBLOCK_HEIGHT_AT: usize = 28;
const FRACTION_BITS_AT: usize = 32;
const LAYERS_AT: usize = 33;

fn image(width: usize, height: usize, components: usize, bit_depth: u8) -> Image {
    let max = (1i64 << bit_depth) - 1;
    Image {
        width,
        height,
        bit_depth,
        signed: false,
        planes: (0..components)
            .map(|c| {
                (0..width * height)
                    .map(|i| ((i as i64 * 7919 + c as i64 * 31) % (max + 1)) as i32)
                    .collect()
            })
            .collect(),
    }
}

fn encode(image: &Image, options: &EncodeOptions) -> Vec<u8> {
    codec::encode(image, options, &Backend::Cpu).unwrap().bytes
}

fn decode(bytes: &[u8], read: ReadOptions) -> Result<Image, CodecError> {
    let options = DecodeOptions {
        read,
        ..DecodeOptions::default()
    };
    Ok(codec::decode(bytes, &options, &Backend::Cpu)?.image)
}

/// `bytes` with `value` written at `at` and the header CRC recomputed.
fn patched(bytes: &[u8], at: usize, value: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    out[at..at + value.len()].copy_from_slice(value);
    let len = u32::from_le_bytes(out[10..14].try_into().unwrap()) as usize;
    let crc = crc32fast::hash(&out[..len - 4]);
    out[len - 4..len].copy_from_slice(&crc.to_le_bytes());
    out
}

/// The file at the edge decodes (to `want` when given); each patch outside
/// is rejected naming `field`.
fn check_edge(
    what: &str,
    file: &[u8],
    want: Option<&Image>,
    field: &str,
    outside: &[(usize, Vec<u8>)],
) {
    let inside = decode(file, ReadOptions::default())
        .unwrap_or_else(|e| panic!("{what}: the file at the limit does not decode: {e}"));
    if let Some(want) = want {
        assert!(&inside == want, "{what}: decoded image differs");
    }
    for (at, value) in outside {
        match decode(&patched(file, *at, value), ReadOptions::default()) {
            Err(CodecError::Format(FormatError::BadField { field: f, .. })) => {
                assert_eq!(f, field, "{what}: {value:?} at {at}")
            }
            other => panic!("{what}: {value:?} at {at}: expected a bad `{field}`, got {other:?}"),
        }
    }
}

#[test]
fn width_height_and_levels_at_their_limits() {
    // 65535 x 1 with the most levels: min(16, ceil(log2(65535))) = 16.
    let wide = image(65535, 1, 1, 8);
    let opts = EncodeOptions {
        levels: Some(16),
        ..EncodeOptions::lossless()
    };
    let file = encode(&wide, &opts);
    assert_eq!(file[LEVELS_AT], 16);
    check_edge(
        "width 65535",
        &file,
        Some(&wide),
        "width",
        &[
            (WIDTH_AT, 65536u32.to_le_bytes().to_vec()),
            (WIDTH_AT, 0u32.to_le_bytes().to_vec()),
        ],
    );
    check_edge("levels 16", &file, None, "levels", &[(LEVELS_AT, vec![17])]);
    let tall = image(1, 65535, 1, 8);
    let file = encode(&tall, &EncodeOptions::lossless());
    check_edge(
        "height 65535",
        &file,
        Some(&tall),
        "height",
        &[
            (HEIGHT_AT, 65536u32.to_le_bytes().to_vec()),
            (HEIGHT_AT, 0u32.to_le_bytes().to_vec()),
        ],
    );
    // 20 x 20: at most ceil(log2(20)) = 5 levels.
    let small = image(20, 20, 1, 8);
    let file = encode(
        &small,
        &EncodeOptions {
            levels: Some(5),
            ..EncodeOptions::lossless()
        },
    );
    check_edge(
        "levels 5 of 20x20",
        &file,
        Some(&small),
        "levels",
        &[(LEVELS_AT, vec![6])],
    );
}

#[test]
fn components_bit_depth_and_codeblock_height_at_their_limits() {
    let four = image(24, 18, 4, 16);
    let file = encode(&four, &EncodeOptions::lossless());
    check_edge(
        "4 components",
        &file,
        Some(&four),
        "components",
        &[(COMPONENTS_AT, vec![5]), (COMPONENTS_AT, vec![0])],
    );
    check_edge(
        "bit depth 16",
        &file,
        None,
        "bit_depth",
        &[(BIT_DEPTH_AT, vec![17]), (BIT_DEPTH_AT, vec![0])],
    );
    let one_bit = image(24, 18, 1, 1);
    check_edge(
        "bit depth 1",
        &encode(&one_bit, &EncodeOptions::lossless()),
        Some(&one_bit),
        "bit_depth",
        &[],
    );
    let gray = image(40, 300, 1, 8);
    for (height, outside) in [(256u16, 257u16), (1, 0)] {
        let file = encode(
            &gray,
            &EncodeOptions {
                codeblock_height: Some(height),
                ..EncodeOptions::lossless()
            },
        );
        check_edge(
            &format!("codeblock height {height}"),
            &file,
            Some(&gray),
            "codeblock_height",
            &[(CODEBLOCK_HEIGHT_AT, outside.to_le_bytes().to_vec())],
        );
    }
}

#[test]
fn layers_and_fraction_bits_at_their_limits() {
    let gray = image(48, 40, 1, 8);
    let file = encode(
        &gray,
        &EncodeOptions {
            layers: 32,
            target: RateTarget::Bpp(4.0),
            fraction_bits: Some(8),
            ..EncodeOptions::default()
        },
    );
    assert_eq!((file[LAYERS_AT], file[FRACTION_BITS_AT]), (32, 8));
    check_edge(
        "32 layers",
        &file,
        None,
        "layers",
        &[(LAYERS_AT, vec![33]), (LAYERS_AT, vec![0])],
    );
    check_edge(
        "8 fraction bits",
        &file,
        None,
        "fraction_bits",
        &[(FRACTION_BITS_AT, vec![9])],
    );
}

/// The decoder's memory budget: a file of exactly `max_samples` samples
/// decodes, one sample over is `TooLarge`.
#[test]
fn memory_budget_at_its_limit() {
    let rgb = image(30, 20, 3, 8);
    let file = encode(&rgb, &EncodeOptions::lossless());
    let samples = 30 * 20 * 3;
    let at = |max_samples| ReadOptions {
        max_samples,
        ..ReadOptions::default()
    };
    assert!(decode(&file, at(samples)).unwrap() == rgb);
    match decode(&file, at(samples - 1)) {
        Err(CodecError::Format(FormatError::TooLarge { samples: s, limit })) => {
            assert_eq!((s, limit), (samples, samples - 1))
        }
        other => panic!("one sample over the budget: {other:?}"),
    }
}
