//! The storage operations over the real S3 HTTP protocol: object_store's S3 client
//! against an in-process S3-compatible server (s3s over s3s-fs) on 127.0.0.1, with
//! signed requests, conditional puts, server-side copies and batched deletes.

use weir_filesystem::test_server::S3TestServer;
use weir_filesystem::{
    build_store, delete_all, get, list, move_file, put, put_new, register_store, stat, Entry, FsError, Location,
    ObjectStoreOptions,
};

/// A server with `bucket`, whose store serves `s3://<bucket>` in this process.
fn serve(bucket: &str) -> (S3TestServer, tempfile::TempDir) {
    let root = tempfile::tempdir().unwrap();
    let server = S3TestServer::start(root.path(), &[bucket]).unwrap();
    register_with(bucket, &server.options());
    (server, root)
}

fn register_with(bucket: &str, options: &ObjectStoreOptions) {
    let url = format!("s3://{bucket}");
    let Ok(Location::Object(location)) = Location::parse(&url) else {
        panic!("{url} is an object location");
    };
    register_store(&url, build_store(&location, options, Vec::new()).unwrap());
}

#[test]
fn objects_written_over_s3_are_complete_files_on_the_server_and_read_back() {
    let (server, _root) = serve("put-get");
    let url = "s3://put-get/chk/job/chk-1/v-0-0";
    let state: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    put(url, state.clone()).unwrap();
    assert_eq!(get(url).unwrap(), state);
    assert_eq!(
        std::fs::read(server.object_file("put-get", "chk/job/chk-1/v-0-0")).unwrap(),
        state
    );
    assert_eq!(
        get("s3://put-get/chk/job/chk-1/missing"),
        Err(FsError::NotFound {
            location: "s3://put-get/chk/job/chk-1/missing".to_string()
        })
    );
}

#[test]
fn a_conditional_create_over_s3_never_replaces_metadata() {
    let (_server, _root) = serve("put-new");
    let metadata = "s3://put-new/chk/job/chk-2/_metadata";
    put_new(metadata, b"first".to_vec()).unwrap();
    assert_eq!(
        put_new(metadata, b"second".to_vec()),
        Err(FsError::AlreadyExists {
            location: metadata.to_string()
        })
    );
    assert_eq!(get(metadata).unwrap(), b"first");
}

#[test]
fn listing_moving_and_deleting_a_checkpoint_prefix_over_s3() {
    let (_server, _root) = serve("prefixes");
    for key in ["job/chk-1/_metadata", "job/chk-1/v-0-0", "job/chk-12/_metadata"] {
        put(&format!("s3://prefixes/{key}"), key.as_bytes().to_vec()).unwrap();
    }
    assert_eq!(stat("s3://prefixes/job/chk-1"), Ok(Entry::Directory));
    assert_eq!(stat("s3://prefixes/job/chk-1/_metadata"), Ok(Entry::File));
    assert_eq!(stat("s3://prefixes/job/chk-2"), Ok(Entry::Missing));
    assert_eq!(
        list("s3://prefixes/job/chk-1").unwrap(),
        vec!["s3://prefixes/job/chk-1/_metadata", "s3://prefixes/job/chk-1/v-0-0"]
    );
    move_file("s3://prefixes/job/chk-1/v-0-0", "s3://prefixes/sp/savepoint-1/v-0-0").unwrap();
    assert_eq!(get("s3://prefixes/sp/savepoint-1/v-0-0").unwrap(), b"job/chk-1/v-0-0");
    assert_eq!(stat("s3://prefixes/job/chk-1/v-0-0"), Ok(Entry::Missing));
    delete_all("s3://prefixes/job/chk-1").unwrap();
    delete_all("s3://prefixes/job/chk-1").unwrap();
    assert_eq!(
        list("s3://prefixes").unwrap(),
        vec![
            "s3://prefixes/job/chk-12/_metadata",
            "s3://prefixes/sp/savepoint-1/v-0-0"
        ]
    );
}

#[test]
fn a_wrong_secret_key_is_an_error_naming_the_url() {
    let root = tempfile::tempdir().unwrap();
    let server = S3TestServer::start(root.path(), &["denied"]).unwrap();
    let options = ObjectStoreOptions {
        s3_secret_key: Some("not-the-secret".to_string()),
        ..server.options()
    };
    register_with("denied", &options);
    let err = put("s3://denied/chk/x", vec![1]).unwrap_err();
    assert!(
        matches!(&err, FsError::Io { location, .. } if location == "s3://denied/chk/x"),
        "{err}"
    );
    assert!(!server.object_file("denied", "chk/x").exists());
}

#[test]
fn the_process_options_reach_a_bucket_that_nobody_registered() {
    let root = tempfile::tempdir().unwrap();
    let server = S3TestServer::start(root.path(), &["from-options"]).unwrap();
    weir_filesystem::initialize(server.options());
    put("s3://from-options/x", b"via s3.* options".to_vec()).unwrap();
    assert_eq!(
        std::fs::read(server.object_file("from-options", "x")).unwrap(),
        b"via s3.* options"
    );
}
