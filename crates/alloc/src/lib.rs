//! The scan's global allocator: mimalloc, plus one region per thread that a
//! parser's syntax tree is built in and thrown away as a whole.
//!
//! Why: a parse tree is millions of small boxes that live exactly as long as
//! lowering reads them. Handing each out and freeing each again through
//! mimalloc cost about a fifth of a Python scan's time (the first touch of
//! every fresh block, then a walk of the whole tree to drop it; README,
//! Benchmarks). In the region a block is a pointer bump into memory the
//! previous file already warmed, and freeing the tree is resetting the
//! pointer.
//!
//! How: [`ScanAllocator`] serves every allocation from mimalloc, except on a
//! thread inside [`in_region`]'s `build` closure, whose new blocks come from
//! that thread's region. Freeing a block of the region does nothing; the
//! region is reused from its start by the thread's next `in_region`. Nothing
//! changes unless the binary installs [`ScanAllocator`] as its global
//! allocator and calls [`enable`]; the library and its tests keep whatever
//! allocator they have.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::ffi::{c_int, c_long};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use mimalloc::MiMalloc;

/// Address space reserved per thread (not memory: pages are committed as
/// the bump pointer first reaches them). A tree that outgrows it continues
/// on the heap ([`Region::overflowed`]).
const DEFAULT_REGION_BYTES: usize = 1 << 30;

/// What the region keeps committed between files. Above it, the pages a
/// large file used are given back when the next file starts, so one huge
/// generated file does not raise the scan's memory for good.
const DEFAULT_KEEP_BYTES: usize = 4 << 20;

static ENABLED: AtomicBool = AtomicBool::new(false);
static REGION_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_REGION_BYTES);
static KEEP_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_KEEP_BYTES);

/// mimalloc for everything, and the thread's region for the new blocks of
/// an [`in_region`] build.
pub struct ScanAllocator;

/// Sets mimalloc's options ([`return_memory_promptly`]) and turns the
/// regions on. Call it once, early in `main`.
///
/// # Safety
/// [`ScanAllocator`] must be the process's global allocator: a block from a
/// region freed by another allocator would corrupt its heap.
pub unsafe fn enable() {
    return_memory_promptly();
    ENABLED.store(true, Ordering::Relaxed);
}

// mimalloc 2's option numbers (`mi_option_e` in its `mimalloc.h`); the
// Rust binding does not name these two. The crate version is pinned.
const MI_OPTION_PURGE_DELAY: c_int = 15;
const MI_OPTION_ARENA_PURGE_MULT: c_int = 24;

unsafe extern "C" {
    fn mi_option_set(option: c_int, value: c_long);
    #[cfg(test)]
    fn mi_option_get(option: c_int) -> c_long;
}

/// By default mimalloc keeps freed pages for 10 ms, and freed arena memory
/// for 100 ms, before giving them back: scanning the large generated files
/// of the benchmark's "all" tree, that held 20-40 MB more at the peak. 1 ms
/// for both keeps almost all of the speed.
fn return_memory_promptly() {
    // SAFETY: setting an option only changes a value mimalloc reads when it
    // next purges; any thread may do it at any time.
    unsafe {
        mi_option_set(MI_OPTION_PURGE_DELAY, 1);
        mi_option_set(MI_OPTION_ARENA_PURGE_MULT, 1);
    }
}

/// Turns the regions off for builds that start from now on (tests compare
/// both ways in one process).
pub fn disable() {
    ENABLED.store(false, Ordering::Relaxed);
}

/// Sets the address space each thread reserves, for threads that have not
/// reserved theirs yet (tests use a small one to reach the overflow path).
pub fn set_region_bytes(bytes: usize) {
    REGION_BYTES.store(bytes.max(4096), Ordering::Relaxed);
}

/// Sets how much of its region a thread keeps committed between builds
/// (tests use a small amount so that the pages are given back often).
pub fn set_keep_bytes(bytes: usize) {
    KEEP_BYTES.store(bytes.next_multiple_of(page_size()), Ordering::Relaxed);
}

/// The region of this thread: `[start, end)`, `next` the bump pointer,
/// `high` the highest address handed out since the region was last trimmed.
/// All zero until the thread's first [`in_region`]. Plain `Cell`s with a
/// `const` initializer: the allocator reads them on every call, and they
/// must not allocate or register a destructor.
struct Region {
    start: Cell<usize>,
    end: Cell<usize>,
    next: Cell<usize>,
    high: Cell<usize>,
    /// Inside a build: new blocks come from the region.
    active: Cell<bool>,
    /// From the start of a build to the end of the read of its result: the
    /// region holds that result, so it must not be reset.
    busy: Cell<bool>,
    /// A block of the current build did not fit and came from the heap.
    overflowed: Cell<bool>,
}

thread_local! {
    static REGION: Region = const {
        Region {
            start: Cell::new(0),
            end: Cell::new(0),
            next: Cell::new(0),
            high: Cell::new(0),
            active: Cell::new(false),
            busy: Cell::new(false),
            overflowed: Cell::new(false),
        }
    };
    /// Unmaps the region when the thread ends (registered outside the
    /// allocator, by the first `in_region`).
    static UNMAP_AT_EXIT: Unmap = const { Unmap };
}

impl Region {
    fn contains(&self, p: *mut u8) -> bool {
        let a = p as usize;
        a >= self.start.get() && a < self.end.get()
    }

    /// A block of `layout` from the region, or `None` when it does not fit.
    fn bump(&self, layout: Layout) -> Option<*mut u8> {
        let at = self.next.get().checked_add(layout.align() - 1)? & !(layout.align() - 1);
        let end = at.checked_add(layout.size().max(1))?;
        if end > self.end.get() {
            self.overflowed.set(true);
            return None;
        }
        self.next.set(end);
        if end > self.high.get() {
            self.high.set(end);
        }
        Some(at as *mut u8)
    }

    /// Starts a build at the region's start, giving back the pages above
    /// the part it keeps ([`set_keep_bytes`]) that the last build used.
    fn reset(&self) {
        let start = self.start.get();
        let keep = start
            + KEEP_BYTES
                .load(Ordering::Relaxed)
                .min(self.end.get() - start);
        let high = self.high.get();
        if high > keep {
            // Whole pages only; `keep` is page-aligned (the region is).
            let len = (high - keep).next_multiple_of(page_size());
            // SAFETY: `[keep, keep + len)` lies inside this thread's mapping
            // and no block in it is alive (the builds that handed them out
            // are over, and their results were forgotten or dropped).
            unsafe { release_pages(keep, len.min(self.end.get() - keep)) };
            self.high.set(keep);
        }
        self.next.set(start);
        self.overflowed.set(false);
    }
}

unsafe impl GlobalAlloc for ScanAllocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if let Some(p) = REGION.with(|r| if r.active.get() { r.bump(layout) } else { None }) {
            return p;
        }
        // SAFETY: forwarded as received.
        unsafe { MiMalloc.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if let Some(p) = REGION.with(|r| if r.active.get() { r.bump(layout) } else { None }) {
            // The region is reused: its memory holds the last build's bytes.
            // SAFETY: `p` is `layout.size()` fresh bytes of the region.
            unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
            return p;
        }
        // SAFETY: forwarded as received.
        unsafe { MiMalloc.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !REGION.with(|r| r.contains(ptr)) {
            // SAFETY: not a region block, so one of mimalloc's.
            unsafe { MiMalloc.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (in_region, active, last) = REGION.with(|r| {
            let last = ptr as usize + layout.size() == r.next.get();
            (r.contains(ptr), r.active.get(), last)
        });
        if !in_region {
            // A heap block stays on the heap, even when grown in a build.
            // SAFETY: forwarded as received.
            return unsafe { MiMalloc.realloc(ptr, layout, new_size) };
        }
        // A shrink keeps the block where it is: region blocks are never freed
        // one by one, so moving it would only copy it (the parsers shrink
        // their token lists to fit once the file is read).
        if new_size <= layout.size() && !(active && last) {
            return ptr;
        }
        // The block the build handed out last grows (or shrinks) in place.
        if active && last {
            let grown = REGION.with(|r| {
                let end = (ptr as usize).checked_add(new_size.max(1))?;
                (end <= r.end.get()).then(|| {
                    r.next.set(end);
                    r.high.set(r.high.get().max(end));
                })
            });
            if grown.is_some() {
                return ptr;
            }
        }
        // SAFETY: `layout.align()` is a valid alignment and `new_size` was
        // checked by the caller, as `realloc` requires.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: as `alloc` (in the region when active, else the heap).
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are valid for the smaller size and distinct.
            unsafe { std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size)) };
        }
        new
    }
}

/// Runs `build` with its new blocks in this thread's region, then `read` on
/// what it built; `build`'s result is never dropped (freeing it would be a
/// walk that frees nothing), and the region is reused by the next call.
/// Without [`enable`] (or where the region cannot be mapped) this is
/// `read(&build())`.
///
/// # Safety
/// `build` must leave nothing it allocated alive after this call returns,
/// except inside its result: no block stored in a captured variable, a
/// static or a thread-local, no lazily initialized global, no work stolen
/// from a thread pool. (A panic's payload may be allocated in the region: it
/// stays valid until this thread's next call.) `read` may allocate freely;
/// its blocks are ordinary heap blocks.
pub unsafe fn in_region<R, U>(build: impl FnOnce() -> R, read: impl FnOnce(&R) -> U) -> U {
    // A call inside another's build or read uses the heap (inside a build,
    // the outer build's region): resetting would free the outer result.
    let usable = ENABLED.load(Ordering::Relaxed)
        && !REGION.with(|r| r.busy.get())
        && REGION.with(|r| r.start.get() != 0 || map_region(r));
    if !usable {
        return read(&build());
    }
    REGION.with(|r| {
        r.reset();
        r.busy.set(true);
        r.active.set(true);
    });
    // Not busy any more when this returns, or unwinds.
    let _done = Done;
    let built = {
        // Off again even if `build` panics.
        let _off = Deactivate;
        ManuallyDrop::new(build())
    };
    let out = read(&built);
    if REGION.with(|r| r.overflowed.get()) {
        // Some blocks are on the heap: a real drop frees them (and skips
        // the region's).
        drop(ManuallyDrop::into_inner(built));
    }
    out
}

/// Whether `p` points into this thread's region (for tests and checks).
pub fn in_this_threads_region(p: *const u8) -> bool {
    REGION.with(|r| r.contains(p.cast_mut()))
}

struct Deactivate;

impl Drop for Deactivate {
    fn drop(&mut self) {
        REGION.with(|r| r.active.set(false));
    }
}

struct Done;

impl Drop for Done {
    fn drop(&mut self) {
        REGION.with(|r| {
            r.active.set(false);
            r.busy.set(false);
        });
    }
}

struct Unmap;

impl Drop for Unmap {
    fn drop(&mut self) {
        // `try_with`: the region's own slot may already be gone.
        let _ = REGION.try_with(|r| {
            let (start, end) = (r.start.get(), r.end.get());
            if start != 0 {
                r.start.set(0);
                r.end.set(0);
                r.next.set(0);
                r.high.set(0);
                // SAFETY: the mapping is this thread's and the thread ends.
                unsafe { unmap(start, end - start) };
            }
        });
    }
}

/// Reserves this thread's region; false when the system refuses.
fn map_region(r: &Region) -> bool {
    let bytes = REGION_BYTES
        .load(Ordering::Relaxed)
        .next_multiple_of(page_size());
    let Some(start) = map(bytes) else {
        return false;
    };
    r.start.set(start);
    r.end.set(start + bytes);
    r.next.set(start);
    r.high.set(start);
    // Registering the destructor may allocate: it happens here, outside
    // the allocator and before the region is active.
    UNMAP_AT_EXIT.with(|_| {});
    true
}

#[cfg(unix)]
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 { n as usize } else { 4096 }
}

#[cfg(unix)]
fn map(bytes: usize) -> Option<usize> {
    // SAFETY: an anonymous private mapping at an address the kernel picks.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as usize)
}

/// Gives pages back to the system; they read as zero when touched again.
#[cfg(unix)]
unsafe fn release_pages(at: usize, len: usize) {
    // SAFETY: the caller passes pages of this thread's mapping that hold no
    // live block.
    unsafe { libc::madvise(at as *mut libc::c_void, len, libc::MADV_DONTNEED) };
}

#[cfg(unix)]
unsafe fn unmap(at: usize, len: usize) {
    // SAFETY: the caller passes the whole mapping, no longer used.
    unsafe { libc::munmap(at as *mut libc::c_void, len) };
}

// Elsewhere the regions are never mapped, so builds use the heap.
#[cfg(not(unix))]
fn page_size() -> usize {
    4096
}

#[cfg(not(unix))]
fn map(_bytes: usize) -> Option<usize> {
    None
}

#[cfg(not(unix))]
unsafe fn release_pages(_at: usize, _len: usize) {}

#[cfg(not(unix))]
unsafe fn unmap(_at: usize, _len: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option numbers are mimalloc 2's: both options have their
    /// documented default (10), and setting one is what reading it gives.
    #[test]
    fn the_purge_options_are_the_ones_set() {
        // SAFETY: see `return_memory_promptly`.
        unsafe {
            assert_eq!(mi_option_get(MI_OPTION_PURGE_DELAY), 10);
            assert_eq!(mi_option_get(MI_OPTION_ARENA_PURGE_MULT), 10);
            return_memory_promptly();
            assert_eq!(mi_option_get(MI_OPTION_PURGE_DELAY), 1);
            assert_eq!(mi_option_get(MI_OPTION_ARENA_PURGE_MULT), 1);
        }
    }
}
