//! Builds the firmware for thumbv7em-none-eabihf and runs it under QEMU
//! (mps2-an386, semihosting on), once per test binary. Missing tools fail
//! the test with the command that installs them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long QEMU may run (the encode takes well under a second).
const QEMU_TIMEOUT: Duration = Duration::from_secs(120);
const TARGET: &str = "thumbv7em-none-eabihf";

/// What one run of the firmware left behind.
pub struct FirmwareRun {
    pub elf: PathBuf,
    pub lossless: Vec<u8>,
    pub lossy: Vec<u8>,
    /// Report lines: first word, then `key=value` pairs.
    pub report: Vec<(String, HashMap<String, String>)>,
    /// The report as written to report.txt.
    pub report_text: String,
    /// What the semihosting console printed (text, or defmt frames).
    pub console: Vec<u8>,
}

impl FirmwareRun {
    /// The value of `key` on the report line of `kind` (and `path=`, when given).
    pub fn value(&self, kind: &str, path: Option<&str>, key: &str) -> u64 {
        let line = self
            .report
            .iter()
            .find(|(k, kv)| {
                k == kind && path.is_none_or(|p| kv.get("path").map(String::as_str) == Some(p))
            })
            .unwrap_or_else(|| panic!("no report line {kind} {path:?} in:\n{}", self.report_text));
        line.1
            .get(key)
            .unwrap_or_else(|| panic!("report line {kind} has no {key}"))
            .parse()
            .unwrap_or_else(|e| panic!("report {kind} {key}: {e}"))
    }
}

fn firmware_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/firmware")
}

fn require_tools() {
    let qemu = Command::new("qemu-system-arm").arg("--version").output();
    match qemu {
        Ok(o) if o.status.success() => {}
        other => panic!(
            "the firmware test needs qemu-system-arm and could not run it ({other:?}); \
             install it (Debian: apt-get install qemu-system-arm; ./scripts/setup.sh does)"
        ),
    }
    let sysroot = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc --print sysroot");
    let sysroot = String::from_utf8_lossy(&sysroot.stdout).trim().to_string();
    let lib = Path::new(&sysroot).join("lib/rustlib").join(TARGET);
    assert!(
        lib.is_dir(),
        "the firmware test needs the {TARGET} standard library ({} is missing): \
         rustup target add {TARGET}",
        lib.display()
    );
}

/// `cargo build --release` of core/firmware with `features`, in its own
/// target directory `dir_name`; returns the ELF.
fn build(features: &str, dir_name: &str) -> PathBuf {
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(dir_name);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Run from the crate directory so its .cargo/config.toml (target, linker
    // script, runner) applies; host flags must not leak into a thumb build.
    let mut command = Command::new(cargo);
    command.args(["build", "--release"]);
    if !features.is_empty() {
        command.args(["--features", features]);
    }
    let status = command
        .current_dir(firmware_dir())
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .status()
        .expect("run cargo to build the firmware");
    assert!(
        status.success(),
        "building core/firmware for {TARGET} failed ({status})"
    );
    target_dir.join(TARGET).join("release/wavelane-firmware")
}

/// Boots `elf` on QEMU in `dir`; returns its console output.
fn run_qemu(elf: &Path, dir: &Path) -> Vec<u8> {
    let stdout = dir.join("console.txt");
    let stderr = dir.join("qemu-stderr.txt");
    let mut child = Command::new("qemu-system-arm")
        .args(["-machine", "mps2-an386", "-nographic"])
        .args(["-semihosting-config", "enable=on,target=native", "-kernel"])
        .arg(elf)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .expect("start qemu-system-arm");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for qemu") {
            break status;
        }
        if start.elapsed() > QEMU_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "QEMU ran past {QEMU_TIMEOUT:?}; console so far:\n{}",
                String::from_utf8_lossy(&std::fs::read(&stdout).unwrap_or_default())
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let console = std::fs::read(&stdout).unwrap_or_default();
    let errors = std::fs::read_to_string(&stderr).unwrap_or_default();
    assert!(
        status.success(),
        "the firmware failed under QEMU ({status}):\n{}\n{errors}",
        String::from_utf8_lossy(&console)
    );
    console
}

fn parse_report(text: &str) -> Vec<(String, HashMap<String, String>)> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let kind = words.next()?.to_string();
            let kv = words
                .filter_map(|w| w.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            Some((kind, kv))
        })
        .collect()
}

/// Builds the firmware with `features` and runs it in a fresh directory.
fn build_and_run(features: &str, label: &str) -> FirmwareRun {
    require_tools();
    let elf = build(features, &format!("firmware-target{label}"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("firmware-run{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let console = run_qemu(&elf, &dir);
    let read = |name: &str| {
        std::fs::read(dir.join(name)).unwrap_or_else(|e| {
            panic!(
                "the firmware wrote no {name}: {e}\n{}",
                String::from_utf8_lossy(&console)
            )
        })
    };
    let report_text = String::from_utf8(read("report.txt")).expect("report.txt is text");
    assert_eq!(
        report_text.lines().last(),
        Some("done"),
        "report incomplete:\n{report_text}"
    );
    let run = FirmwareRun {
        elf,
        lossless: read("lossless.wlfw"),
        lossy: read("lossy.wlfw"),
        report: parse_report(&report_text),
        report_text,
        console,
    };
    let _ = std::fs::remove_dir_all(&dir);
    run
}

/// The default firmware (semihosting text console), built and run once per
/// test binary.
pub fn firmware_run() -> &'static FirmwareRun {
    static RUN: std::sync::OnceLock<FirmwareRun> = std::sync::OnceLock::new();
    RUN.get_or_init(|| build_and_run("", ""))
}

/// The firmware with the `defmt` feature (its console carries defmt frames).
pub fn firmware_run_defmt() -> FirmwareRun {
    build_and_run("defmt", "-defmt")
}
