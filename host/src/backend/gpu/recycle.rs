//! Device-local buffers kept for the next call of the same shape.
//!
//! Every stage makes its buffers per call ([`super::Gpu::uninit`]); a
//! fresh allocation of a plane-sized buffer costs the driver a new memory
//! object (about a millisecond for the 400 MB planes of an 8K frame), and
//! the many small ones tens of microseconds each, which a codec that
//! encodes frame after frame pays on every frame (docs/perf/codec.md,
//! "Host work between the kernels"). So the device keeps what it
//! allocated and hands a buffer out again once nothing else holds it.
//!
//! A buffer is free when the recycler holds its only reference: every
//! user (a stage's result, a dispatch list, a command buffer in flight, a
//! descriptor set) holds a clone of it, so none can see it reused. Reuse
//! is by size: the smallest free buffer that holds the request and is at
//! most twice its size (plus a small slack), handed out as a slice of the
//! requested length, so shaders that bound their accesses by the
//! binding's length see the same length as with a fresh buffer. Contents
//! are undefined, as [`super::Gpu::uninit`] promises.
//!
//! What is kept is bounded ([`Recycler::new`]): past the bound, free
//! buffers are dropped oldest first, and a buffer that still does not fit
//! is not kept. An allocation that fails gives every free kept buffer
//! back to the device and is tried once more
//! ([`Recycler::release_free`]), so that what is kept does not stand in
//! the way of a large image.

use vulkano::buffer::Subbuffer;

/// Requests this small or smaller may take a free buffer up to this many
/// bytes larger than twice their size.
const SLACK: u64 = 64 * 1024;

/// What the recycler keeps: a whole buffer, which it can tell is free and
/// hand out a prefix of.
pub(super) trait Keepable: Clone {
    /// Bytes.
    fn size(&self) -> u64;
    /// Whether nothing but the recycler holds it.
    fn is_free(&self) -> bool;
    /// Its first `bytes` bytes, held apart from the recycler's copy.
    fn prefix(&self, bytes: u64) -> Self;
}

impl Keepable for Subbuffer<[u8]> {
    fn size(&self) -> u64 {
        Subbuffer::size(self)
    }

    fn is_free(&self) -> bool {
        std::sync::Arc::strong_count(self.buffer()) == 1
    }

    fn prefix(&self, bytes: u64) -> Self {
        self.clone().slice(0..bytes)
    }
}

/// The kept buffers.
pub(super) struct Recycler<B: Keepable = Subbuffer<[u8]>> {
    /// Every kept buffer, whole, in the order it was made.
    buffers: Vec<B>,
    /// Their bytes.
    bytes: u64,
    /// At most this many bytes are kept.
    limit: u64,
}

impl<B: Keepable> Recycler<B> {
    /// Keeps at most `limit` bytes.
    pub(super) fn new(limit: u64) -> Self {
        Recycler {
            buffers: Vec::new(),
            bytes: 0,
            limit,
        }
    }

    /// A free kept buffer for `bytes` bytes: a prefix of exactly that length.
    pub(super) fn take(&self, bytes: u64) -> Option<B> {
        let most = bytes.saturating_mul(2).saturating_add(SLACK);
        self.buffers
            .iter()
            .filter(|b| b.is_free() && (bytes..=most).contains(&b.size()))
            .min_by_key(|b| b.size())
            .map(|b| b.prefix(bytes))
    }

    /// Drops every free buffer: what a device short of memory gives back
    /// before it tries an allocation again.
    pub(super) fn release_free(&mut self) {
        self.buffers.retain(|b| !b.is_free());
        self.bytes = self.buffers.iter().map(|b| b.size()).sum();
    }

    /// Keeps `buffer` (just made) for later calls, dropping free buffers
    /// oldest first to stay within the bound; a buffer that does not fit
    /// even then is not kept.
    pub(super) fn keep(&mut self, buffer: &B) {
        let size = buffer.size();
        let mut k = 0;
        while self.bytes + size > self.limit && k < self.buffers.len() {
            if self.buffers[k].is_free() {
                self.bytes -= self.buffers.remove(k).size();
            } else {
                k += 1;
            }
        }
        if self.bytes + size <= self.limit {
            self.bytes += size;
            self.buffers.push(buffer.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A stand-in buffer: its size, shared by every holder.
    #[derive(Clone, Debug, PartialEq)]
    struct Fake(Arc<u64>, u64);

    impl Keepable for Fake {
        fn size(&self) -> u64 {
            *self.0
        }
        fn is_free(&self) -> bool {
            Arc::strong_count(&self.0) == 1
        }
        fn prefix(&self, bytes: u64) -> Self {
            Fake(self.0.clone(), bytes)
        }
    }

    fn made(r: &mut Recycler<Fake>, size: u64) -> Fake {
        let b = Fake(Arc::new(size), size);
        r.keep(&b);
        b
    }

    #[test]
    fn a_buffer_is_handed_out_again_only_once_free() {
        let mut r = Recycler::new(1 << 30);
        let a = made(&mut r, 4000);
        assert!(r.take(3000).is_none(), "held buffers are never handed out");
        let shared = a.0.clone();
        drop(a);
        assert!(r.take(3000).is_none(), "a clone still holds it");
        drop(shared);
        let again = r.take(3000).expect("free now");
        assert_eq!(again.1, 3000, "a prefix of the requested length");
        assert_eq!(again.size(), 4000);
        assert!(r.take(3000).is_none(), "handed out: held again");
    }

    #[test]
    fn the_best_fitting_free_buffer_is_taken_within_twice_the_request() {
        let mut r = Recycler::new(1 << 40);
        for size in [1 << 20, 5 << 20, 3 << 20] {
            made(&mut r, size);
        }
        assert_eq!(r.take(2 << 20).map(|b| b.size()), Some(3 << 20));
        assert_eq!(r.take(1 << 20).map(|b| b.size()), Some(1 << 20));
        assert!(r.take(6 << 20).is_none(), "none large enough");
        assert!(r.take(100).is_none(), "1 MiB is too large for 100 bytes");
        made(&mut r, 1000);
        assert_eq!(
            r.take(100).map(|b| b.size()),
            Some(1000),
            "within the slack"
        );
    }

    #[test]
    fn a_device_short_of_memory_gets_the_free_buffers_back() {
        let mut r = Recycler::new(1 << 30);
        let held = made(&mut r, 4000);
        drop(made(&mut r, 3000));
        drop(made(&mut r, 2000));
        r.release_free();
        assert_eq!(r.bytes, 4000, "only the held buffer stays");
        assert!(r.take(1500).is_none());
        drop(held);
        assert!(r.take(3000).is_some(), "kept, free once dropped");
    }

    #[test]
    fn the_kept_bytes_stay_within_the_bound() {
        let mut r = Recycler::new(10_000);
        let held = made(&mut r, 6_000);
        drop(made(&mut r, 3_000));
        // 9,000 kept; 5,000 more needs the free 3,000 gone and still does
        // not fit beside the held 6,000: not kept.
        let big = made(&mut r, 5_000);
        assert_eq!(r.bytes, 6_000);
        drop(big);
        assert!(
            r.take(5_000).is_none(),
            "a buffer over the bound was not kept"
        );
        // A free buffer makes room for a new one, oldest first.
        drop(held);
        made(&mut r, 9_000);
        assert_eq!(r.bytes, 9_000);
        assert_eq!(
            r.take(6_000).map(|b| b.size()),
            Some(9_000),
            "the free 6,000 went for the 9,000"
        );
    }
}
