//! The compiled compute shaders: one [`Shader`] constant per entry point
//! (each `shaders/<algorithm>/*.comp` file and each row of the variant table
//! `host/build/variants.rs`), generated at build time by `host/build.rs`
//! (glslc + spirv-val).

/// A compiled SPIR-V compute shader.
#[derive(Debug, Clone, Copy)]
pub struct Shader {
    /// The entry point's name: its file stem, or its row in the variant table.
    pub name: &'static str,
    /// SPIR-V bytes (little-endian words).
    pub spirv: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/shaders.rs"));
