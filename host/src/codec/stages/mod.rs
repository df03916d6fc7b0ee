//! The stages of the codec's pipeline, one module each, in pipeline
//! order. Each stage has one entry point per direction that takes the
//! [`Backend`](crate::backend::Backend) and dispatches on it: the CPU arm
//! runs the host implementation, the GPU arm (compiled with the `gpu`
//! feature) the device one where a shader exists and the host
//! implementation where none does yet (docs/codec.md, "Backends").
//!
//! The image stages (colour, DWT, quantization, codeblock formation, and
//! back) pass [`Resident`](crate::codec::planes::Resident) planes: on the
//! host, or in device buffers that the next stage's shader reads where the
//! last one wrote them (`device` is that driver). The codeblocks are
//! descriptors over those planes (`codeblocks::Formed`): the GPU coder
//! reads the index planes in place and the GPU decoder writes them where
//! dequantization reads them (`resident`). From the coded blocks on, the
//! stages pass host data (codewords, records).

pub(crate) mod codeblocks;
pub(crate) mod colour;
#[cfg(feature = "gpu")]
pub(crate) mod device;
pub(crate) mod dwt;
pub(crate) mod entropy;
pub(crate) mod entropy_decode;
pub(crate) mod pack;
pub(crate) mod quantize;
pub(crate) mod rate;
#[cfg(feature = "gpu")]
pub(crate) mod resident;
#[cfg(feature = "gpu")]
pub(crate) mod samples;
pub(crate) mod shifts;
