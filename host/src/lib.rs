//! # wavelane
//!
//! The host side of wavelane: the algorithms of [`wavelane_core`] run on every
//! CPU core (rayon) or as Vulkan compute shaders (vulkano), plus image I/O,
//! the `.wl` file format, rate control, benchmarks and the `wavelane` CLI.
//!
//! Pick where work runs with [`backend::Backend::select`].

pub mod backend;
pub mod bpc;
pub mod cli;
pub mod codec;
pub mod dwt;
pub mod h264;
pub mod image_io;
pub mod shaders;
pub mod vle;
