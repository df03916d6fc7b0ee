//! Checking a `.wls` file without decoding it (`wavelane verify`): the
//! header and its CRC, the trailer, the index and its CRC, then every
//! frame's record header and data CRC.

use std::io::Cursor;

use super::container::{SequenceFile, SequenceLimits};
use super::SequenceError;

/// What [`verify_sequence`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SequenceCheck {
    /// Frames the index (or, without one, the scan) lists.
    pub frames: u64,
    /// Bytes the file's index promises (`None` without an index).
    pub expected_bytes: Option<u64>,
    /// Frames that fail their checks.
    pub damaged_frames: Vec<u64>,
    /// Everything wrong, one message each; empty for a good file.
    pub problems: Vec<String>,
}

/// Checks the bytes of a `.wls` file.
pub fn verify_sequence(bytes: &[u8]) -> SequenceCheck {
    let mut check = SequenceCheck::default();
    let limits = SequenceLimits::default();
    let mut file = match SequenceFile::open_partial(Cursor::new(bytes), limits) {
        Ok((f, None)) => {
            check.expected_bytes = Some(bytes.len() as u64);
            f
        }
        Ok((f, Some(e))) => {
            let whole = f.frames.last().map_or(f.header_len, |e| e.offset + e.len);
            check.problems.push(format!(
                "{e} ({} whole frame(s) in the first {whole} bytes)",
                f.frames.len()
            ));
            f
        }
        Err(e) => {
            check.problems.push(e.to_string());
            return check;
        }
    };
    check.frames = file.frame_count();
    for k in 0..file.frame_count() {
        match file.read_frame(k) {
            Ok(_) => {}
            Err(e @ SequenceError::DamagedFrame { .. }) => {
                check.damaged_frames.push(k);
                check.problems.push(e.to_string());
            }
            Err(e) => check.problems.push(e.to_string()),
        }
    }
    check
}
