//! An S3-compatible server for tests (feature `s3-test-server`): s3s's S3 HTTP API over
//! s3s-fs (buckets are directories under a root directory), with signature-checked
//! credentials, on an ephemeral 127.0.0.1 port. No network beyond loopback.
//!
//! s3s-fs keeps an object as a file and a key prefix as a directory, and answers a HEAD,
//! GET or DELETE of a key that is a directory (an empty one stays behind when its
//! objects are deleted) with an internal error, where S3 says the key does not exist;
//! [`S3Objects`] gives S3's answers there and passes everything else to s3s-fs.
//!
//! The server runs on its own thread and runtime and stops when the [`S3TestServer`] is
//! dropped. [`S3TestServer::options`] are the `s3.*` settings that reach it, and
//! [`S3TestServer::dynamic_properties`] the same as `-D` entries for `weir` processes.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder as ConnBuilder;
use s3s::auth::SimpleAuth;
use s3s::dto::*;
use s3s::service::S3ServiceBuilder;
use s3s::{s3_error, S3Request, S3Response, S3Result, S3};

use crate::options::ObjectStoreOptions;

/// The access key id the server accepts.
pub const ACCESS_KEY: &str = "weir-test-access";
/// The secret key the server accepts.
pub const SECRET_KEY: &str = "weir-test-secret";

/// A running S3 test server.
pub struct S3TestServer {
    address: SocketAddr,
    root: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl S3TestServer {
    /// Starts a server storing under `root` (which must exist) with the given buckets
    /// created.
    pub fn start(root: &Path, buckets: &[&str]) -> std::io::Result<S3TestServer> {
        for bucket in buckets {
            std::fs::create_dir_all(root.join(bucket))?;
        }
        let fs = s3s_fs::FileSystem::new(root).map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        let mut builder = S3ServiceBuilder::new(S3Objects {
            fs,
            root: root.to_path_buf(),
        });
        builder.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
        let service = builder.build();
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("s3-test-server".to_string())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => {
                            tracing::error!("S3 test server cannot listen: {e}");
                            return;
                        }
                    };
                    let http = ConnBuilder::new(TokioExecutor::new());
                    loop {
                        let socket = tokio::select! {
                            accepted = listener.accept() => match accepted {
                                Ok((socket, _)) => socket,
                                Err(e) => {
                                    tracing::warn!("S3 test server: accept failed: {e}");
                                    continue;
                                }
                            },
                            _ = &mut stopped => break,
                        };
                        let connection = http
                            .serve_connection(TokioIo::new(socket), service.clone())
                            .into_owned();
                        tokio::spawn(async move {
                            if let Err(e) = connection.await {
                                tracing::debug!("S3 test server connection: {e}");
                            }
                        });
                    }
                });
            })?;
        Ok(S3TestServer {
            address,
            root: root.to_path_buf(),
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The file s3s-fs keeps object `key` of `bucket` in.
    pub fn object_file(&self, bucket: &str, key: &str) -> PathBuf {
        self.root.join(bucket).join(key)
    }

    /// The `s3.*` options that reach this server (path-style requests, its credentials).
    pub fn options(&self) -> ObjectStoreOptions {
        ObjectStoreOptions {
            s3_endpoint: Some(self.endpoint()),
            s3_access_key: Some(ACCESS_KEY.to_string()),
            s3_secret_key: Some(SECRET_KEY.to_string()),
            s3_path_style_access: Some(true),
            s3_region: Some("us-east-1".to_string()),
        }
    }

    /// [`S3TestServer::options`] as `key=value` entries for `-D`.
    pub fn dynamic_properties(&self) -> Vec<String> {
        vec![
            format!("s3.endpoint={}", self.endpoint()),
            format!("s3.access-key={ACCESS_KEY}"),
            format!("s3.secret-key={SECRET_KEY}"),
            "s3.path.style.access=true".to_string(),
            "s3.region=us-east-1".to_string(),
        ]
    }
}

impl Drop for S3TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            // The server thread may have ended already (it could not listen).
            stop.send(()).ok();
        }
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::warn!("the S3 test server thread panicked");
            }
        }
    }
}

/// s3s-fs with S3's answers for keys that are directories on disk (see the module
/// documentation); only the operations object_store uses are served.
struct S3Objects {
    fs: s3s_fs::FileSystem,
    root: PathBuf,
}

impl S3Objects {
    fn is_directory(&self, bucket: &str, key: &str) -> bool {
        self.root.join(bucket).join(key).is_dir()
    }
}

#[async_trait::async_trait]
impl S3 for S3Objects {
    async fn head_object(&self, req: S3Request<HeadObjectInput>) -> S3Result<S3Response<HeadObjectOutput>> {
        if self.is_directory(&req.input.bucket, &req.input.key) {
            return Err(s3_error!(NoSuchKey));
        }
        self.fs.head_object(req).await
    }

    async fn get_object(&self, req: S3Request<GetObjectInput>) -> S3Result<S3Response<GetObjectOutput>> {
        if self.is_directory(&req.input.bucket, &req.input.key) {
            return Err(s3_error!(NoSuchKey));
        }
        self.fs.get_object(req).await
    }

    async fn delete_object(&self, req: S3Request<DeleteObjectInput>) -> S3Result<S3Response<DeleteObjectOutput>> {
        if self.is_directory(&req.input.bucket, &req.input.key) {
            return Ok(S3Response::new(DeleteObjectOutput::default()));
        }
        self.fs.delete_object(req).await
    }

    async fn delete_objects(&self, req: S3Request<DeleteObjectsInput>) -> S3Result<S3Response<DeleteObjectsOutput>> {
        self.fs.delete_objects(req).await
    }

    async fn put_object(&self, req: S3Request<PutObjectInput>) -> S3Result<S3Response<PutObjectOutput>> {
        self.fs.put_object(req).await
    }

    async fn copy_object(&self, req: S3Request<CopyObjectInput>) -> S3Result<S3Response<CopyObjectOutput>> {
        self.fs.copy_object(req).await
    }

    async fn list_objects_v2(&self, req: S3Request<ListObjectsV2Input>) -> S3Result<S3Response<ListObjectsV2Output>> {
        self.fs.list_objects_v2(req).await
    }

    async fn head_bucket(&self, req: S3Request<HeadBucketInput>) -> S3Result<S3Response<HeadBucketOutput>> {
        self.fs.head_bucket(req).await
    }
}
