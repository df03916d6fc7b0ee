//! The bodies of the `fuzz/` targets, as plain functions.
//!
//! Each cargo-fuzz target in `fuzz/fuzz_targets/<name>.rs` is one line that
//! calls the function of the same name here, and `tests/tests/fuzz_replay.rs`
//! replays every committed corpus file (`fuzz/corpus/<name>/*`) through the
//! very same function on stable Rust. A body panics on any violated
//! property: that is the finding libFuzzer reports.
//!
//! Every body accepts any byte string: structured parameters are read with
//! [`Input`], which returns zeros past the end, so no input is rejected.
//!
//! | target | what it checks |
//! |--------|----------------|
//! | `bpc_decode` | BPC-PaCo codeblock decode of arbitrary codewords, with and without truncation; sequential = lanes; no write outside the codeblock |
//! | `bpc_roundtrip` | coefficients → encode (sequential = lanes) → decode exact; truncated decodes; pass records vs decoder distortion |
//! | `bpc_lanes_diff` | sequential vs lane-parallel encode and decode at every subgroup size |
//! | `cavlc_decode` | CAVLC blocks from arbitrary bits; each decoded block re-encodes to the same bits |
//! | `cavlc_roundtrip` | coefficients → encode (writer = counter = word slot) → decode |
//! | `h264_parse` | H.264 stream parse of arbitrary bytes; accepted pictures are whole and every block re-encodes |
//! | `vle_decode` | `.wlv` parse (canonical) and decompress; CPU backend = core |
//! | `vle_roundtrip` | bytes → compress → decompress |
//! | `vle_lanes_diff` | core sequential encoder vs lane-parallel model (both scan memories) vs CPU backend |
//! | `dwt_roundtrip` | 2-D/3-D forward → inverse for every wavelet; core = CPU backend |
//! | `dwt_blocked_diff` | plain level vs the shaders' block-based form |
//! | `scan_lanes_diff` | sequential scan vs the subgroup-lane model vs CPU backend |
//! | `image_pnm` | PGM/PPM input (ASCII and binary, 1-16 bits) of arbitrary bytes: whole images with samples in range, PNM write + read unchanged |
//! | `gpu_diff` | CPU backend vs GPU backend: prefix scan, 2-D 5/3 and fixed-point 9/7 (and GPU inverse), VLE compress/decompress |
//! | `wl_container` | `.wl` header, index and segment parse of arbitrary bytes; header and index canonical |
//! | `wl_decode` | `.wl` image decode (whole, reduced, one layer) of arbitrary bytes; samples in range |
//! | `volume_container` | volume `.wl` parse (header and index canonical) and decode (whole, one slice, one layer) of arbitrary bytes; samples in range, a slice equals the whole decode's |
//! | `sequence_container` | `.wls` open (complete and partial) of arbitrary bytes; header canonical, records contiguous, frames decode in range, verify agrees with the reader |
//! | `nifti_read` | NIfTI-1 `.nii`/`.nii.gz` read of arbitrary bytes within a voxel budget; write + read unchanged |

pub mod bpc;
pub mod cavlc;
pub mod dwt;
pub mod gpu_diff;
pub mod h264;
pub mod image;
pub mod input;
pub mod scan;
pub mod sequence;
pub mod vle;
pub mod volume;
pub mod wl;

pub use input::{Input, SeedWriter};

/// One fuzz target: its name (the `fuzz/fuzz_targets/<name>.rs` file and
/// the `fuzz/corpus/<name>/` directory), its body and its seed inputs.
#[derive(Clone, Copy)]
pub struct Target {
    /// Target name.
    pub name: &'static str,
    /// The body: panics on a violated property.
    pub run: fn(&[u8]),
    /// Seed inputs written by our own encoders (`gen-corpus` example).
    pub seeds: fn() -> Vec<Vec<u8>>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Every target, in the order `scripts/fuzz.sh` runs them.
pub const TARGETS: &[Target] = &[
    Target {
        name: "bpc_decode",
        run: bpc::bpc_decode,
        seeds: bpc::seeds_decode,
    },
    Target {
        name: "bpc_roundtrip",
        run: bpc::bpc_roundtrip,
        seeds: bpc::seeds_roundtrip,
    },
    Target {
        name: "bpc_lanes_diff",
        run: bpc::bpc_lanes_diff,
        seeds: bpc::seeds_lanes_diff,
    },
    Target {
        name: "cavlc_decode",
        run: cavlc::cavlc_decode,
        seeds: cavlc::seeds_decode,
    },
    Target {
        name: "cavlc_roundtrip",
        run: cavlc::cavlc_roundtrip,
        seeds: cavlc::seeds_roundtrip,
    },
    Target {
        name: "h264_parse",
        run: h264::h264_parse,
        seeds: h264::seeds,
    },
    Target {
        name: "vle_decode",
        run: vle::vle_decode,
        seeds: vle::seeds_decode,
    },
    Target {
        name: "vle_roundtrip",
        run: vle::vle_roundtrip,
        seeds: vle::seeds_roundtrip,
    },
    Target {
        name: "vle_lanes_diff",
        run: vle::vle_lanes_diff,
        seeds: vle::seeds_roundtrip,
    },
    Target {
        name: "dwt_roundtrip",
        run: dwt::dwt_roundtrip,
        seeds: dwt::seeds_roundtrip,
    },
    Target {
        name: "dwt_blocked_diff",
        run: dwt::dwt_blocked_diff,
        seeds: dwt::seeds_blocked,
    },
    Target {
        name: "scan_lanes_diff",
        run: scan::scan_lanes_diff,
        seeds: scan::seeds,
    },
    Target {
        name: "wl_container",
        run: wl::wl_container,
        seeds: wl::seeds,
    },
    Target {
        name: "wl_decode",
        run: wl::wl_decode,
        seeds: wl::seeds,
    },
    Target {
        name: "image_pnm",
        run: image::image_pnm,
        seeds: image::seeds,
    },
    Target {
        name: "gpu_diff",
        run: gpu_diff::gpu_diff,
        seeds: gpu_diff::seeds,
    },
    Target {
        name: "volume_container",
        run: volume::volume_container,
        seeds: volume::seeds_container,
    },
    Target {
        name: "nifti_read",
        run: volume::nifti_read,
        seeds: volume::seeds_nifti,
    },
    Target {
        name: "sequence_container",
        run: sequence::sequence_container,
        seeds: sequence::seeds,
    },
];

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}
