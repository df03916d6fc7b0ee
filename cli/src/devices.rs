//! `wavelane devices`: which Vulkan devices there are and which one is used;
//! its indices are the ones `--devices` takes (cli/src/batch/devices.rs).

use clap::Args;

use super::CliResult;
use wavelane::backend::gpu::{Gpu, DEVICE_ENV};

/// Arguments of `wavelane devices`.
#[derive(Debug, Args)]
pub struct DevicesArgs {
    /// Print JSON (the chosen device's full description) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Lists the devices, marks the one picked (see `WAVELANE_DEVICE`), and
/// describes it: subgroup size and operations, limits.
pub fn run(args: DevicesArgs) -> CliResult {
    let (devices, picked) = Gpu::list()?;
    let gpu = Gpu::new()?;
    if args.json {
        let value = serde_json::json!({
            "devices": devices.iter().map(|(i, name, ty)| serde_json::json!({
                "index": i, "name": name, "type": ty,
            })).collect::<Vec<_>>(),
            "selected": gpu.info(),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    for (i, name, ty) in &devices {
        let mark = if *i == picked { "*" } else { " " };
        println!("{mark} {i}: {name} ({ty})");
    }
    let info = gpu.info();
    println!();
    println!("selected: {} [{}]", info.name, info.driver);
    println!(
        "  Vulkan {}, subgroup size {}",
        info.api_version, info.subgroup_size
    );
    println!(
        "  subgroup operations: {}",
        info.subgroup_operations.join(", ")
    );
    println!(
        "  max storage buffer {} MiB, shared memory {} KiB, 64-bit atomics: {}",
        info.max_storage_buffer_range >> 20,
        info.max_shared_memory >> 10,
        info.int64_atomics
    );
    println!("(set {DEVICE_ENV}=<index|name substring> to choose another)");
    println!("(batches: encode/decode --devices all, or a list of these indices such as 0,1)");
    Ok(())
}
