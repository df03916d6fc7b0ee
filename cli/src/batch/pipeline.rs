//! The bounded pipeline behind every batch: reader threads -> coder
//! workers -> writer threads, with the results handed back in input order.
//!
//! - **Readers** take the next input index from a shared counter, so that
//!   inputs are read in about their order, and pass what they read to the
//!   coders through a bounded queue.
//! - **Coders**, one per worker (one per listed device, or one for a
//!   single backend), take the next read input from that one shared queue:
//!   a faster device comes back sooner and so takes more of the inputs,
//!   which is how each device's share follows its speed.
//! - **Writers** take coded results from a second bounded queue.
//! - The calling thread receives every outcome and hands it on in input
//!   order (`done`); only these outcomes wait for earlier ones, never the
//!   images or files, so memory stays bounded however unequal the workers.
//!
//! Files in flight are at most `readers + workers + writers` plus the two
//! queues' capacity (`workers` each): with one worker ([`Threads`]: two
//! readers, two writers) seven, while the coder codes file n, readers hold
//! n+1 to n+3 and writers n-1 and n-2. docs/codec.md ("Batches") says what
//! this overlaps and what it guarantees.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use super::super::CliError;

/// What the read stage gives: an input to code, or an outcome already (a
/// skipped input).
pub(crate) enum Flow<L, F> {
    /// Code it.
    Code(L),
    /// Nothing to code: this is its outcome.
    Done(F),
    /// The input has no more items (a stream read in order, such as a
    /// video's frames): this index and every later one get no outcome,
    /// and the readers stop.
    End,
}

/// The sizes of the pipeline's stages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Threads {
    /// Reader threads.
    pub readers: usize,
    /// Writer threads.
    pub writers: usize,
}

impl Threads {
    /// I/O threads for `workers` coders: one reader and one writer per
    /// worker, and at least two of each, so that decoding or encoding a
    /// PNG (one core each) does not hold up the device while another is
    /// read or written.
    pub(crate) fn for_workers(workers: usize) -> Threads {
        let n = workers.max(2);
        Threads {
            readers: n,
            writers: n,
        }
    }
}

/// A queue that several threads take from; it closes (senders then fail)
/// once the last taker has gone.
type Shared<T> = Arc<Mutex<Receiver<T>>>;

fn take<T>(queue: &Shared<T>) -> Option<T> {
    // A poisoned lock means another taker panicked; the scope re-raises
    // that panic, this thread only stops taking.
    queue.lock().ok()?.recv().ok()
}

/// Runs inputs `0..n` through `read`, `code` (on one of `workers`, each a
/// coder thread with its own state, kept for the next run) and `write`, calling `done` on this
/// thread with each input's outcome in input order. An error at any stage
/// is that input's outcome; the others go on. A stream of unknown length
/// passes `n = usize::MAX`, one reader thread (so that indices are read in
/// order) and ends with [`Flow::End`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<W, L, K, F>(
    n: usize,
    workers: &mut [W],
    threads: Threads,
    read: impl Fn(usize) -> Result<Flow<L, F>, CliError> + Sync,
    code: impl Fn(&mut W, usize, L) -> Result<K, CliError> + Sync,
    write: impl Fn(usize, K) -> Result<F, CliError> + Sync,
    mut done: impl FnMut(usize, Result<F, CliError>),
) where
    W: Send,
    L: Send,
    K: Send,
    F: Send,
{
    let capacity = workers.len().max(1);
    let (to_code, coding) = sync_channel::<(usize, L)>(capacity);
    let (to_write, writing) = sync_channel::<(usize, K)>(capacity);
    let (to_done, outcomes) = channel::<(usize, Result<F, CliError>)>();
    let coding: Shared<(usize, L)> = Arc::new(Mutex::new(coding));
    let writing: Shared<(usize, K)> = Arc::new(Mutex::new(writing));
    let next = AtomicUsize::new(0);
    let (read, code, write) = (&read, &code, &write);
    std::thread::scope(|s| {
        for _ in 0..threads.readers.max(1) {
            let (to_code, to_done, next) = (to_code.clone(), to_done.clone(), &next);
            s.spawn(move || reader(n, next, read, &to_code, &to_done));
        }
        for worker in workers.iter_mut() {
            let (coding, to_write, to_done) = (coding.clone(), to_write.clone(), to_done.clone());
            s.spawn(move || {
                while let Some((i, loaded)) = take(&coding) {
                    match code(worker, i, loaded) {
                        Ok(coded) => {
                            if let Err(e) = to_write.send((i, coded)) {
                                let _ = to_done.send((e.0 .0, Err("no writer left".into())));
                            }
                        }
                        Err(e) => {
                            let _ = to_done.send((i, Err(e)));
                        }
                    }
                }
            });
        }
        for _ in 0..threads.writers.max(1) {
            let (writing, to_done) = (writing.clone(), to_done.clone());
            s.spawn(move || {
                while let Some((i, coded)) = take(&writing) {
                    let _ = to_done.send((i, write(i, coded)));
                }
            });
        }
        // Only the stages hold the queues now: each closes when the last
        // thread that feeds or drains it ends, so no stage waits forever
        // on one that has gone.
        drop((to_code, to_write, to_done, coding, writing));
        let mut waiting = BTreeMap::new();
        let mut next_out = 0;
        for (i, outcome) in outcomes.iter() {
            waiting.insert(i, outcome);
            while let Some(outcome) = waiting.remove(&next_out) {
                done(next_out, outcome);
                next_out += 1;
            }
        }
    });
}

/// One reader thread: reads the next input until there is none, sending
/// each to the coders, or its outcome straight to `done`.
fn reader<L, F>(
    n: usize,
    next: &AtomicUsize,
    read: &(impl Fn(usize) -> Result<Flow<L, F>, CliError> + Sync),
    to_code: &std::sync::mpsc::SyncSender<(usize, L)>,
    to_done: &Sender<(usize, Result<F, CliError>)>,
) {
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n {
            return;
        }
        let outcome = match read(i) {
            Ok(Flow::Code(loaded)) => match to_code.send((i, loaded)) {
                Ok(()) => continue,
                // Every coder has stopped (a panic, re-raised by the scope).
                Err(_) => Err("no coder left".into()),
            },
            Ok(Flow::Done(f)) => Ok(f),
            Ok(Flow::End) => {
                next.store(n, Ordering::Relaxed);
                return;
            }
            Err(e) => Err(e),
        };
        let _ = to_done.send((i, outcome));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Outcomes come back in input order whatever order the workers finish
    /// in, every stage's error is its input's outcome, and a skipped input
    /// bypasses the coders.
    #[test]
    fn outcomes_keep_input_order() {
        let mut seen = Vec::new();
        run(
            12,
            &mut [0u32, 1, 2],
            Threads::for_workers(3),
            |i| match i {
                3 => Err("unreadable".into()),
                5 => Ok(Flow::Done(-5i64)),
                _ => Ok(Flow::Code(i as i64)),
            },
            |worker: &mut u32, i, x| {
                // Later inputs finish first on worker 0.
                std::thread::sleep(Duration::from_millis(if *worker == 0 {
                    1
                } else {
                    12 - i as u64
                }));
                if i == 7 {
                    return Err("bad".into());
                }
                Ok(x * 10)
            },
            |i, x| {
                if i == 9 {
                    Err("full".into())
                } else {
                    Ok(x + 1)
                }
            },
            |i, outcome| seen.push((i, outcome.map_err(|e| e.to_string()))),
        );
        let want: Vec<(usize, Result<i64, String>)> = (0..12)
            .map(|i| {
                (
                    i,
                    match i {
                        3 => Err("unreadable".to_string()),
                        5 => Ok(-5),
                        7 => Err("bad".to_string()),
                        9 => Err("full".to_string()),
                        _ => Ok(i as i64 * 10 + 1),
                    },
                )
            })
            .collect();
        assert_eq!(seen, want);
    }

    /// A stream of unknown length: one reader, the input ends with
    /// `Flow::End`, every item before it comes back in order and nothing
    /// after it is read.
    #[test]
    fn a_stream_ends_at_its_end_marker() {
        let mut seen = Vec::new();
        let reads = AtomicUsize::new(0);
        run(
            usize::MAX,
            &mut [0u32, 1],
            Threads {
                readers: 1,
                writers: 2,
            },
            |i| {
                reads.fetch_add(1, Ordering::Relaxed);
                Ok(match i {
                    0..=6 => Flow::Code(i),
                    _ => Flow::<usize, usize>::End,
                })
            },
            |w: &mut u32, i, x| {
                std::thread::sleep(Duration::from_millis(if *w == 0 {
                    1
                } else {
                    9 - i as u64
                }));
                Ok(x * 2)
            },
            |_, x| Ok(x),
            |i, outcome| seen.push((i, outcome.unwrap())),
        );
        assert_eq!(seen, (0..7).map(|i| (i, 2 * i)).collect::<Vec<_>>());
        assert_eq!(reads.load(Ordering::Relaxed), 8);
    }

    /// Work goes to whichever worker is free: a worker ten times slower
    /// codes far fewer of the inputs.
    #[test]
    fn a_faster_worker_takes_more() {
        let counts = [AtomicUsize::new(0), AtomicUsize::new(0)];
        run(
            40,
            &mut [0usize, 1],
            Threads::for_workers(2),
            |i| Ok(Flow::<usize, ()>::Code(i)),
            |w: &mut usize, _, _| {
                std::thread::sleep(Duration::from_millis(if *w == 0 { 2 } else { 20 }));
                counts[*w].fetch_add(1, Ordering::Relaxed);
                Ok(())
            },
            |_, ()| Ok(()),
            |_, outcome| outcome.unwrap(),
        );
        let (fast, slow) = (
            counts[0].load(Ordering::Relaxed),
            counts[1].load(Ordering::Relaxed),
        );
        assert_eq!(fast + slow, 40);
        assert!(fast > 2 * slow, "fast {fast}, slow {slow}");
    }

    /// However fast the reader and slow the coder, no more than the
    /// documented number of inputs are alive at once (read, not yet
    /// written): memory stays bounded over a long batch.
    #[test]
    fn inputs_in_flight_are_bounded() {
        let live = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let workers = 2;
        let threads = Threads::for_workers(workers);
        run(
            60,
            &mut vec![(); workers],
            threads,
            |i| {
                let now = live.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                Ok(Flow::<usize, ()>::Code(i))
            },
            |_, _, i| {
                std::thread::sleep(Duration::from_millis(2));
                Ok(i)
            },
            |_, _| {
                live.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            },
            |_, outcome| outcome.unwrap(),
        );
        let bound = threads.readers + threads.writers + 3 * workers;
        let most = most.load(Ordering::SeqCst);
        assert!(most <= bound, "{most} inputs alive at once, bound {bound}");
    }
}
