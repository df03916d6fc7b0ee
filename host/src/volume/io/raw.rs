//! Raw volumes: samples only, x fastest, then y, then z, little-endian,
//! with the dimensions and sample type given on the command line
//! (`--dims WxHxD --sample u8|i8|u16|i16`).

use std::io::Read;

use crate::volume::types::{SampleType, Volume, VolumeError};

/// Samples of `bytes` (a whole number of samples of type `t`).
pub fn samples_from_bytes(bytes: &[u8], t: SampleType, big_endian: bool) -> Vec<i32> {
    match t {
        SampleType::U8 => bytes.iter().map(|&b| b as i32).collect(),
        SampleType::I8 => bytes.iter().map(|&b| b as i8 as i32).collect(),
        SampleType::U16 | SampleType::I16 => bytes
            .chunks_exact(2)
            .map(|p| {
                let v = if big_endian {
                    u16::from_be_bytes([p[0], p[1]])
                } else {
                    u16::from_le_bytes([p[0], p[1]])
                };
                match t {
                    SampleType::I16 => v as i16 as i32,
                    _ => v as i32,
                }
            })
            .collect(),
    }
}

/// Little-endian bytes of `samples` (each within the range of `t`).
pub fn samples_to_bytes(samples: &[i32], t: SampleType) -> Vec<u8> {
    match t {
        SampleType::U8 | SampleType::I8 => samples.iter().map(|&v| v as u8).collect(),
        SampleType::U16 | SampleType::I16 => samples
            .iter()
            .flat_map(|&v| (v as u16).to_le_bytes())
            .collect(),
    }
}

/// Parses `WxHxD` (each at least 1).
pub fn parse_dims(s: &str) -> Result<[usize; 3], String> {
    let parts: Vec<&str> = s.split(['x', 'X']).collect();
    let bad = || format!("--dims {s:?}: expected WxHxD, three positive integers");
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut dims = [0usize; 3];
    for (d, p) in dims.iter_mut().zip(&parts) {
        *d = p.trim().parse().map_err(|_| bad())?;
        if *d == 0 {
            return Err(bad());
        }
    }
    Ok(dims)
}

/// Reads a raw volume of `dims` and type `t`; the input must hold exactly
/// that many samples (checked against the byte count before anything is
/// allocated, and against `max_voxels`).
pub fn read(
    reader: impl Read,
    dims: [usize; 3],
    t: SampleType,
    max_voxels: u64,
) -> Result<Volume, VolumeError> {
    let voxels = dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d as u64));
    let voxels = match voxels {
        Some(v) if v <= max_voxels => v as usize,
        _ => {
            return Err(VolumeError::Input(format!(
                "{}x{}x{} voxels exceed the memory budget of {max_voxels}",
                dims[0], dims[1], dims[2]
            )))
        }
    };
    let want = voxels * t.bytes();
    let mut bytes = Vec::with_capacity(want);
    reader.take(want as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() != want {
        let have = match bytes.len() > want {
            true => "more".to_string(),
            false => bytes.len().to_string(),
        };
        return Err(VolumeError::Input(format!(
            "a raw {}x{}x{} {} volume is {want} bytes; the input has {have}",
            dims[0],
            dims[1],
            dims[2],
            t.name(),
        )));
    }
    Ok(Volume {
        width: dims[0],
        height: dims[1],
        depth: dims[2],
        sample: t,
        samples: samples_from_bytes(&bytes, t, false),
        nifti_header: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_round_trip_and_size_checks() {
        for t in [
            SampleType::U8,
            SampleType::I8,
            SampleType::U16,
            SampleType::I16,
        ] {
            let (lo, hi) = t.range();
            let v = Volume::from_fn(3, 2, 2, t, |x, y, z| {
                [lo, hi, 0, 1, -1, lo + 1][(x + y + z) % 6]
            });
            let bytes = samples_to_bytes(&v.samples, t);
            assert_eq!(read(&bytes[..], [3, 2, 2], t, 100).unwrap(), v);
            assert!(read(&bytes[1..], [3, 2, 2], t, 100).is_err());
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(read(&longer[..], [3, 2, 2], t, 100).is_err());
            assert!(read(&bytes[..], [3, 2, 2], t, 11).is_err());
        }
        assert_eq!(parse_dims("4x5X6"), Ok([4, 5, 6]));
        for bad in ["4x5", "4x0x6", "ax5x6", "4x5x6x7", ""] {
            assert!(parse_dims(bad).is_err(), "{bad}");
        }
    }
}
