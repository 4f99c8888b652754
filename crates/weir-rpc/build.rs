//! Compiles `proto/weir.proto` with the protoc binary vendored by
//! `protoc-bin-vendored`, so no system `protoc` is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os("PROTOC").is_none() {
        let protoc = protoc_bin_vendored::protoc_bin_path()?;
        // SAFETY: build scripts are single-threaded; nothing else reads the environment concurrently.
        unsafe { std::env::set_var("PROTOC", protoc) };
    }
    println!("cargo:rerun-if-changed=proto/weir.proto");
    tonic_prost_build::configure().compile_protos(&["proto/weir.proto"], &["proto"])?;
    Ok(())
}
