//! Where a call's coding runs: which thread, which rayon pool.
//!
//! The codec runs some forty parallel regions per image (stages, DWT
//! levels). Started from a thread outside rayon's pool, each region is a
//! hand-over to the pool and a sleep and wake-up of the caller, so a
//! Python call does not code on the Python thread:
//!
//! - Where the global pool has one thread (`RAYON_NUM_THREADS=1`, as
//!   Dask workers and the benchmarks set it), the pool adds no
//!   parallelism, only a hand-over per call and a wake-up of a sleeping
//!   thread on the way in and out (tens of microseconds each on the
//!   development VM, milliseconds under load), and every Python thread's
//!   calls queue on that one pool thread. So the calling thread becomes
//!   the one worker of a pool of its own (rayon's `use_current_thread`)
//!   and codes there: no hand-over, no wake-up, and Python threads code
//!   in parallel as the GIL release promises. Same thread count, so the
//!   same bytes (the codec's output does not depend on it anyway).
//! - Otherwise the call is one hand-over to the global pool
//!   (`rayon::join`), where each region is a push onto the pool thread's
//!   own queue: as `wavelane encode` does (cli/src/encode.rs).
//!
//! docs/benchmarks.md ("Python, Zarr and Dask") has the measurements.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::ThreadPoolBuilder;

/// The most threads that get a pool of their own. rayon keeps a local
/// pool's registry for good once a thread has joined it (its documentation
/// of `use_current_thread`): about 8 KB per thread that ever coded
/// (measured: RSS over 2000 short-lived threads), no OS thread. Python
/// programs code from a few long-lived threads (Dask's, zarr's, a
/// `ThreadPoolExecutor`'s), which come first; a program that starts a
/// thread per call gets the global pool's hand-over after this many, so
/// the memory kept stays under about 1 MB.
const OWN_POOLS_MAX: usize = 128;

static OWN_POOLS: AtomicUsize = AtomicUsize::new(0);

/// Runs `f` (a whole encode or decode) where its parallel regions cost
/// least: see the module documentation.
pub fn run<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    // Already a worker: of this thread's own pool (every call after the
    // first below), or of the global pool.
    if rayon::current_thread_index().is_some() {
        return f();
    }
    if rayon::current_num_threads() == 1 && join_own_pool() {
        return f();
    }
    rayon::join(f, || ()).0
}

/// Makes the calling thread the one worker of a pool of its own, unless
/// [`OWN_POOLS_MAX`] threads already are. Building fails only where the
/// thread is already a worker, which [`run`] rules out first.
fn join_own_pool() -> bool {
    let counted = OWN_POOLS
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n < OWN_POOLS_MAX).then_some(n + 1)
        })
        .is_ok();
    if !counted {
        return false;
    }
    match ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build()
    {
        // Dropping the handle would only ask a thread that never runs
        // rayon's loop to stop; the registry stays either way.
        Ok(own) => {
            std::mem::forget(own);
            true
        }
        Err(_) => false,
    }
}
