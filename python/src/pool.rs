//! Which thread codes a call, in which rayon pool.
//!
//! The codec runs some forty parallel regions per image (stages, DWT
//! levels). Started from a thread outside rayon's pool, each region is a
//! hand-over to the pool and a sleep and wake-up of the caller; started
//! from a pool thread, it is a push onto that thread's own queue. A
//! Python thread is outside the pool, so:
//!
//! - Where the global pool has one thread (`RAYON_NUM_THREADS=1`, as Dask
//!   workers and the benchmark run), handing the call to it adds no
//!   parallelism, only two wake-ups of a sleeping thread per call (tens
//!   of microseconds each on the development VM, milliseconds under
//!   load), and the calls of every Python thread would queue on that one
//!   thread. So the calling thread becomes the one worker of a pool of
//!   its own (rayon's `use_current_thread`) and codes there: no
//!   hand-over, and Python threads code in parallel as the GIL release
//!   promises. The thread count is the same, one, so are the bytes.
//! - Otherwise the call is one hand-over to the global pool
//!   (`rayon::join`), as `wavelane encode` does (cli/src/encode.rs).
//!
//! The library is left as it is: its other callers (the CLI) already run
//! on pool threads. docs/perf/README.md ("The Python call") has the
//! measurements.

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
