//! The shader variants: entry points that differ from a body in `shaders/`
//! only by a few `#define`s. `host/build.rs` writes each one's entry point
//! (`#version`, the extensions, the defines, `#include` of the body) into
//! `OUT_DIR` and compiles it like a `shaders/**/*.comp` file, so that a
//! variant is one row here instead of a six-line file. The constant in
//! `wavelane::shaders` is the upper-cased name (`dwt53_fwd` is
//! `shaders::DWT53_FWD`).
//!
//! The defines each body reads are documented at its top: `dwt/lift.glsl`
//! (WAVELET), `dwt/block.glsl` and `dwt/z.glsl` (INVERSE), `bpc/bpc.glsl`
//! (BPC_MAX_ROWS, BPC_TWO_PASS), `bpc/encode.glsl` (BPC_RECORDS, BPC_COUNTS),
//! `bpc/pack.glsl` (BPC_PACK_CUTS), `vle/encode.glsl` (VLE_SCAN_64, VLE_PAIRS).

/// One generated entry point.
pub struct Variant {
    /// Shader name: the constant's stem, and `Shader::name`.
    pub name: &'static str,
    /// The body, relative to `shaders/`.
    pub body: &'static str,
    /// `#extension ... : require` lines beyond the include directive.
    pub extensions: &'static [&'static str],
    /// `#define NAME VALUE`, in this order, before the body.
    pub defines: &'static [(&'static str, &'static str)],
    /// What the variant is for (the constant's rustdoc).
    pub doc: &'static str,
}

impl Variant {
    /// The entry point: what the variant's six-line `.comp` file would hold.
    /// Also compiled by `scripts/spirv-identical.sh`.
    pub fn source(&self) -> String {
        let mut s =
            String::from("#version 450\n#extension GL_GOOGLE_include_directive : require\n");
        for ext in self.extensions {
            s += &format!("#extension {ext} : require\n");
        }
        for (name, value) in self.defines {
            s += &format!("#define {name} {value}\n");
        }
        s + &format!("#include \"{}\"\n", self.body)
    }
}

const DWT_BLOCK: &str = "dwt/block.glsl";
const DWT_Z: &str = "dwt/z.glsl";
const BPC_DECODE: &str = "bpc/decode.glsl";
const BPC_ENCODE: &str = "bpc/encode.glsl";
const BPC_ENCODE_PLANES: &str = "bpc/encode_planes.glsl";
const VLE_ENCODE: &str = "vle/encode.glsl";
const BPC_PACK: &str = "bpc/pack.glsl";
/// 64-bit integers and 32-bit subgroup sums for the encoder's rate-control
/// records (`bpc/records.glsl`).
const RECORDS: &[&str] = &[
    "GL_EXT_shader_explicit_arithmetic_types_int64",
    "GL_KHR_shader_subgroup_arithmetic",
];
const CODEC_COLOUR_INVERSE: &str = "codec/colour_inverse.glsl";
/// 64-bit buffer atomics for the VLE inter-block scan.
const INT64: &[&str] = &[
    "GL_EXT_shader_explicit_arithmetic_types_int64",
    "GL_EXT_shader_atomic_int64",
];

/// `WAVELET` codes: 53 (CDF 5/3, integer), 97 (CDF 9/7, float), 971 (CDF 9/7, fixed point).
macro_rules! dwt {
    ($name:literal, $body:expr, $wavelet:literal, $inverse:literal, $doc:literal) => {
        Variant {
            name: $name,
            body: $body,
            extensions: &[],
            defines: &[("WAVELET", $wavelet), ("INVERSE", $inverse)],
            doc: $doc,
        }
    };
}

/// The table (one row a line where it fits, hence no rustfmt).
#[rustfmt::skip]
pub const VARIANTS: &[Variant] = &[
    dwt!("dwt53_fwd", DWT_BLOCK, "53", "0", "2-D DWT level, CDF 5/3 forward."),
    dwt!("dwt53_inv", DWT_BLOCK, "53", "1", "2-D DWT level, CDF 5/3 inverse."),
    dwt!("dwt53_zfwd", DWT_Z, "53", "0", "Z pass of a 3-D DWT level, CDF 5/3 forward."),
    dwt!("dwt53_zinv", DWT_Z, "53", "1", "Z pass of a 3-D DWT level, CDF 5/3 inverse."),
    dwt!("dwt97_fwd", DWT_BLOCK, "97", "0", "2-D DWT level, CDF 9/7 (float) forward."),
    dwt!("dwt97_inv", DWT_BLOCK, "97", "1", "2-D DWT level, CDF 9/7 (float) inverse."),
    dwt!("dwt97_zfwd", DWT_Z, "97", "0", "Z pass of a 3-D DWT level, CDF 9/7 (float) forward."),
    dwt!("dwt97_zinv", DWT_Z, "97", "1", "Z pass of a 3-D DWT level, CDF 9/7 (float) inverse."),
    dwt!("dwt97i_fwd", DWT_BLOCK, "971", "0", "2-D DWT level, fixed-point CDF 9/7 forward."),
    dwt!("dwt97i_inv", DWT_BLOCK, "971", "1", "2-D DWT level, fixed-point CDF 9/7 inverse."),
    dwt!("dwt97i_zfwd", DWT_Z, "971", "0", "Z pass of a 3-D DWT level, fixed-point CDF 9/7 forward."),
    dwt!("dwt97i_zinv", DWT_Z, "971", "1", "Z pass of a 3-D DWT level, fixed-point CDF 9/7 inverse."),
    Variant {
        name: "bpc_decode",
        body: BPC_DECODE,
        extensions: &[],
        defines: &[("BPC_MAX_ROWS", "256u")],
        doc: "BPC-PaCo decoder for codeblocks up to 256 rows (8 KiB of state maps per workgroup).",
    },
    Variant {
        name: "bpc_decode64",
        body: BPC_DECODE,
        extensions: &[],
        defines: &[("BPC_MAX_ROWS", "64u")],
        doc: "BPC-PaCo decoder for codeblocks up to 64 rows: a quarter of the shared memory, so \
              an SM holds more teams; the host picks it when every codeblock of a batch fits.",
    },
    Variant {
        name: "bpc_decode64_2pass",
        body: BPC_DECODE,
        extensions: &[],
        defines: &[("BPC_MAX_ROWS", "64u"), ("BPC_TWO_PASS", "1")],
        doc: "BPC-PaCo decoder for codeblocks up to 64 rows coded in 2 passes per bitplane (the \
              host picks it for 2-pass tables): no pending map and no cleanup pass.",
    },
    Variant {
        name: "bpc_encode",
        body: BPC_ENCODE,
        extensions: &[],
        defines: &[("BPC_MAX_ROWS", "256u")],
        doc: "BPC-PaCo encoder for codeblocks up to 256 rows (8 KiB of state maps per workgroup).",
    },
    Variant {
        name: "bpc_encode64",
        body: BPC_ENCODE,
        extensions: &[],
        defines: &[("BPC_MAX_ROWS", "64u")],
        doc: "BPC-PaCo encoder for codeblocks up to 64 rows: a quarter of the shared memory, so \
              an SM holds more teams; the host picks it when every codeblock of a batch fits.",
    },
    Variant {
        name: "bpc_encode64_2pass",
        body: BPC_ENCODE_PLANES,
        extensions: &[],
        defines: &[("BPC_MAX_ROWS", "64u"), ("BPC_TWO_PASS", "1")],
        doc: "BPC-PaCo encoder for codeblocks up to 64 rows coded in 2 passes per bitplane (the \
              host picks it for 2-pass tables): the plane-map body, which rebuilds two maps per \
              bitplane from the magnitudes instead of keeping state maps.",
    },
    Variant {
        name: "bpc_encode_records",
        body: BPC_ENCODE,
        extensions: RECORDS,
        defines: &[("BPC_MAX_ROWS", "256u"), ("BPC_RECORDS", "1")],
        doc: "BPC-PaCo encoder for codeblocks up to 256 rows, either mode, that also writes the \
              rate-control records: every pass's record and the distortion decrease at every \
              codeword cut, equal to the CPU driver's (host `bpc::gpu_records`). Same codewords \
              as `bpc_encode`.",
    },
    Variant {
        name: "bpc_count",
        body: BPC_ENCODE,
        extensions: &["GL_KHR_shader_subgroup_arithmetic"],
        defines: &[("BPC_MAX_ROWS", "256u"), ("BPC_COUNTS", "1")],
        doc: "The BPC-PaCo encoder's walk for codeblocks up to 256 rows, either mode, counting \
              every symbol of a selection of passes per codeblock into its (group, bitplane, \
              table entry) cell instead of coding it: the table fit's statistics, equal to the \
              host `bpc::train::Trainer`'s (host `bpc::gpu::counts`). Binds no tables and no \
              codeword buffers.",
    },
    Variant {
        name: "bpc_pack",
        body: BPC_PACK,
        extensions: &[],
        defines: &[],
        doc: "BPC-PaCo encoder's last dispatch: packs every codeblock's codewords from its \
              scratch region into one stream.",
    },
    Variant {
        name: "bpc_pack_cuts",
        body: BPC_PACK,
        extensions: &[],
        defines: &[("BPC_PACK_CUTS", "1")],
        doc: "`bpc_pack` for the cut decreases of `bpc_encode_records` (one int64 per codeword \
              slot): the same regions into the same positions as the codewords.",
    },
    Variant {
        name: "vle_encode",
        body: VLE_ENCODE,
        extensions: INT64,
        defines: &[("VLE_SCAN_64", "1")],
        doc: "GVLE encoder with the inter-block scan on 64-bit atomics (devices with shaderInt64 \
              and shaderBufferInt64Atomics).",
    },
    Variant {
        name: "vle_encode32",
        body: VLE_ENCODE,
        extensions: &[],
        defines: &[],
        doc: "GVLE encoder with the 32-bit-atomic fallback of the inter-block scan, for devices \
              without 64-bit buffer atomics. Same output as `vle_encode`.",
    },
    Variant {
        name: "vle_encode_pairs",
        body: VLE_ENCODE,
        extensions: INT64,
        defines: &[("VLE_SCAN_64", "1"), ("VLE_PAIRS", "1")],
        doc: "GVLE encoder with the inter-block scan on 64-bit atomics, packing two codewords per \
              accumulator step; the host uses it when no codeword is longer than 16 bits (a pair \
              then fits the 32 bits one step shifts in).",
    },
    Variant {
        name: "colour_inverse",
        body: CODEC_COLOUR_INVERSE,
        extensions: &[],
        defines: &[("GAIN", "0")],
        doc: "The decoder's inverse colour transform, level shift, clamp and packing to 8/16-bit \
              samples on the device.",
    },
    Variant {
        name: "colour_inverse_gain",
        body: CODEC_COLOUR_INVERSE,
        extensions: &[],
        defines: &[("GAIN", "1")],
        doc: "`colour_inverse` with the reduced fixed-point 9/7's f64 LL gain step first (devices \
              with shaderFloat64).",
    },
];
