//! A counting global allocator for measuring how much heap a decoder takes
//! for a given input (docs/fuzzing.md records the bounds).
//!
//! Install it in a test binary or fuzz target with
//! `#[global_allocator] static A: Meter = Meter;`, then wrap the work in
//! [`measure`]. Counters are process-wide, so measure in one thread at a
//! time (allocations of worker threads, e.g. rayon's, are counted too).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static LARGEST: AtomicUsize = AtomicUsize::new(0);
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The system allocator plus counters of live bytes, their peak and the
/// largest single request.
#[derive(Debug, Clone, Copy, Default)]
pub struct Meter;

fn grew(by: usize) {
    let now = CURRENT.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(now, Relaxed);
    LARGEST.fetch_max(by, Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; the counters only observe sizes.
unsafe impl GlobalAlloc for Meter {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ACTIVE.store(true, Relaxed);
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ACTIVE.store(true, Relaxed);
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            CURRENT.fetch_sub(layout.size(), Relaxed);
            grew(new_size);
        }
        p
    }
}

/// Heap use of one measured piece of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeapUse {
    /// Highest number of live bytes above those live at the start.
    pub peak: usize,
    /// Largest single allocation.
    pub largest: usize,
}

/// Runs `work` and reports its heap use. Panics if [`Meter`] is not the
/// global allocator (nothing would be counted).
pub fn measure<R>(work: impl FnOnce() -> R) -> (R, HeapUse) {
    let _probe = Box::new(0u64);
    assert!(
        ACTIVE.load(Relaxed),
        "alloc_meter::Meter is not the global allocator"
    );
    drop(_probe);
    let base = CURRENT.load(Relaxed);
    PEAK.store(base, Relaxed);
    LARGEST.store(0, Relaxed);
    let r = work();
    let use_ = HeapUse {
        peak: PEAK.load(Relaxed).saturating_sub(base),
        largest: LARGEST.load(Relaxed),
    };
    (r, use_)
}
