//! Scratch files for what the checker spills to disk (frontier segments,
//! the edge stream).

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A new file in the temporary directory, named after `kind`, the process
/// and a counter, and unlinked at once: its space is freed when the handle
/// is dropped or the process ends, however it ends.
pub(crate) fn unlinked(kind: &str) -> io::Result<File> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let path = std::env::temp_dir().join(format!(
        "livemove-{kind}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let f = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(f)
}

/// Ask the kernel to back `v`'s allocation with huge pages where it can,
/// before it is first written: the visited set and the arrays the
/// acyclicity check indexes by state are read at random, and with 4 KiB
/// pages nearly every such read also misses the address translation cache.
/// Only advice: it changes no value, and where it is not supported (another
/// system, or huge pages turned off) nothing happens. Small vectors are left
/// alone.
pub(crate) fn huge_pages<T>(v: &Vec<T>) {
    const HUGE: usize = 2 << 20;
    let bytes = v.capacity() * size_of::<T>();
    if bytes < 4 * HUGE {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        const MADV_HUGEPAGE: i32 = 14;
        // The whole huge pages inside the allocation.
        let start = (v.as_ptr() as usize).next_multiple_of(HUGE);
        let end = (v.as_ptr() as usize + bytes) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside `v`'s live allocation, and
            // MADV_HUGEPAGE only changes how it is backed, never its
            // contents; a failure is ignored (the advice is optional).
            unsafe {
                madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE);
            }
        }
    }
}
