//! The compiled compute shaders: one [`Shader`] constant per `shaders/*.comp`
//! file, generated at build time by `host/build.rs` (glslc + spirv-val).

/// A compiled SPIR-V compute shader.
#[derive(Debug, Clone, Copy)]
pub struct Shader {
    /// File stem of the GLSL source in `shaders/`.
    pub name: &'static str,
    /// SPIR-V bytes (little-endian words).
    pub spirv: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/shaders.rs"));
