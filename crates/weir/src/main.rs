//! The `weir` binary.

/// mimalloc instead of the system allocator: records, output lines and window panes
/// are allocated and freed at a high rate on the task threads, where glibc's malloc
/// costs several times more per call.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    weir::cli::entry::main();
}

/// Runs [`tune_allocator`] as the process starts, before the first allocation (mimalloc
/// fixes its options when it initialises, so a call from `main` would be too late).
#[used]
#[link_section = ".init_array"]
static TUNE_ALLOCATOR: extern "C" fn() = tune_allocator;

/// mimalloc's arenas are committed up front (its default on Linux, where memory is
/// overcommitted: pages still become resident only when touched) with transparent huge
/// pages disabled for the process, and freed memory goes back to the system after
/// mimalloc's default delay of 10 ms.
///
/// - Committing on demand instead made mimalloc `mprotect` every span it handed out
///   and took back (~9,000 calls on the 5M-row batch aggregate, each taking the
///   address space's lock for writing while the other threads fault pages in under
///   it): the batch aggregate took 1.38-1.40 s instead of 1.14-1.21 s (same run).
/// - An eagerly committed arena is madvised `MADV_HUGEPAGE` by mimalloc: 2 MiB pages
///   cut the page faults from ~97,000 to ~4,000 but the kernel's compaction to find
///   them cost 1.3-1.6 s of system time on that job, and resident memory grows in
///   2 MiB steps; hence `PR_SET_THP_DISABLE`. With both, the window job's peak
///   resident memory stays where on-demand commit had it (77-88 MB).
/// - Returning freed memory at once (delay 0) cost the batch aggregate's threads ~9 %
///   of their time in `madvise` calls (with TLB-shootdown interrupts to the other
///   core), 10 ms about half of that.
extern "C" fn tune_allocator() {
    // Position in mimalloc.h's `mi_option_e`, which its Rust bindings do not name.
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: a setter of mimalloc's global options and a prctl of this process, run
    // once before any thread exists. A kernel without PR_SET_THP_DISABLE refuses it,
    // which leaves huge pages as the system configured them: nothing to handle.
    unsafe {
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 10);
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
