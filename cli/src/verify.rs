//! `wavelane verify`: checks `.wl` and `.wlv` files for archive audits
//! (structure, completeness, every CRC) without decoding the image; the
//! checks are `wavelane::verify`.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::batch::BatchFailed;
use super::CliResult;
use wavelane::verify::{verify_file, Kind};

/// Arguments of `wavelane verify`.
#[derive(Debug, Args)]
#[command(
    after_help = "Exit code 0 when every file is good, 3 when any is bad or unreadable.\n\
Example: wavelane verify archive/*.wl --json"
)]
pub struct VerifyArgs {
    /// The .wl, .wlv, volume and .wls files to check.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print a JSON array (one object per file) instead of one line per file.
    #[arg(long)]
    pub json: bool,
}

/// Runs `wavelane verify`.
pub fn run(args: VerifyArgs) -> CliResult {
    let mut bad = 0;
    let mut all = Vec::new();
    for path in &args.files {
        let start = Instant::now();
        let (ok, line, json) = match verify_file(path) {
            Ok(v) => {
                let seconds = start.elapsed().as_secs_f64();
                let kind = match v.kind {
                    Kind::Wl => "wl",
                    Kind::Wlv => "wlv",
                    Kind::Volume => "volume",
                    Kind::Sequence => "sequence",
                    Kind::Unknown => "unknown",
                };
                let line = if v.ok() {
                    format!("{}: ok ({kind}, {} bytes)", path.display(), v.bytes)
                } else {
                    format!(
                        "{}: BAD ({kind}): {}",
                        path.display(),
                        v.problems.join("; ")
                    )
                };
                let json = serde_json::json!({
                    "file": path, "ok": v.ok(), "seconds": seconds, "result": v,
                });
                (v.ok(), line, json)
            }
            Err(e) => (
                false,
                format!("{}: BAD: cannot read: {e}", path.display()),
                serde_json::json!({
                    "file": path, "ok": false, "error": format!("cannot read: {e}"),
                }),
            ),
        };
        if !ok {
            bad += 1;
        }
        if args.json {
            all.push(json);
        } else {
            println!("{line}");
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&all)?);
    }
    if bad > 0 {
        return Err(Box::new(BatchFailed {
            failed: bad,
            total: args.files.len(),
        }));
    }
    Ok(())
}
