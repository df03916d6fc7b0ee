//! `wavelane devices` with a Vulkan device (lavapipe in the test set-up;
//! the no-driver error is in backend_selection.rs): the JSON and the text
//! list the same devices and mark the same one, the selected device is the
//! one the library opens, `WAVELANE_DEVICE` picks by name and rejects a name
//! that matches nothing, and the subgroup size follows the driver's setting.

mod common;

use std::process::Command;

use common::ok;
use serde_json::Value;
use wavelane::backend::Gpu;

fn devices_json(env: &[(&str, &str)]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_wavelane"))
        .args(["devices", "--json"])
        .envs(env.iter().copied())
        .output()
        .expect("run wavelane");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

#[test]
fn gpu_devices_text_and_json_agree_with_the_library() {
    let v = devices_json(&[]);
    let selected = &v["selected"];
    let list = v["devices"].as_array().unwrap();
    assert!(!list.is_empty());
    let picked = list
        .iter()
        .find(|d| d["index"] == selected["index"])
        .expect("the selected device is listed");
    assert_eq!(picked["name"], selected["name"]);
    assert_eq!(picked["type"], selected["device_type"]);
    let size = selected["subgroup_size"].as_u64().unwrap();
    assert!(
        size.is_power_of_two() && (4..=128).contains(&size),
        "{size}"
    );
    // The library in this process opens the same device.
    let gpu = Gpu::shared().expect("a Vulkan device for this test");
    let info = gpu.info();
    assert_eq!(selected["name"].as_str(), Some(info.name.as_str()));
    assert_eq!(size, info.subgroup_size as u64);
    // The text lists the same devices, the selected one marked.
    let text = ok(&["devices"]);
    for d in list {
        let mark = if d["index"] == selected["index"] {
            "*"
        } else {
            " "
        };
        let line = format!(
            "{mark} {}: {} ({})",
            d["index"],
            d["name"].as_str().unwrap(),
            d["type"].as_str().unwrap()
        );
        assert!(
            text.lines().any(|l| l == line),
            "no line {line:?} in:\n{text}"
        );
    }
    assert!(text.contains(&format!("subgroup size {size}")), "{text}");
}

#[test]
fn gpu_device_env_picks_by_name_and_rejects_unknown_names() {
    let v = devices_json(&[]);
    let name = v["selected"]["name"].as_str().unwrap().to_string();
    let part = &name[..name.len().min(6)];
    let by_name = devices_json(&[("WAVELANE_DEVICE", part)]);
    assert_eq!(by_name["selected"]["name"].as_str(), Some(name.as_str()));
    let out = Command::new(env!("CARGO_BIN_EXE_wavelane"))
        .arg("devices")
        .env("WAVELANE_DEVICE", "no-such-device-anywhere")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no-such-device-anywhere") && stderr.contains(&name),
        "{stderr}"
    );
}
