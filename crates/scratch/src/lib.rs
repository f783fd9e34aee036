//! The allocator of the unsnarl binary: mimalloc, plus scratch heaps for
//! syntax trees.
//!
//! A syntax tree lives only while its file is lowered, and freeing it node
//! by node is costly: rowan frees a green tree by visiting every node and
//! token, which was a tenth of the instructions on the benchmark's Rust
//! corpus. A front end can instead open a [`session`] for a file and build
//! its tree inside [`in_scratch`]: those allocations go to a mimalloc heap
//! of the session's own, and when the session ends the heap is destroyed in
//! one call (`mi_heap_destroy`), without visiting the tree.
//!
//! The contract, for a front end that uses it:
//! - only what [`in_scratch`] builds lives in the heap; what must outlive
//!   the session (the file model, error messages) is made or copied outside
//!   of it;
//! - nothing that points into the heap is used or dropped after the
//!   session: the tree's owner is forgotten ([`std::mem::forget`]) instead
//!   of dropped, so no destructor runs over freed memory.
//!
//! Without [`Allocator`] as the global allocator (unit tests of other crates,
//! benchmarks), sessions are inactive: [`in_scratch`] allocates normally and
//! says so, and the tree is dropped as usual.

use mimalloc::MiMalloc;
use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicU8, Ordering};

/// mimalloc 2's heap functions (`mimalloc.h`). The library is linked
/// through the `mimalloc` crate; its `extended` feature would declare the
/// same functions.
#[allow(non_camel_case_types)]
type mi_heap_t = c_void;

unsafe extern "C" {
    fn mi_heap_new_ex(tag: c_int, allow_destroy: bool, arena: c_int) -> *mut mi_heap_t;
    fn mi_heap_destroy(heap: *mut mi_heap_t);
    fn mi_heap_malloc_aligned(heap: *mut mi_heap_t, size: usize, align: usize) -> *mut c_void;
    fn mi_heap_zalloc_aligned(heap: *mut mi_heap_t, size: usize, align: usize) -> *mut c_void;
    fn mi_heap_realloc_aligned(
        heap: *mut mi_heap_t,
        p: *mut c_void,
        size: usize,
        align: usize,
    ) -> *mut c_void;
    fn mi_heap_contains_block(heap: *mut mi_heap_t, p: *const c_void) -> bool;
    fn mi_heap_check_owned(heap: *mut mi_heap_t, p: *const c_void) -> bool;
}

/// The tag of scratch heaps. A heap that needs a page may take over pages
/// that threads which ended left behind (mimalloc "reclaims" them), and
/// gives each to this thread's heap with the page's tag. Scratch heaps have
/// a tag of their own, so they never receive ordinary pages (the file
/// paths the walker's threads allocated, say), which their destruction
/// would free.
const SCRATCH_TAG: c_int = 1;

/// A new heap that `mi_heap_destroy` may free at once (mimalloc 2's
/// `allow_destroy`).
fn new_heap() -> *mut mi_heap_t {
    unsafe { mi_heap_new_ex(SCRATCH_TAG, true, 0) }
}

thread_local! {
    /// The heap new allocations of this thread go to, or null for the
    /// thread's default heap. Set only inside [`in_scratch`].
    static TARGET: Cell<*mut mi_heap_t> = const { Cell::new(ptr::null_mut()) };
    /// The scratch heap of the session open on this thread, or null.
    static SESSION: Cell<*mut mi_heap_t> = const { Cell::new(ptr::null_mut()) };
}

/// The global allocator: mimalloc, with allocations inside [`in_scratch`]
/// going to the session's scratch heap.
pub struct Allocator;

fn target() -> *mut mi_heap_t {
    // `try_with`: a thread being torn down still allocates normally.
    TARGET.try_with(Cell::get).unwrap_or(ptr::null_mut())
}

unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let heap = target();
        if heap.is_null() {
            unsafe { MiMalloc.alloc(layout) }
        } else {
            unsafe { mi_heap_malloc_aligned(heap, layout.size(), layout.align()).cast() }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let heap = target();
        if heap.is_null() {
            unsafe { MiMalloc.alloc_zeroed(layout) }
        } else {
            unsafe { mi_heap_zalloc_aligned(heap, layout.size(), layout.align()).cast() }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // `mi_free` frees a block of any heap.
        unsafe { MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let heap = target();
        // A block from outside the scratch heap (a buffer that existed
        // before) must not move into it, or it would be freed with it.
        if !heap.is_null() && unsafe { mi_heap_contains_block(heap, ptr.cast()) } {
            unsafe { mi_heap_realloc_aligned(heap, ptr.cast(), new_size, layout.align()).cast() }
        } else {
            unsafe { MiMalloc.realloc(ptr, layout, new_size) }
        }
    }
}

/// Whether [`Allocator`] is the global allocator: an allocation made with
/// a scratch heap as the target lands in it only then. Asked once.
fn installed() -> bool {
    static STATE: AtomicU8 = AtomicU8::new(0);
    match STATE.load(Ordering::Relaxed) {
        1 => return true,
        2 => return false,
        _ => {}
    }
    let yes = unsafe {
        let heap = new_heap();
        TARGET.set(heap);
        let probe = Box::new(0u64);
        TARGET.set(ptr::null_mut());
        // Safe for any pointer, whichever allocator made it.
        let yes = mi_heap_check_owned(heap, (&*probe as *const u64).cast());
        drop(probe);
        mi_heap_destroy(heap);
        yes
    };
    STATE.store(if yes { 1 } else { 2 }, Ordering::Relaxed);
    yes
}

/// Runs `f` with a scratch heap open on this thread (see the module docs);
/// the heap and everything [`in_scratch`] put in it are freed when `f`
/// returns or unwinds.
pub fn session<R>(f: impl FnOnce() -> R) -> R {
    if !installed() {
        return f();
    }
    struct Close {
        heap: *mut mi_heap_t,
        outer: *mut mi_heap_t,
    }
    impl Drop for Close {
        fn drop(&mut self) {
            SESSION.set(self.outer);
            unsafe { mi_heap_destroy(self.heap) };
        }
    }
    let heap = new_heap();
    if heap.is_null() {
        return f();
    }
    let _close = Close {
        heap,
        outer: SESSION.replace(heap),
    };
    f()
}

/// Runs `g` with its allocations going to the scratch heap of the session
/// open on this thread, if there is one; the flag says whether there was.
/// With `true`, what `g` built must not outlive the session (see the module
/// docs); with `false`, it is ordinary memory.
pub fn in_scratch<R>(g: impl FnOnce() -> R) -> (R, bool) {
    let heap = SESSION.get();
    if heap.is_null() {
        return (g(), false);
    }
    struct Restore(*mut mi_heap_t);
    impl Drop for Restore {
        fn drop(&mut self) {
            TARGET.set(self.0);
        }
    }
    let _restore = Restore(TARGET.replace(heap));
    (g(), true)
}

/// Whether `p` points into the scratch heap of the session open on this
/// thread (any pointer will do). For tests of the contract above: a tree
/// is in the heap, what outlives the session is not.
pub fn in_session_heap<T: ?Sized>(p: *const T) -> bool {
    let heap = SESSION.get();
    !heap.is_null() && unsafe { mi_heap_check_owned(heap, p.cast()) }
}

#[cfg(test)]
#[global_allocator]
static TESTED: Allocator = Allocator;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_in_scratch_builds_goes_to_the_session_heap() {
        assert!(installed());
        let (outside, _) = in_scratch(|| vec![1u8; 100]);
        session(|| {
            let before = Box::new([2u8; 100]);
            let (inside, scratched) = in_scratch(|| vec![3u8; 100]);
            assert!(scratched);
            let after = Box::new([4u8; 100]);
            assert!(in_session_heap(inside.as_ptr()));
            assert!(!in_session_heap(before.as_ptr()));
            assert!(!in_session_heap(after.as_ptr()));
            assert!(!in_session_heap(outside.as_ptr()));
            // The tree's owner is forgotten: the heap frees it.
            std::mem::forget(inside);
        });
        assert!(SESSION.get().is_null());
        assert!(TARGET.get().is_null());
    }

    #[test]
    fn a_buffer_from_before_grows_outside_the_scratch_heap() {
        let mut older: Vec<u64> = Vec::with_capacity(4);
        older.push(1);
        session(|| {
            let (_, scratched) = in_scratch(|| older.extend(0..10_000));
            assert!(scratched);
            assert!(!in_session_heap(older.as_ptr()));
            let (mut young, _) = in_scratch(|| Vec::<u64>::with_capacity(4));
            in_scratch(|| young.extend(0..10_000));
            assert!(in_session_heap(young.as_ptr()));
            std::mem::forget(young);
        });
        assert_eq!(older.len(), 10_001);
    }

    #[test]
    fn without_a_session_in_scratch_allocates_normally() {
        let (v, scratched) = in_scratch(|| vec![0u8; 10]);
        assert!(!scratched);
        drop(v);
    }

    #[test]
    fn a_panic_inside_closes_the_session_and_restores_the_target() {
        let r = std::panic::catch_unwind(|| {
            session(|| {
                in_scratch(|| panic!("in the parser"));
            })
        });
        assert!(r.is_err());
        assert!(SESSION.get().is_null());
        assert!(TARGET.get().is_null());
        let v = vec![0u8; 10];
        drop(v);
    }
}
