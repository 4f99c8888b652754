//! The `weir` binary.

fn main() {
    weir::cli::entry::main();
}
