//! An injectable device fault, for the tests that show a batch survives a
//! GPU that fails part-way (README, "Nothing is lost on faults"). Built
//! only with the `internals` feature, which the workspace tests enable: a
//! release build has no such hook.
//!
//! A countdown rather than a failpoint library: the tests need one thing,
//! "the N-th submission from now fails as a lost device would", and a
//! process-wide atomic counter gives exactly that with no registry.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use super::GpuError;

/// Submissions left before the injected fault; negative when none is armed.
static SUBMISSIONS_BEFORE_FAULT: AtomicI64 = AtomicI64::new(-1);

/// Submissions made since the process started (so a test can count what
/// one job takes).
static SUBMISSIONS: AtomicI64 = AtomicI64::new(0);

/// Makes the submission after the next `n` fail (`None` disarms).
pub fn fail_after(n: Option<u64>) {
    let v = n.map_or(-1, |n| n.min(i64::MAX as u64) as i64);
    SUBMISSIONS_BEFORE_FAULT.store(v, Ordering::SeqCst);
}

/// The image size (`width << 32 | height`) whose encode's first
/// submission fails; 0 when none is armed.
static FAULT_ON_ENCODE_OF: AtomicU64 = AtomicU64::new(0);

/// Makes the first submission of the next encode of a `width x height`
/// image fail (`None` disarms): "the device is lost while that file of a
/// batch is coded", whatever the device's start-up and the other files
/// take in submissions and in whatever order a batch's threads make them.
pub fn fail_on_encode_of(size: Option<(u32, u32)>) {
    let v = size.map_or(0, |(w, h)| (w as u64) << 32 | h as u64);
    FAULT_ON_ENCODE_OF.store(v, Ordering::SeqCst);
}

/// Called when an image encode starts (`codec::encode`): arms the
/// submission fault once, when this is the size [`fail_on_encode_of`]
/// named.
pub(crate) fn encode_started(width: usize, height: usize) {
    let key = (width as u64) << 32 | height as u64;
    if FAULT_ON_ENCODE_OF
        .compare_exchange(key, 0, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        SUBMISSIONS_BEFORE_FAULT.store(0, Ordering::SeqCst);
    }
}

/// Command-buffer submissions made so far by this process.
pub fn submissions() -> u64 {
    SUBMISSIONS.load(Ordering::SeqCst) as u64
}

/// Called before every submission: the injected fault, when it is due.
pub(super) fn check() -> Result<(), GpuError> {
    SUBMISSIONS.fetch_add(1, Ordering::SeqCst);
    let left = SUBMISSIONS_BEFORE_FAULT.fetch_sub(1, Ordering::SeqCst);
    if left == 0 {
        return Err(GpuError::Command("injected device fault (test hook)".into()));
    }
    if left < 0 {
        // Not armed: undo the decrement so the counter stays negative.
        SUBMISSIONS_BEFORE_FAULT.fetch_add(1, Ordering::SeqCst);
    }
    Ok(())
}
