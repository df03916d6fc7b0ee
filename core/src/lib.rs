//! # wavelane-core
//!
//! The algorithms of wavelane in plain, portable Rust: `#![no_std]`, no
//! allocator, no `unsafe`. Every function works in place on caller-provided
//! buffers, so the same code runs on a Cortex-M, on every core of a host CPU
//! (the `wavelane` crate drives it with rayon) and is mirrored line for line by
//! the Vulkan compute shaders in `shaders/`.
//!
//! Modules follow the codec stages:
//!
//! | module  | stage |
//! |---------|-------|
//! | [`bits`]  | MSB-first bit writer/reader and Exp-Golomb codes over byte slices |
//! | [`scan`]  | prefix sums (sequential and subgroup-lane model) used to pack variable-length outputs |
//! | [`dwt`]   | CDF 5/3 and 9/7 lifting wavelet transforms, 1-D/2-D/3-D, multi-level |
//! | [`bpc`]   | BPC-PaCo bitplane coder with its fixed-length-codeword arithmetic coder |
//! | [`cavlc`] | H.264 CAVLC residual block coding |
//! | [`vle`]   | canonical length-limited Huffman coding of byte streams |
//!
//! The equality promise: for the same input, these functions, the host CPU
//! backend and the GPU shaders produce the same bytes.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(test)]
extern crate std;

pub mod bits;
pub mod bpc;
pub mod cavlc;
pub mod dwt;
pub mod scan;
pub mod vle;
