//! Stack use by painting: fill the free stack below the current stack
//! pointer with a pattern, run the code, then find the lowest word that no
//! longer holds the pattern.
//!
//! The stack region is `[_stack_end, _stack_start)` from cortex-m-rt's
//! linker script (the RAM above the statics). A pushed word that happens to
//! equal the pattern at the very bottom of the used area would be missed, so
//! the figure can be low by a few words at most.

use core::sync::atomic::{AtomicUsize, Ordering};

/// The pattern; the same as cortex-m-rt's `paint-stack` feature uses.
const PAINT: u32 = 0xCCCC_CCCC;

extern "C" {
    static _stack_start: u32;
    static _stack_end: u32;
}

/// Deepest stack seen by any [`measure`], in bytes below the stack top.
static DEEPEST: AtomicUsize = AtomicUsize::new(0);

/// Stack use of one measured call.
#[derive(Debug, Clone, Copy)]
pub struct StackUse {
    /// Bytes used by the call itself (below the caller's frame).
    pub call: usize,
    /// Bytes from the top of the stack to the deepest word used (the
    /// callers' frames included): the RAM the stack needed.
    pub depth: usize,
}

/// `(bottom, top)` of the stack region.
pub fn region() -> (usize, usize) {
    // Only the addresses of the linker symbols are taken, never their values.
    (
        &raw const _stack_end as usize,
        &raw const _stack_start as usize,
    )
}

/// The deepest stack use [`measure`] has seen, in bytes.
pub fn deepest() -> usize {
    DEEPEST.load(Ordering::Relaxed)
}

/// Runs `f` and measures its stack use; `None` if the stack reached the
/// bottom of its region (it may have overwritten statics: stop).
#[inline(never)]
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, Option<StackUse>) {
    let (bottom, top) = region();
    let sp = cortex_m::register::msp::read() as usize;
    let mut p = bottom;
    while p < sp {
        // SAFETY: [bottom, sp) is stack below this frame, used by nobody
        // now (no interrupts are enabled); volatile so it is not a call to
        // memset, whose own frame would sit in the painted range.
        unsafe { (p as *mut u32).write_volatile(PAINT) };
        p += 4;
    }
    let r = call(f);
    let mut lowest = bottom;
    // SAFETY: reads within the stack region, below this frame.
    while lowest < sp && unsafe { (lowest as *const u32).read_volatile() } == PAINT {
        lowest += 4;
    }
    if lowest == bottom {
        return (r, None);
    }
    let depth = top - lowest;
    DEEPEST.fetch_max(depth, Ordering::Relaxed);
    (
        r,
        Some(StackUse {
            call: sp - lowest,
            depth,
        }),
    )
}

/// A frame boundary: `f` runs in frames below `measure`'s.
#[inline(never)]
fn call<R>(f: impl FnOnce() -> R) -> R {
    f()
}
