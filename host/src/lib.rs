//! # wavelane
//!
//! The host side of wavelane: the algorithms of [`wavelane_core`] run on every
//! CPU core (rayon) or as Vulkan compute shaders (vulkano), plus image I/O,
//! the `.wl` file format, rate control and benchmarks. The `wavelane`
//! command-line tool is the separate `wavelane-cli` crate (`cli/`).
//!
//! Pick where work runs with [`backend::Backend::select`].

pub mod backend;
pub mod bpc;
pub mod codec;
pub mod dwt;
pub mod h264;
pub mod image_io;
pub mod output;
pub mod shaders;
pub mod verify;
pub mod vle;
