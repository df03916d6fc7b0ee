//! Large host buffers that are filled at once: a decoded image, a
//! download, the decoder's batch of codewords.
//!
//! A fresh allocation of many megabytes comes from the kernel as untouched
//! pages, and the first write to each 4 KiB page faults: filling fresh
//! memory costs more in faults than in copying, and 2 MiB pages need a
//! five-hundredth of the faults (measured in docs/perf/codec.md, "Kernel
//! by kernel, fresh pages and the decoder's codewords"). Linux backs a
//! range with 2 MiB pages on request (`madvise(MADV_HUGEPAGE)`) where
//! transparent huge pages are set to `madvise` or `always`, its usual
//! settings; [`zeroed_vec`] asks for it before anything touches the
//! buffer. Elsewhere, or where the kernel declines, the buffer is an
//! ordinary zeroed vector.

/// Buffers smaller than this are left as the allocator gives them (a few
/// 2 MiB pages gain nothing, and the call costs a system call).
pub(crate) const LARGE: usize = 4 << 20;

/// The size of a transparent huge page on the platforms that have them.
#[cfg(target_os = "linux")]
const HUGE_PAGE: usize = 2 << 20;

/// `n` zeros, with the pages of a large vector requested as 2 MiB pages
/// before they are touched (module docs).
///
/// The pages are faulted in at once on all cores: the callers fill the
/// vector in chunks (a download's staging chunks of 8 MiB), and a chunk
/// spans only four 2 MiB pages, so left to the fill, the faults (each
/// clearing 2 MiB) would run on four threads at a time.
pub(crate) fn zeroed_vec<T: bytemuck::Zeroable + Clone + Send>(n: usize) -> Vec<T> {
    // `vec!` of a zero value allocates zeroed memory (`calloc`): large
    // allocations arrive untouched, so the advice still applies.
    let mut v = vec![T::zeroed(); n];
    if advise_huge_pages(&mut v) > 0 {
        #[cfg(target_os = "linux")]
        {
            use rayon::prelude::*;
            // Chunk starts 2 MiB apart: one in every 2 MiB page.
            let per_page = (HUGE_PAGE / std::mem::size_of::<T>().max(1)).max(1);
            // An opaque zero: a store of a known zero into memory known to
            // be zeroed could be dropped by the optimizer.
            v.par_chunks_mut(per_page)
                .for_each(|c| c[0] = std::hint::black_box(T::zeroed()));
        }
    }
    v
}

/// `buf` cut into consecutive parts of `lens` elements, in order, so that
/// the parts can be filled on all cores: the file writer's segments and
/// the decoder's batch of codewords. Stops early where `buf` runs out;
/// what the lengths leave over is not handed out.
pub(crate) fn split_into_parts<T>(
    buf: &mut [T],
    lens: impl IntoIterator<Item = usize>,
) -> Vec<&mut [T]> {
    let mut parts = Vec::new();
    let mut rest = buf;
    for len in lens {
        if len > rest.len() {
            break;
        }
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(len);
        parts.push(part);
        rest = tail;
    }
    parts
}

/// Asks the kernel to back the whole 2 MiB pages inside `buf` with huge
/// pages; returns the bytes advised (0 where the buffer is small, the
/// platform has no such advice or the kernel refused it). Contents and
/// access are unchanged either way.
pub(crate) fn advise_huge_pages<T>(buf: &mut [T]) -> usize {
    let bytes = std::mem::size_of_val(buf);
    if bytes < LARGE {
        return 0;
    }
    advise(buf.as_mut_ptr() as usize, bytes)
}

#[cfg(target_os = "linux")]
fn advise(start: usize, bytes: usize) -> usize {
    let first = start.next_multiple_of(HUGE_PAGE);
    let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
    if first >= end {
        return 0;
    }
    // SAFETY: [first, end) lies inside the buffer the caller borrows
    // mutably, so no other reference to it exists. MADV_HUGEPAGE changes
    // only how the kernel backs the range, never its contents or its
    // protection, so the borrow stays valid whatever the kernel does.
    let done =
        unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
    if done == 0 {
        end - first
    } else {
        0
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_start: usize, _bytes: usize) -> usize {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_consecutive_and_stop_where_the_buffer_ends() {
        let mut buf: Vec<u8> = (0..10).collect();
        let parts = split_into_parts(&mut buf, [3, 0, 4, 5]);
        let got: Vec<Vec<u8>> = parts.iter().map(|p| p.to_vec()).collect();
        assert_eq!(got, [vec![0, 1, 2], vec![], vec![3, 4, 5, 6]]);
    }

    #[test]
    fn small_buffers_are_left_alone() {
        let mut v = vec![0u8; LARGE - 1];
        assert_eq!(advise_huge_pages(&mut v), 0);
        let v: Vec<u32> = zeroed_vec(1000);
        assert!(v.iter().all(|&x| x == 0));
    }

    /// A large zeroed vector is all zeros and writable, and on Linux the
    /// kernel records the advice on the mapping that holds its whole
    /// 2 MiB pages (`hg` among the mapping's flags in /proc/self/smaps),
    /// whatever it then does with it.
    #[test]
    fn large_buffers_are_advised_whole_huge_pages() {
        let n = 9 << 20;
        let mut v: Vec<u16> = zeroed_vec(n);
        assert_eq!(v.len(), n);
        assert!(v.iter().all(|&x| x == 0));
        v.iter_mut().step_by(4096).for_each(|x| *x = 7);
        assert_eq!(v.iter().filter(|&&x| x == 7).count(), n.div_ceil(4096));
        #[cfg(target_os = "linux")]
        {
            let advised = advise_huge_pages(&mut v);
            let bytes = 2 * n;
            assert!(
                advised >= bytes - 2 * HUGE_PAGE && advised <= bytes,
                "{advised}"
            );
            assert_eq!(advised % HUGE_PAGE, 0);
            let at = v.as_ptr() as usize + v.len(); // inside the advised range
            let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
            assert!(
                mapping_flags(&smaps, at).contains(&"hg"),
                "no huge page advice at {at:#x}"
            );
        }
    }

    /// The `VmFlags` of the mapping of /proc/self/smaps that holds `at`.
    #[cfg(target_os = "linux")]
    fn mapping_flags(smaps: &str, at: usize) -> Vec<&str> {
        let mut inside = false;
        for line in smaps.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if let Some((lo, hi)) = first.split_once('-') {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = lo <= at && at < hi;
                    continue;
                }
            }
            if inside {
                if let Some(flags) = line.strip_prefix("VmFlags:") {
                    return flags.split_whitespace().collect();
                }
            }
        }
        Vec::new()
    }
}
