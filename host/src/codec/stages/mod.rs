//! The stages of the codec's pipeline, one module each, in pipeline
//! order. Each stage has one entry point per direction that takes the
//! [`Backend`](crate::backend::Backend) and dispatches on it: the CPU arm
//! runs the host implementation, the GPU arm (compiled with the `gpu`
//! feature) the device one where a shader exists (the DWT both ways,
//! BPC-PaCo decoding, and BPC-PaCo encoding where rate control needs no
//! per-pass records) and the host implementation where none does yet
//! (docs/codec.md, "Backends").
//!
//! The stages pass plain host data between them (planes, coefficients,
//! codeblock batches, coded blocks). Keeping data on the device from one
//! stage to the next means giving those types a device-resident form and
//! filling in the GPU arms; `encode` and `decode`, which only call the
//! entry points in order, do not change.

pub(crate) mod codeblocks;
pub(crate) mod colour;
pub(crate) mod dwt;
pub(crate) mod entropy;
pub(crate) mod pack;
pub(crate) mod quantize;
pub(crate) mod rate;
