//! `wavelane info` against the file itself: every header field it reports
//! is read here from the bytes at the offsets docs/format.md gives, the
//! sizes add up to the file, and the per-segment CRC status follows a
//! corrupted segment.

mod common;
mod pictures;

use common::{ok, s, Scratch};
use pictures::Pnm;
use serde_json::Value;

fn info(path: &std::path::Path) -> Value {
    serde_json::from_str(&ok(&["info", s(path), "--json"])).expect("JSON output")
}

fn u32_at(bytes: &[u8], at: usize) -> u64 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as u64
}

#[test]
fn info_fields_match_the_header_bytes_and_sizes_add_up() {
    let dir = Scratch::new("info-cli", "fields");
    let cases: [(&str, Pnm, &[&str]); 3] = [
        ("gray.pgm", Pnm::test_picture(67, 45, 1, 255), &[]),
        (
            "rgb.ppm",
            Pnm::test_picture(40, 70, 3, 255),
            &["--bpp", "2", "--layers", "4", "--levels", "3"],
        ),
        (
            "deep.pgm",
            Pnm::test_picture(33, 21, 1, 4095),
            &[
                "--bit-depth",
                "12",
                "--wavelet",
                "97",
                "--psnr",
                "50",
                "--passes",
                "2",
            ],
        ),
    ];
    for (name, pic, extra) in cases {
        let src = dir.path(name);
        pic.write(&src);
        let wl = dir.path(&format!("{name}.wl"));
        let mut args = vec!["encode", s(&src), "-o", s(&wl), "--backend", "cpu"];
        args.extend_from_slice(extra);
        ok(&args);
        let bytes = std::fs::read(&wl).unwrap();
        let v = info(&wl);
        let field = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{name}: no {k}"));
        assert_eq!(field("bytes"), bytes.len() as u64, "{name}");
        assert_eq!(field("format_version"), 2, "{name}");
        assert_eq!(field("header_bytes"), u32_at(&bytes, 10), "{name}");
        assert_eq!(field("width"), u32_at(&bytes, 14), "{name}");
        assert_eq!(field("height"), u32_at(&bytes, 18), "{name}");
        assert_eq!(
            (field("width"), field("height")),
            (pic.width as u64, pic.height as u64)
        );
        assert_eq!(field("components"), bytes[22] as u64, "{name}");
        assert_eq!(field("components"), pic.channels as u64, "{name}");
        assert_eq!(field("bit_depth"), bytes[23] as u64, "{name}");
        assert_eq!(v["signed"].as_bool(), Some(bytes[24] == 1), "{name}");
        let wavelet = ["5/3", "9/7", "9/7-fixed"][bytes[26] as usize];
        assert_eq!(v["wavelet"].as_str(), Some(wavelet), "{name}");
        assert_eq!(field("levels"), bytes[27] as u64, "{name}");
        assert_eq!(
            field("codeblock_height"),
            u16::from_le_bytes([bytes[28], bytes[29]]) as u64
        );
        assert_eq!(field("passes"), bytes[30] as u64, "{name}");
        assert_eq!(field("fraction_bits"), bytes[32] as u64, "{name}");
        assert_eq!(field("layers"), bytes[33] as u64, "{name}");
        assert_eq!(v["table_row_offset"].as_i64(), Some(bytes[35] as i8 as i64));
        // The sizes per resolution and layer tile the data after the header.
        let resolutions = v["resolutions"].as_array().unwrap();
        assert_eq!(resolutions.len() as u64, field("levels") + 1, "{name}");
        let data: u64 = resolutions
            .iter()
            .map(|r| {
                let layers = r["layer_bytes"].as_array().unwrap();
                assert_eq!(layers.len() as u64, field("layers"), "{name}");
                layers.iter().map(|b| b.as_u64().unwrap()).sum::<u64>()
            })
            .sum();
        assert_eq!(field("header_bytes") + data, bytes.len() as u64, "{name}");
        assert_eq!(v["complete"].as_bool(), Some(true), "{name}");
        let crcs = v["segments_crc_ok"].as_array().unwrap();
        assert!(
            crcs.iter().all(|c| c.as_bool() == Some(true)),
            "{name}: {crcs:?}"
        );
    }
    // Parameters asked for on the command line are the ones reported.
    let v = info(&dir.path("rgb.ppm.wl"));
    assert_eq!(
        (v["layers"].as_u64(), v["levels"].as_u64()),
        (Some(4), Some(3))
    );
    assert_eq!(
        v["colour_transform"].as_str().map(|c| c != "none"),
        Some(true)
    );
    let v = info(&dir.path("deep.pgm.wl"));
    assert_eq!(
        (v["bit_depth"].as_u64(), v["passes"].as_u64()),
        (Some(12), Some(2))
    );
    assert_eq!(v["wavelet"].as_str(), Some("9/7"));
}

/// A flipped byte in the last data segment shows as that segment's CRC
/// failing, the others passing.
#[test]
fn info_reports_the_corrupted_segment() {
    let dir = Scratch::new("info-cli", "crc");
    let src = dir.path("src.pgm");
    Pnm::test_picture(60, 40, 1, 255).write(&src);
    let wl = dir.path("src.wl");
    ok(&["encode", s(&src), "-o", s(&wl), "--backend", "cpu"]);
    let mut bytes = std::fs::read(&wl).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x10;
    std::fs::write(&wl, &bytes).unwrap();
    let v = info(&wl);
    let crcs: Vec<bool> = v["segments_crc_ok"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_bool().unwrap())
        .collect();
    let n = crcs.len();
    assert!(n > 1);
    assert!(!crcs[n - 1], "{crcs:?}");
    assert!(crcs[..n - 1].iter().all(|&c| c), "{crcs:?}");
}
