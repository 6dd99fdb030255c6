//! Counting the gateway's heap allocations: a global allocator that counts every allocation
//! made on a thread not marked as the load generator's or the upstream's.
//!
//! The harness runs the gateway in this process (so that its allocations can be counted at
//! all); the threads of the load generator's runtime mark themselves at their start, and every
//! other thread (the gateway runtime's workers and blocking threads, an audit writer thread
//! the gateway starts itself) is counted.

// `GlobalAlloc` is an unsafe trait; this bench target is the only place in the workspace that
// implements it, and it only forwards to the system allocator.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Allocations (`alloc`, `alloc_zeroed` and `realloc` calls) on counted threads so far.
static COUNTED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    // `const`: reading it allocates nothing and registers no destructor, so the allocator can.
    static NOT_COUNTED: Cell<bool> = const { Cell::new(false) };
}

/// The system allocator, counting.
pub(crate) struct CountingAllocator;

/// Stops counting the allocations of the calling thread (the load generator's and the
/// upstream's threads call it at their start).
pub(crate) fn do_not_count_this_thread() {
    NOT_COUNTED.with(|flag| flag.set(true));
}

/// Allocations counted so far.
pub(crate) fn counted() -> u64 {
    COUNTED.load(Ordering::Relaxed)
}

fn count() {
    // A thread being torn down has no flag left: it is not counted.
    if NOT_COUNTED.try_with(|flag| !flag.get()).unwrap_or(false) {
        COUNTED.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract; counting touches no memory the allocator hands out.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract for `alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}
