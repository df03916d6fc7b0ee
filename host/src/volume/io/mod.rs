//! Volume files: NIfTI-1 (`.nii`, `.nii.gz`), multi-page TIFF stacks
//! (`.tif`, `.tiff`) and raw samples (`--dims WxHxD --sample T`), chosen by
//! the file name's extension. Every reader checks sizes against a voxel
//! budget before it allocates (docs/volumes.md).

pub mod nifti;
pub mod raw;
pub mod tiff;

use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

use super::types::{SampleType, Volume, VolumeError};
use crate::output::AtomicFile;

/// Default voxel budget of the readers and the decoder: 2^28 voxels (1 GiB
/// of 32-bit samples), the image decoder's sample budget.
pub const DEFAULT_MAX_VOXELS: u64 = 1 << 28;

/// A volume file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VolumeFormat {
    /// NIfTI-1 single file.
    Nifti,
    /// NIfTI-1 single file, gzip-compressed.
    NiftiGz,
    /// Multi-page TIFF.
    Tiff,
    /// Raw samples, little-endian.
    Raw,
}

impl VolumeFormat {
    /// The format a file name's extension names: `.nii`, `.nii.gz`,
    /// `.tif`/`.tiff`, `.raw`; `None` for anything else.
    pub fn from_path(path: &Path) -> Option<VolumeFormat> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        if name.ends_with(".nii.gz") {
            Some(VolumeFormat::NiftiGz)
        } else if name.ends_with(".nii") {
            Some(VolumeFormat::Nifti)
        } else if name.ends_with(".tif") || name.ends_with(".tiff") {
            Some(VolumeFormat::Tiff)
        } else if name.ends_with(".raw") {
            Some(VolumeFormat::Raw)
        } else {
            None
        }
    }
}

/// How to read a raw file: its dimensions and sample type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawSpec {
    /// `[width, height, depth]`.
    pub dims: [usize; 3],
    /// The sample type.
    pub sample: SampleType,
}

/// Reads a volume: raw when `raw` is given, else by the extension.
pub fn load(path: &Path, raw: Option<RawSpec>, max_voxels: u64) -> Result<Volume, VolumeError> {
    let file = std::fs::File::open(path)?;
    let reader = BufReader::new(file);
    if let Some(spec) = raw {
        return raw::read(reader, spec.dims, spec.sample, max_voxels);
    }
    match VolumeFormat::from_path(path) {
        Some(VolumeFormat::Nifti) => nifti::read(reader, max_voxels),
        Some(VolumeFormat::NiftiGz) => {
            nifti::read(flate2::read::MultiGzDecoder::new(reader), max_voxels)
        }
        Some(VolumeFormat::Tiff) => tiff::read(reader, max_voxels),
        Some(VolumeFormat::Raw) => Err(VolumeError::Input(format!(
            "{}: a raw volume needs --dims WxHxD and --sample",
            path.display()
        ))),
        None => Err(VolumeError::Input(format!(
            "{}: not a volume file name (.nii, .nii.gz, .tif, .tiff, or .raw with --dims)",
            path.display()
        ))),
    }
}

/// Writes a volume in the format its extension names (`.raw`: the samples
/// only), atomically (`crate::output`).
pub fn save(path: &Path, v: &Volume) -> Result<(), VolumeError> {
    let format = VolumeFormat::from_path(path).ok_or_else(|| {
        VolumeError::Input(format!(
            "{}: not a volume file name (.nii, .nii.gz, .tif, .tiff, .raw)",
            path.display()
        ))
    })?;
    let bytes = write_bytes(v, format)?;
    let mut out = AtomicFile::create(path)?;
    {
        let mut w = BufWriter::new(&mut out);
        w.write_all(&bytes)?;
        w.flush()?;
    }
    out.commit()?;
    Ok(())
}

/// The bytes of `v` as a file of `format`.
pub fn write_bytes(v: &Volume, format: VolumeFormat) -> Result<Vec<u8>, VolumeError> {
    v.validate()?;
    let mut bytes = Vec::new();
    match format {
        VolumeFormat::Nifti => nifti::write(v, &mut bytes)?,
        VolumeFormat::NiftiGz => {
            let mut gz = flate2::write::GzEncoder::new(&mut bytes, flate2::Compression::default());
            nifti::write(v, &mut gz)?;
            gz.finish()?;
        }
        VolumeFormat::Tiff => tiff::write(v, std::io::Cursor::new(&mut bytes))?,
        VolumeFormat::Raw => bytes = raw::samples_to_bytes(&v.samples, v.sample),
    }
    Ok(bytes)
}

/// Reads a whole volume file from `bytes` by format (for the fuzz targets
/// and tests): NIfTI (inflated first when gzip-compressed) or TIFF.
pub fn read_bytes(
    bytes: &[u8],
    format: VolumeFormat,
    max_voxels: u64,
) -> Result<Volume, VolumeError> {
    match format {
        VolumeFormat::Nifti => nifti::read(bytes, max_voxels),
        VolumeFormat::NiftiGz => nifti::read(flate2::read::MultiGzDecoder::new(bytes), max_voxels),
        VolumeFormat::Tiff => tiff::read(std::io::Cursor::new(bytes), max_voxels),
        VolumeFormat::Raw => Err(VolumeError::Input("raw input needs its dimensions".into())),
    }
}
