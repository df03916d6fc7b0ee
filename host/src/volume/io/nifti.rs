//! NIfTI-1 single-file volumes (`.nii`, and `.nii.gz` through flate2): a
//! small reader and writer of the 348-byte header, written here rather
//! than taken from the `nifti` crate, which brings ndarray, nalgebra and
//! a second gzip stack for what is one fixed-layout header
//! (docs/volumes.md, "NIfTI").
//!
//! Reading validates every field it uses before allocating: the header
//! size (which also gives the byte order), the magic `n+1\0`, the
//! dimensions (3-D, or 4-D and up with every extra dimension 1), the data
//! type (u8, i8, u16, i16) and its `bitpix`, the data offset, and the
//! voxel count against a memory budget; the data is read through a
//! `take` of exactly the bytes needed, so a gzip bomb cannot make the
//! reader allocate or inflate more. Big-endian files are converted: the
//! kept header is little-endian, as the writer writes it.
//!
//! The whole header is kept on the [`Volume`] (`nifti_header`) and written
//! back with only the fields that describe the stored data changed
//! (dimensions, data type, `bitpix`, data offset): voxel size, orientation
//! (qform and sform), intensity scaling, units and description survive a
//! round trip. Header extensions are not kept.

use std::io::{Read, Write};

use crate::volume::types::{SampleType, Volume, VolumeError};

/// Bytes of a NIfTI-1 header.
pub const HEADER_LEN: usize = 348;
/// Where the data starts in the files this writer writes: the header and
/// the 4-byte extension flag (zero: no extensions).
const DATA_OFFSET: usize = 352;

/// Offsets of the 4-byte numeric fields (i32 or f32) of the header, for
/// byte-order conversion: sizeof_hdr, extents, intent_p1..3, pixdim[8],
/// vox_offset, scl_slope, scl_inter, cal_max, cal_min, slice_duration,
/// toffset, glmax, glmin, quatern_b..qoffset_z, srow_x/y/z.
const WORDS: &[usize] = &[
    0, 32, 56, 60, 64, 76, 80, 84, 88, 92, 96, 100, 104, 108, 112, 116, 124, 128, 132, 136, 140,
    144, 256, 260, 264, 268, 272, 276, 280, 284, 288, 292, 296, 300, 304, 308, 312, 316, 320, 324,
];
/// Offsets of the 2-byte fields: session_error, dim[8], intent_code,
/// datatype, bitpix, slice_start, slice_end, qform_code, sform_code.
const HALVES: &[usize] = &[
    36, 40, 42, 44, 46, 48, 50, 52, 54, 68, 70, 72, 74, 120, 252, 254,
];

fn bad(msg: impl Into<String>) -> VolumeError {
    VolumeError::Nifti(msg.into())
}

fn i16_at(h: &[u8], at: usize) -> i16 {
    i16::from_le_bytes([h[at], h[at + 1]])
}

fn f32_at(h: &[u8], at: usize) -> f32 {
    f32::from_le_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]])
}

/// The NIfTI data type code of a sample type.
pub const fn datatype_code(t: SampleType) -> i16 {
    match t {
        SampleType::U8 => 2,
        SampleType::I16 => 4,
        SampleType::I8 => 256,
        SampleType::U16 => 512,
    }
}

fn sample_type(code: i16) -> Option<SampleType> {
    match code {
        2 => Some(SampleType::U8),
        4 => Some(SampleType::I16),
        256 => Some(SampleType::I8),
        512 => Some(SampleType::U16),
        _ => None,
    }
}

/// The parsed fields of a header that locate and describe the data.
#[derive(Debug, Clone, PartialEq)]
pub struct NiftiInfo {
    /// Header bytes, converted to little-endian.
    pub header: Vec<u8>,
    /// `[x, y, z]` sizes.
    pub dims: [usize; 3],
    /// The sample type.
    pub sample: SampleType,
    /// Byte offset of the data in the file.
    pub data_offset: usize,
    /// The data was stored big-endian.
    pub big_endian: bool,
    /// Voxel size `[x, y, z]` (`pixdim[1..=3]`).
    pub voxel_size: [f32; 3],
}

/// Parses and validates a header (the first 348 bytes of a file), with at
/// most `max_voxels` voxels.
pub fn parse_header(bytes: &[u8], max_voxels: u64) -> Result<NiftiInfo, VolumeError> {
    if bytes.len() < HEADER_LEN {
        return Err(bad(format!(
            "{} bytes, shorter than the 348-byte header",
            bytes.len()
        )));
    }
    let mut h = bytes[..HEADER_LEN].to_vec();
    let size_le = i32::from_le_bytes([h[0], h[1], h[2], h[3]]);
    let size_be = i32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let big_endian = match (size_le, size_be) {
        (348, _) => false,
        (_, 348) => true,
        _ => {
            return Err(bad(format!(
                "sizeof_hdr is {size_le}, not 348 (not a NIfTI-1 file; NIfTI-2 is not supported)"
            )))
        }
    };
    if big_endian {
        for &at in WORDS {
            h[at..at + 4].reverse();
        }
        for &at in HALVES {
            h[at..at + 2].reverse();
        }
    }
    match &h[344..348] {
        b"n+1\0" => {}
        b"ni1\0" => {
            return Err(bad(
                "a header/image pair (.hdr/.img) is not supported; convert it to one .nii file",
            ))
        }
        m => return Err(bad(format!("magic {m:?} is not \"n+1\\0\""))),
    }
    let ndim = i16_at(&h, 40);
    if !(1..=7).contains(&ndim) {
        return Err(bad(format!("dim[0] = {ndim}, not 1..=7")));
    }
    let mut dims = [1usize; 3];
    for i in 1..=ndim as usize {
        let d = i16_at(&h, 40 + 2 * i);
        if d < 1 {
            return Err(bad(format!("dim[{i}] = {d}, not positive")));
        }
        if i <= 3 {
            dims[i - 1] = d as usize;
        } else if d != 1 {
            return Err(bad(format!(
                "dim[{i}] = {d}: only 3-D volumes are supported (4-D with one volume)"
            )));
        }
    }
    let code = i16_at(&h, 70);
    let sample = sample_type(code).ok_or_else(|| {
        bad(format!(
            "data type {code} is not supported (2 = u8, 4 = i16, 256 = i8, 512 = u16)"
        ))
    })?;
    let bitpix = i16_at(&h, 72);
    if bitpix != sample.bits() as i16 {
        return Err(bad(format!(
            "bitpix {bitpix} does not match data type {code} ({} bits)",
            sample.bits()
        )));
    }
    let offset = f32_at(&h, 108);
    if !(offset.is_finite() && offset >= DATA_OFFSET as f32 - 4.0 && offset <= (1u64 << 31) as f32)
        || offset.fract() != 0.0
    {
        return Err(bad(format!(
            "vox_offset {offset} is not a whole number in 348..=2^31"
        )));
    }
    let voxels = dims.iter().map(|&d| d as u64).product::<u64>();
    if voxels > max_voxels {
        return Err(bad(format!(
            "{}x{}x{} = {voxels} voxels exceed the memory budget of {max_voxels}",
            dims[0], dims[1], dims[2]
        )));
    }
    let voxel_size = [f32_at(&h, 80), f32_at(&h, 84), f32_at(&h, 88)];
    Ok(NiftiInfo {
        header: h,
        dims,
        sample,
        data_offset: offset as usize,
        big_endian,
        voxel_size,
    })
}

/// Reads a volume from a `.nii` byte stream (already inflated for
/// `.nii.gz`), with at most `max_voxels` voxels.
pub fn read(reader: impl Read, max_voxels: u64) -> Result<Volume, VolumeError> {
    let mut reader = reader;
    let mut head = vec![0u8; HEADER_LEN];
    read_all(&mut reader, &mut head, "header")?;
    let info = parse_header(&head, max_voxels)?;
    // Skip the extensions between the header and the data.
    let skip = (info.data_offset - HEADER_LEN) as u64;
    let skipped = std::io::copy(&mut (&mut reader).take(skip), &mut std::io::sink())?;
    if skipped != skip {
        return Err(bad(format!(
            "the file ends in the {skip} bytes before the data offset"
        )));
    }
    let [w, h, d] = info.dims;
    let n = w * h * d;
    let mut raw = vec![0u8; n * info.sample.bytes()];
    read_all(&mut reader, &mut raw, "data")?;
    let samples = super::raw::samples_from_bytes(&raw, info.sample, info.big_endian);
    Ok(Volume {
        width: w,
        height: h,
        depth: d,
        sample: info.sample,
        samples,
        nifti_header: Some(info.header),
    })
}

fn read_all(reader: &mut impl Read, buf: &mut [u8], what: &str) -> Result<(), VolumeError> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => {
                return Err(bad(format!(
                    "the file ends in the {what}: {got} of {} bytes",
                    buf.len()
                )))
            }
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(bad(format!("reading the {what}: {e}"))),
        }
    }
    Ok(())
}

/// A fresh header for a volume read from elsewhere: unit voxels, no
/// orientation (qform and sform codes 0), no scaling.
fn fresh_header() -> Vec<u8> {
    let mut h = vec![0u8; HEADER_LEN];
    h[0..4].copy_from_slice(&348i32.to_le_bytes());
    h[38] = b'r';
    for i in 0..4 {
        h[76 + 4 * i..80 + 4 * i].copy_from_slice(&1f32.to_le_bytes());
    }
    h[344..348].copy_from_slice(b"n+1\0");
    h
}

/// The header to write for `v`: its kept header (or a fresh one) with the
/// fields that describe the data set from `v`.
pub fn header_for(v: &Volume) -> Result<Vec<u8>, VolumeError> {
    let mut h = match &v.nifti_header {
        Some(h) if h.len() == HEADER_LEN => h.clone(),
        Some(h) => return Err(bad(format!("kept header of {} bytes, not 348", h.len()))),
        None => fresh_header(),
    };
    let dim = |n: usize| {
        i16::try_from(n)
            .map_err(|_| bad(format!("dimension {n} does not fit NIfTI-1's 16-bit dim")))
    };
    let mut put16 = |at: usize, v: i16| h[at..at + 2].copy_from_slice(&v.to_le_bytes());
    put16(40, 3);
    put16(42, dim(v.width)?);
    put16(44, dim(v.height)?);
    put16(46, dim(v.depth)?);
    for i in 4..8 {
        put16(40 + 2 * i, 1);
    }
    put16(70, datatype_code(v.sample));
    put16(72, v.sample.bits() as i16);
    h[0..4].copy_from_slice(&348i32.to_le_bytes());
    h[108..112].copy_from_slice(&(DATA_OFFSET as f32).to_le_bytes());
    h[344..348].copy_from_slice(b"n+1\0");
    Ok(h)
}

/// Scales the voxel size of a kept (little-endian) header by `factors`
/// along x, y, z: `pixdim[1..=3]` and the matching columns of the sform
/// matrix, as a reduced-resolution decode makes each voxel that much
/// larger. The origin is kept.
pub fn scale_voxel_size(h: &mut [u8], factors: [f32; 3]) {
    if h.len() != HEADER_LEN {
        return;
    }
    let mut scale = |at: usize, f: f32| {
        let v = f32::from_le_bytes(h[at..at + 4].try_into().expect("4 bytes"));
        h[at..at + 4].copy_from_slice(&(v * f).to_le_bytes());
    };
    for (a, &f) in factors.iter().enumerate() {
        scale(80 + 4 * a, f);
        for row in 0..3 {
            scale(280 + 16 * row + 4 * a, f);
        }
    }
}

/// Writes `v` as a `.nii` byte stream (little-endian, no extensions).
pub fn write(v: &Volume, mut out: impl Write) -> Result<(), VolumeError> {
    v.validate()?;
    out.write_all(&header_for(v)?)?;
    out.write_all(&[0u8; DATA_OFFSET - HEADER_LEN])?;
    out.write_all(&super::raw::samples_to_bytes(&v.samples, v.sample))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn volume(sample: SampleType) -> Volume {
        Volume::from_fn(5, 4, 3, sample, |x, y, z| {
            (x as i32 * 37 - y as i32 * 1001 + z as i32 * 7919) % 40000 - 20000
        })
    }

    #[test]
    fn round_trip_keeps_samples_and_header_fields() {
        for t in [
            SampleType::U8,
            SampleType::I8,
            SampleType::U16,
            SampleType::I16,
        ] {
            let mut v = volume(t);
            let mut h = fresh_header();
            h[80..84].copy_from_slice(&0.5f32.to_le_bytes()); // pixdim[1]
            h[112..116].copy_from_slice(&2.0f32.to_le_bytes()); // scl_slope
            h[254..256].copy_from_slice(&1i16.to_le_bytes()); // sform_code
            h[148..153].copy_from_slice(b"brain");
            v.nifti_header = Some(h);
            let mut bytes = Vec::new();
            write(&v, &mut bytes).unwrap();
            let back = read(&bytes[..], 1 << 20).unwrap();
            assert_eq!(back.samples, v.samples, "{t:?}");
            assert_eq!(back.sample, t);
            let kept = back.nifti_header.unwrap();
            assert_eq!(f32_at(&kept, 80), 0.5);
            assert_eq!(f32_at(&kept, 112), 2.0);
            assert_eq!(i16_at(&kept, 254), 1);
            assert_eq!(&kept[148..153], b"brain");
        }
    }

    #[test]
    fn big_endian_files_read_as_little_endian() {
        let v = volume(SampleType::I16);
        let mut le = Vec::new();
        write(&v, &mut le).unwrap();
        // The same file in big-endian byte order.
        let mut be = le.clone();
        for &at in WORDS {
            be[at..at + 4].reverse();
        }
        for &at in HALVES {
            be[at..at + 2].reverse();
        }
        for s in be[DATA_OFFSET..].chunks_exact_mut(2) {
            s.reverse();
        }
        let back = read(&be[..], 1 << 20).unwrap();
        assert_eq!(back.samples, v.samples);
        assert_eq!(back.nifti_header.as_deref(), Some(&le[..HEADER_LEN]));
    }

    #[test]
    fn hostile_headers_are_typed_errors() {
        let v = volume(SampleType::U16);
        let mut good = Vec::new();
        write(&v, &mut good).unwrap();
        let patch = |at: usize, bytes: &[u8]| {
            let mut b = good.clone();
            b[at..at + bytes.len()].copy_from_slice(bytes);
            b
        };
        let cases = [
            (patch(0, &347i32.to_le_bytes()), "sizeof_hdr"),
            (patch(344, b"ni1\0"), "pair"),
            (patch(344, b"xyz\0"), "magic"),
            (patch(40, &0i16.to_le_bytes()), "dim[0]"),
            (patch(44, &(-3i16).to_le_bytes()), "dim[2]"),
            (
                // A 4-D series of two volumes (dim[0] = 4, dim[4] = 2).
                patch(40, &[4, 0, 5, 0, 4, 0, 3, 0, 2, 0]),
                "dim[4]",
            ),
            (patch(70, &16i16.to_le_bytes()), "data type 16"),
            (patch(72, &8i16.to_le_bytes()), "bitpix"),
            (patch(108, &f32::NAN.to_le_bytes()), "vox_offset"),
            (patch(108, &100.0f32.to_le_bytes()), "vox_offset"),
            (patch(108, &1e6f32.to_le_bytes()), "ends"),
            (patch(42, &30000i16.to_le_bytes()), "ends in the data"),
            (good[..good.len() - 1].to_vec(), "ends in the data"),
            (good[..100].to_vec(), "ends in the header"),
        ];
        for (bytes, want) in cases {
            match read(&bytes[..], 1 << 20) {
                Err(VolumeError::Nifti(m)) => assert!(m.contains(want), "{want}: {m}"),
                other => panic!("{want}: {other:?}"),
            }
        }
        // The memory budget is checked before the data is read.
        let big = patch(42, &30000i16.to_le_bytes());
        match read(&big[..], 1000) {
            Err(VolumeError::Nifti(m)) => assert!(m.contains("memory budget"), "{m}"),
            other => panic!("{other:?}"),
        }
    }
}
