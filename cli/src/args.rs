//! The library's choices as clap value enums. The library derives no clap
//! traits (it is usable without the command line), so each enum a flag
//! takes is mirrored here, with the `--help` text of its values, and
//! converted with `From` where the command calls the library.

use clap::ValueEnum;
use wavelane::backend::BackendKind;
use wavelane::bench::bpc::BenchOp;
use wavelane::bpc::train::TrainWavelet;
use wavelane::h264::MbModes;
use wavelane::vle::sample::SampleKind;

/// `--backend`: where work runs ([`BackendKind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum BackendArg {
    #[value(help = "All CPU cores (rayon)")]
    Cpu,
    #[value(help = "A Vulkan compute device; an error if there is none")]
    Gpu,
    #[value(
        help = "A hardware GPU if one can be opened, else the CPU with a one-line notice \
                    (a software Vulkan device such as lavapipe only when chosen with \
                    `WAVELANE_DEVICE`). Commands that know the size of their job \
                    ([`Backend::select_for`]) take the CPU without opening a device when the \
                    job is too small for the GPU to finish first ([`auto`])"
    )]
    #[default]
    Auto,
}

impl From<BackendArg> for BackendKind {
    fn from(arg: BackendArg) -> Self {
        match arg {
            BackendArg::Cpu => BackendKind::Cpu,
            BackendArg::Gpu => BackendKind::Gpu,
            BackendArg::Auto => BackendKind::Auto,
        }
    }
}

/// `train-lut --wavelet` ([`TrainWavelet`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TrainWaveletArg {
    #[value(name = "53", help = "Reversible CDF 5/3 (the lossless codec path)")]
    Cdf53,
    #[value(name = "97", help = "Fixed-point CDF 9/7 (the lossy codec path)")]
    Fixed97,
}

impl From<TrainWaveletArg> for TrainWavelet {
    fn from(arg: TrainWaveletArg) -> Self {
        match arg {
            TrainWaveletArg::Cdf53 => TrainWavelet::Cdf53,
            TrainWaveletArg::Fixed97 => TrainWavelet::Fixed97,
        }
    }
}

/// `bench bpc --ops` ([`BenchOp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchOpArg {
    #[value(help = "Encoding (on a GPU: measure, scans, encode and pack dispatches)")]
    Encode,
    #[value(help = "Decoding the CPU encoder's stream, all codewords")]
    Decode,
}

impl From<BenchOpArg> for BenchOp {
    fn from(arg: BenchOpArg) -> Self {
        match arg {
            BenchOpArg::Encode => BenchOp::Encode,
            BenchOpArg::Decode => BenchOp::Decode,
        }
    }
}

/// `h264 --mb-modes` ([`MbModes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum MbModesArg {
    #[value(help = "Intra4x4 or Intra16x16, whichever costs less")]
    #[default]
    Auto,
    #[value(name = "i16", help = "Intra16x16 only")]
    Intra16x16,
    #[value(name = "i4", help = "Intra4x4 only")]
    Intra4x4,
}

impl From<MbModesArg> for MbModes {
    fn from(arg: MbModesArg) -> Self {
        match arg {
            MbModesArg::Auto => MbModes::Auto,
            MbModesArg::Intra16x16 => MbModes::Intra16x16,
            MbModesArg::Intra4x4 => MbModes::Intra4x4,
        }
    }
}

/// `bench vle --kind` ([`SampleKind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SampleKindArg {
    #[value(
        help = "Words drawn with Zipf-like frequencies, with punctuation and line breaks \
                    (about 4.3 bits per byte after Huffman coding)"
    )]
    Text,
    #[value(
        help = "Geometrically distributed bytes: a few very frequent values, a long tail \
                    of rare ones that get long codewords"
    )]
    Skewed,
    #[value(help = "Uniform random bytes (incompressible: 8-bit codes)")]
    Random,
}

impl From<SampleKindArg> for SampleKind {
    fn from(arg: SampleKindArg) -> Self {
        match arg {
            SampleKindArg::Text => SampleKind::Text,
            SampleKindArg::Skewed => SampleKind::Skewed,
            SampleKindArg::Random => SampleKind::Random,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names `--backend` accepts are the library's names, so that a
    /// value that parses here also parses with `BackendKind::from_str`.
    #[test]
    fn backend_names_match_the_library() {
        for arg in BackendArg::value_variants() {
            let name = arg.to_possible_value().unwrap().get_name().to_string();
            let kind: BackendKind = name.parse().unwrap();
            assert_eq!(kind, BackendKind::from(*arg), "{name}");
        }
    }
}
