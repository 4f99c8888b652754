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

/// mimalloc commits arena memory up front; committing on demand keeps the window job's
/// peak resident memory near where the system allocator had it. Freed memory goes back
/// to the system after mimalloc's default delay of 10 ms: returning it at once (delay 0)
/// cost the batch aggregate's threads ~9 % of their time in `madvise` calls (with
/// TLB-shootdown interrupts to the other core), 10 ms about half of that, for ~10 MB
/// more peak memory on the window job (60 instead of 50 MB).
extern "C" fn tune_allocator() {
    // Positions in mimalloc.h's `mi_option_e`, which its Rust bindings do not name.
    const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: setters of mimalloc's global options, run once before any thread exists.
    unsafe {
        libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 10);
    }
}
