//! The region as the binary uses it: installed as the global allocator and
//! enabled. Every test here leaves the region enabled; the ones that change
//! the process-wide settings live in `settings.rs`.

use std::hint::black_box;
use unsnarl_alloc::{ScanAllocator, in_region, in_this_threads_region};

#[global_allocator]
static GLOBAL: ScanAllocator = ScanAllocator;

fn enabled() {
    // SAFETY: `ScanAllocator` is this test binary's global allocator.
    unsafe { unsnarl_alloc::enable() };
}

fn words(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("word-{i}")).collect()
}

#[test]
fn a_build_lives_in_the_region_and_reads_whole() {
    enabled();
    // SAFETY: the build keeps nothing but its result.
    let (joined, built_there, read_there) = unsafe {
        in_region(
            || words(5000),
            |w| {
                let joined = w.join(",");
                (
                    joined.clone(),
                    in_this_threads_region(w.as_ptr().cast())
                        && in_this_threads_region(w[4999].as_ptr()),
                    in_this_threads_region(joined.as_ptr()),
                )
            },
        )
    };
    assert_eq!(joined, words(5000).join(","));
    assert!(built_there, "the build's blocks come from the region");
    assert!(!read_there, "what `read` allocates is ordinary heap");
    assert!(!in_this_threads_region(joined.as_ptr()));
}

#[test]
fn the_next_build_starts_where_the_last_one_did() {
    enabled();
    let first = |n| {
        // SAFETY: as above.
        unsafe { in_region(|| words(n), |w| w.as_ptr() as usize) }
    };
    let a = first(100);
    let b = first(3000);
    let c = first(100);
    assert_eq!(a, b);
    assert_eq!(a, c);
}

#[test]
fn zeroed_blocks_are_zero_though_the_region_is_reused() {
    enabled();
    // SAFETY: as above.
    unsafe {
        in_region(
            || vec![0xA5u8; 1 << 16],
            |v| assert!(v.iter().all(|b| *b == 0xA5)),
        )
    };
    let (zero, there) =
        // SAFETY: as above.
        unsafe { in_region(|| vec![0u8; 1 << 16], |v| (v.iter().all(|b| *b == 0), in_this_threads_region(v.as_ptr()))) };
    assert!(there);
    assert!(zero, "calloc'd memory must read as zero");
}

#[test]
fn blocks_grow_in_place_or_by_copy_without_losing_bytes() {
    enabled();
    // SAFETY: as above.
    let ok = unsafe {
        in_region(
            || {
                // `a` grows while it is the last block (in place), then
                // while others follow it (a copy).
                let mut a: Vec<u64> = Vec::new();
                let mut others = Vec::new();
                for i in 0..20_000u64 {
                    a.push(i);
                    if i % 1000 == 0 {
                        others.push(vec![i; 10]);
                    }
                }
                a.shrink_to_fit();
                (a, others)
            },
            |(a, others)| {
                a.iter().enumerate().all(|(i, v)| *v == i as u64)
                    && others
                        .iter()
                        .enumerate()
                        .all(|(k, o)| o == &vec![k as u64 * 1000; 10])
            },
        )
    };
    assert!(ok);
}

#[test]
fn a_shrink_keeps_the_block_where_it_is() {
    enabled();
    // SAFETY: as above.
    let (kept, ok, next_is_after) = unsafe {
        in_region(
            || {
                let mut a: Vec<u64> = Vec::with_capacity(4096);
                a.extend(0..1000);
                let before = a.as_ptr() as usize;
                // Another block follows `a`, so `a` is not the last one.
                let b = vec![9u8; 64];
                a.shrink_to_fit();
                (before, a, b)
            },
            |(before, a, b)| {
                (
                    *before == a.as_ptr() as usize,
                    a.iter().copied().eq(0..1000)
                        && a.capacity() == 1000
                        && b.iter().all(|x| *x == 9),
                    (b.as_ptr() as usize) > a.as_ptr() as usize,
                )
            },
        )
    };
    assert!(kept, "a shrunk region block is not copied elsewhere");
    assert!(ok);
    assert!(next_is_after);
}

#[test]
fn a_heap_block_grown_inside_a_build_stays_on_the_heap() {
    enabled();
    let mut outer: Vec<u32> = Vec::with_capacity(1);
    outer.push(7);
    // SAFETY: `outer` existed before the build: growing it is a heap realloc.
    unsafe { in_region(|| outer.extend(0..10_000), |_| ()) };
    assert!(!in_this_threads_region(outer.as_ptr().cast()));
    // A later build reuses the region; `outer` must be untouched by it.
    // SAFETY: as above.
    unsafe { in_region(|| vec![u32::MAX; 20_000], |v| black_box(v.len())) };
    assert_eq!(outer[0], 7);
    assert!(outer[1..].iter().copied().eq(0..10_000));
}

#[test]
fn a_panicking_build_leaves_a_readable_payload_and_a_usable_region() {
    enabled();
    let caught = std::panic::catch_unwind(|| {
        // SAFETY: as above.
        unsafe {
            in_region(
                || -> Vec<String> {
                    let w = words(10);
                    panic!("build failed after {} words", w.len())
                },
                |_| (),
            )
        }
    });
    let payload = caught.expect_err("the build panicked");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .expect("a formatted message");
    drop(payload);
    assert_eq!(message, "build failed after 10 words");
    // SAFETY: as above.
    let n = unsafe { in_region(|| words(50), |w| w.len()) };
    assert_eq!(n, 50);
}

#[test]
fn a_build_inside_a_build_uses_the_outer_one_and_does_not_reset_it() {
    enabled();
    // SAFETY: as above; the inner build's result is part of the outer one.
    let ok = unsafe {
        in_region(
            || {
                let before = words(100);
                let inner = in_region(|| words(100), |w| w.concat());
                (before, inner)
            },
            |(before, inner)| *before == words(100) && *inner == words(100).concat(),
        )
    };
    assert!(ok);
}

#[test]
fn a_build_inside_a_read_leaves_the_outer_result_alone() {
    enabled();
    // SAFETY: as above.
    let (inner_there, outer_intact) = unsafe {
        in_region(
            || words(2000),
            |outer| {
                let inner = in_region(
                    || vec![u64::MAX; 50_000],
                    |v| in_this_threads_region(v.as_ptr().cast()),
                );
                (inner, *outer == words(2000))
            },
        )
    };
    assert!(!inner_there, "the inner build used the heap");
    assert!(outer_intact, "the outer build's region was not reset");
}

#[test]
fn threads_have_regions_of_their_own() {
    enabled();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let mut total = 0;
                for round in 0..50 {
                    let n = 100 + t * 10 + round;
                    // SAFETY: as above.
                    total += unsafe {
                        in_region(
                            || words(n),
                            |w| {
                                assert!(in_this_threads_region(w.as_ptr().cast()));
                                assert_eq!(
                                    w.last().map(String::as_str),
                                    Some(&*format!("word-{}", n - 1))
                                );
                                w.len()
                            },
                        )
                    };
                }
                total
            })
        })
        .collect();
    let totals: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(
        totals,
        (0..4)
            .map(|t| (0..50).map(|r| 100 + t * 10 + r).sum())
            .collect::<Vec<usize>>()
    );
}

#[test]
fn a_large_build_is_trimmed_back_and_the_region_still_works() {
    enabled();
    // Well above what the region keeps between builds.
    // SAFETY: as above.
    let n = unsafe {
        in_region(
            || vec![1u8; 64 << 20],
            |v| v.iter().map(|b| *b as usize).sum::<usize>(),
        )
    };
    assert_eq!(n, 64 << 20);
    // The pages past the kept part were given back: they read as zero when
    // a calloc reaches them again, and ordinary builds still work.
    // SAFETY: as above.
    let zero = unsafe { in_region(|| vec![0u8; 64 << 20], |v| v.iter().all(|b| *b == 0)) };
    assert!(zero);
}
