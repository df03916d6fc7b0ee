//! `wavelane verify`: one line per file, `--json`, exit 0 when every file
//! is good and 3 when any is bad or unreadable; `.wl` and `.wlv` files.
//! Damaged files of every kind are in `faults_corruption.rs`.

mod common;

use common::faults::{encode_layered, ppm};
use common::{ok, s, wavelane, Scratch};

#[test]
fn good_files_pass_and_bad_ones_are_named() {
    let dir = Scratch::new("verify-cli", "mixed");
    let img = dir.file("a.ppm", &ppm(96, 64));
    let wl = dir.path("a.wl");
    encode_layered(&img, &wl);
    let wlv = dir.path("a.wlv");
    ok(&[
        "vle",
        "compress",
        s(&img),
        "-o",
        s(&wlv),
        "--backend",
        "cpu",
    ]);
    let text = ok(&["verify", s(&wl), s(&wlv)]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].ends_with(&format!(
        "a.wl: ok (wl, {} bytes)",
        std::fs::metadata(&wl).unwrap().len()
    )));
    assert!(lines[1].contains("a.wlv: ok (wlv,"), "{text}");

    let bytes = std::fs::read(&wl).unwrap();
    let cut = dir.file("cut.wl", &bytes[..bytes.len() - 3]);
    let missing = dir.path("missing.wl");
    let run = wavelane(&["verify", s(&wl), s(&cut), s(&img), s(&missing), "--json"]);
    assert_eq!(run.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let ok_of: Vec<bool> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["ok"].as_bool().unwrap())
        .collect();
    assert_eq!(ok_of, [true, false, false, false]);
    assert_eq!(v[1]["result"]["expected_bytes"], bytes.len() as u64);
    assert_eq!(v[1]["result"]["bytes"], bytes.len() as u64 - 3);
    assert_eq!(v[2]["result"]["kind"], "unknown");
    assert!(v[3]["error"].as_str().unwrap().contains("cannot read"));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("3 of 4 files failed"), "{err}");
}
