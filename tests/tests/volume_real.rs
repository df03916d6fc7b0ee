//! Real MRI volumes (the NIfTI files nibabel ships, installed into .venv/
//! by scripts/setup.sh --test) and a synthetic worst case through the
//! volume codec: lossless round trips are exact, lossy files meet their
//! budget, the NIfTI header survives. A missing volume fails the test,
//! naming the set-up step.

use std::path::PathBuf;

use wavelane::backend::Backend;
use wavelane::volume::io::{self, nifti};
use wavelane::volume::{self, SampleType, Volume, VolumeDecodeOptions, VolumeOptions};

/// nibabel's test data directory in the project venv.
fn nibabel_data() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let lib = root.join(".venv/lib");
    let found = std::fs::read_dir(&lib).ok().and_then(|dirs| {
        dirs.filter_map(|d| d.ok())
            .map(|d| d.path().join("site-packages/nibabel/tests/data"))
            .find(|p| p.join("anatomical.nii").is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "the real test volumes are missing: no nibabel/tests/data under {}; \
             run scripts/setup.sh --test",
            lib.display()
        )
    })
}

/// The real volumes: anatomical.nii (a 33x41x25 T1 image, big-endian i16)
/// and the first of the two 128x96x24 fMRI volumes of example4d.nii.gz
/// (cut from the 4-D series here; the reader takes 3-D volumes).
pub fn real_volumes() -> Vec<(&'static str, Volume)> {
    let dir = nibabel_data();
    let anat = io::load(&dir.join("anatomical.nii"), None, 1 << 24).expect("anatomical.nii reads");
    let mut gz = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(
            std::fs::File::open(dir.join("example4d.nii.gz")).unwrap(),
        ),
        &mut gz,
    )
    .unwrap();
    let info = nifti::parse_header(&gz, u64::MAX).err();
    assert!(
        info.is_some(),
        "example4d is 4-D: the reader must refuse it whole"
    );
    // dim[0] = 3, dim[4] = 1, and the data of the first volume only.
    gz[40..42].copy_from_slice(&3i16.to_le_bytes());
    gz[48..50].copy_from_slice(&1i16.to_le_bytes());
    let offset = f32::from_le_bytes(gz[108..112].try_into().unwrap()) as usize;
    gz.truncate(offset + 128 * 96 * 24 * 2);
    let fmri = nifti::read(&gz[..], 1 << 24).expect("example4d volume 0 reads");
    assert_eq!((fmri.width, fmri.height, fmri.depth), (128, 96, 24));
    assert_eq!((anat.width, anat.height, anat.depth), (33, 41, 25));
    vec![("anatomical", anat), ("example4d-0", fmri)]
}

#[test]
fn real_mri_volumes_round_trip_losslessly_and_meet_lossy_budgets() {
    for (name, v) in real_volumes() {
        assert_eq!(v.sample, SampleType::I16);
        let enc = volume::encode_volume(&v, &VolumeOptions::lossless(), &Backend::Cpu).unwrap();
        let dec = volume::decode_volume(&enc.bytes, &VolumeDecodeOptions::default(), &Backend::Cpu)
            .unwrap();
        assert_eq!(dec.volume, v, "{name}: lossless");
        // Compresses: well under the 16 bits per voxel of the samples (the
        // 33x41x25 T1 scan measures 12.8, its container overhead included).
        assert!(
            enc.report.bits_per_voxel < 13.5,
            "{name}: {}",
            enc.report.bits_per_voxel
        );
        for bpp in [0.5, 1.0] {
            let enc = volume::encode_volume(&v, &VolumeOptions::bpp(bpp), &Backend::Cpu).unwrap();
            assert!(
                enc.bytes.len() as f64 <= bpp * v.voxels() as f64 / 8.0,
                "{name} {bpp}"
            );
            let dec =
                volume::decode_volume(&enc.bytes, &VolumeDecodeOptions::default(), &Backend::Cpu)
                    .unwrap();
            assert_eq!(dec.volume.nifti_header, v.nifti_header);
        }
    }
}

/// The synthetic worst case: full-range i16 noise (nothing to predict, the
/// largest coefficients the transform can make) and the two extremes
/// alternating voxel by voxel, lossless and at a rate.
#[test]
fn worst_case_volumes_round_trip() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let noise = Volume::from_fn(70, 33, 19, SampleType::I16, |_, _, _| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 48) as u16 as i16 as i32
    });
    let checker = Volume::from_fn(65, 9, 17, SampleType::I16, |x, y, z| {
        if (x + y + z) % 2 == 0 {
            -32768
        } else {
            32767
        }
    });
    for v in [noise, checker] {
        for levels in [None, Some([1, 1, 4])] {
            let o = VolumeOptions {
                levels,
                ..VolumeOptions::lossless()
            };
            let enc = volume::encode_volume(&v, &o, &Backend::Cpu).unwrap();
            let dec =
                volume::decode_volume(&enc.bytes, &VolumeDecodeOptions::default(), &Backend::Cpu)
                    .unwrap();
            assert_eq!(dec.volume, v);
        }
        let enc = volume::encode_volume(&v, &VolumeOptions::bpp(2.0), &Backend::Cpu).unwrap();
        assert!(enc.bytes.len() <= v.voxels() * 2 / 8);
        let dec = volume::decode_volume(&enc.bytes, &VolumeDecodeOptions::default(), &Backend::Cpu)
            .unwrap();
        dec.volume.validate().unwrap();
    }
}
