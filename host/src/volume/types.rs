//! What the volume codec takes and gives: [`Volume`] (samples of one
//! component on a `width x height x depth` grid, 8 or 16 bits, signed or
//! unsigned) with the metadata a round trip keeps, and [`VolumeError`].

use crate::bpc::BpcError;
use crate::codec::FormatError;
use crate::dwt::DwtHostError;

/// The sample type of a volume file: what NIfTI calls the data type and
/// raw input names with `--sample`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SampleType {
    /// Unsigned 8-bit.
    U8,
    /// Signed 8-bit.
    I8,
    /// Unsigned 16-bit.
    U16,
    /// Signed 16-bit (CT in Hounsfield units).
    I16,
}

impl SampleType {
    /// Bits per sample.
    pub const fn bits(self) -> u8 {
        match self {
            SampleType::U8 | SampleType::I8 => 8,
            SampleType::U16 | SampleType::I16 => 16,
        }
    }

    /// Bytes per sample.
    pub const fn bytes(self) -> usize {
        self.bits() as usize / 8
    }

    /// Whether samples are two's-complement signed.
    pub const fn signed(self) -> bool {
        matches!(self, SampleType::I8 | SampleType::I16)
    }

    /// The type of `bits` (8 or 16) and `signed`.
    pub const fn from_parts(bits: u8, signed: bool) -> Option<SampleType> {
        match (bits, signed) {
            (8, false) => Some(SampleType::U8),
            (8, true) => Some(SampleType::I8),
            (16, false) => Some(SampleType::U16),
            (16, true) => Some(SampleType::I16),
            _ => None,
        }
    }

    /// Lower-case name (`u8`, `i16`, ...), as `--sample` takes it.
    pub const fn name(self) -> &'static str {
        match self {
            SampleType::U8 => "u8",
            SampleType::I8 => "i8",
            SampleType::U16 => "u16",
            SampleType::I16 => "i16",
        }
    }

    /// Smallest and largest sample.
    pub const fn range(self) -> (i32, i32) {
        match self {
            SampleType::U8 => (0, 255),
            SampleType::I8 => (-128, 127),
            SampleType::U16 => (0, 65535),
            SampleType::I16 => (-32768, 32767),
        }
    }
}

impl std::str::FromStr for SampleType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "u8" => Ok(SampleType::U8),
            "i8" => Ok(SampleType::I8),
            "u16" => Ok(SampleType::U16),
            "i16" => Ok(SampleType::I16),
            _ => Err(format!("unknown sample type {s:?} (u8, i8, u16 or i16)")),
        }
    }
}

/// A volume: sample `(x, y, z)` at `samples[(z * height + y) * width + x]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volume {
    /// Samples per row (x).
    pub width: usize,
    /// Rows per slice (y).
    pub height: usize,
    /// Slices (z).
    pub depth: usize,
    /// The sample type; every sample lies in its [`SampleType::range`].
    pub sample: SampleType,
    /// The samples, x fastest, then y, then z.
    pub samples: Vec<i32>,
    /// The 348-byte NIfTI-1 header the volume was read with (little-endian,
    /// as [`super::io::nifti`] normalises it), kept so that a round trip
    /// keeps voxel size, orientation, scaling and description; `None` for
    /// raw and TIFF input.
    pub nifti_header: Option<Vec<u8>>,
}

impl Volume {
    /// A volume with `f(x, y, z)` as samples (clamped to the type's range).
    pub fn from_fn(
        width: usize,
        height: usize,
        depth: usize,
        sample: SampleType,
        mut f: impl FnMut(usize, usize, usize) -> i32,
    ) -> Volume {
        let (lo, hi) = sample.range();
        let mut samples = Vec::with_capacity(width * height * depth);
        for z in 0..depth {
            for y in 0..height {
                for x in 0..width {
                    samples.push(f(x, y, z).clamp(lo, hi));
                }
            }
        }
        Volume {
            width,
            height,
            depth,
            sample,
            samples,
            nifti_header: None,
        }
    }

    /// Number of voxels.
    pub fn voxels(&self) -> usize {
        self.width * self.height * self.depth
    }

    /// Slice `z` (row-major `width x height`).
    pub fn slice(&self, z: usize) -> &[i32] {
        let n = self.width * self.height;
        &self.samples[z * n..(z + 1) * n]
    }

    /// Checks the dimensions against the sample count and every sample
    /// against the type's range.
    pub fn validate(&self) -> Result<(), VolumeError> {
        if self.width == 0 || self.height == 0 || self.depth == 0 {
            return Err(VolumeError::Input(format!(
                "empty volume {}x{}x{}",
                self.width, self.height, self.depth
            )));
        }
        let n = (self.width as u128) * (self.height as u128) * (self.depth as u128);
        if n != self.samples.len() as u128 {
            return Err(VolumeError::Input(format!(
                "{}x{}x{} needs {n} samples, got {}",
                self.width,
                self.height,
                self.depth,
                self.samples.len()
            )));
        }
        let (lo, hi) = self.sample.range();
        if let Some(v) = self.samples.iter().find(|&&v| v < lo || v > hi) {
            return Err(VolumeError::Input(format!(
                "sample {v} outside the range of {}",
                self.sample.name()
            )));
        }
        Ok(())
    }
}

/// Errors of volume input, output, encoding and decoding.
#[derive(Debug, thiserror::Error)]
pub enum VolumeError {
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// An input volume (file or samples) that cannot be read or coded.
    #[error("invalid volume: {0}")]
    Input(String),
    /// A NIfTI header or data that is malformed, unsupported or over the
    /// memory budget.
    #[error("NIfTI: {0}")]
    Nifti(String),
    /// A TIFF stack that is malformed or unsupported.
    #[error("TIFF: {0}")]
    Tiff(String),
    /// Options that contradict each other or the volume.
    #[error("invalid options: {0}")]
    Options(String),
    /// The volume file is malformed.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The wavelet transform failed.
    #[error(transparent)]
    Dwt(#[from] DwtHostError),
    /// The bitplane coder failed (for a decoder: the data is corrupt).
    #[error(transparent)]
    Bpc(#[from] BpcError),
}
