//! Process-wide settings, in a test binary of their own (one test, run in
//! order): a region too small for the build, and the region turned off.

use unsnarl_alloc::{ScanAllocator, in_region, in_this_threads_region};

#[global_allocator]
static GLOBAL: ScanAllocator = ScanAllocator;

#[test]
fn overflow_and_disabled() {
    // SAFETY: `ScanAllocator` is this test binary's global allocator.
    unsafe { unsnarl_alloc::enable() };
    unsnarl_alloc::set_region_bytes(64 << 10);
    std::thread::spawn(|| {
        // A build larger than the region continues on the heap, and is
        // then freed block by block (run under a checker, a leak shows).
        // SAFETY: the build keeps nothing but its result.
        let (first_in, last_in, sum) = unsafe {
            in_region(
                || (0..20_000u64).map(|i| vec![i; 4]).collect::<Vec<_>>(),
                |v| {
                    (
                        in_this_threads_region(v[0].as_ptr().cast()),
                        in_this_threads_region(v[19_999].as_ptr().cast()),
                        v.iter().map(|x| x.iter().sum::<u64>()).sum::<u64>(),
                    )
                },
            )
        };
        assert!(first_in, "the first blocks fit");
        assert!(!last_in, "the last ones did not");
        assert_eq!(sum, 4 * (0..20_000u64).sum::<u64>());
        // The next build starts over in the region.
        // SAFETY: as above.
        assert!(unsafe { in_region(|| vec![1u8; 100], |v| in_this_threads_region(v.as_ptr())) });
    })
    .join()
    .unwrap();

    unsnarl_alloc::disable();
    // SAFETY: as above.
    let there = unsafe { in_region(|| vec![1u8; 100], |v| in_this_threads_region(v.as_ptr())) };
    assert!(!there, "disabled: builds use the heap");
}
