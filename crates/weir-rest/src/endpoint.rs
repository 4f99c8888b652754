//! A REST server endpoint running on a tokio runtime (Flink's `RestServerEndpoint`):
//! [`serve`] and [`serve_with_shutdown`] on a listener, and [`RestServerHandle`], which
//! binds, serves and stops. The routes are [`handlers`](crate::handlers)'; the socket
//! side (TLS, connection bounds, header timeouts) is [`server`](crate::server)'s.

use crate::backend::RestBackend;
use crate::handlers::{router, router_with_origin};
use crate::server::{serve_app, RestServerOptions};
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Serves [`router()`] on `listener` until the listener fails.
pub async fn serve(listener: TcpListener, backend: Arc<dyn RestBackend>) -> io::Result<()> {
    serve_app(
        listener,
        router(backend),
        RestServerOptions::default(),
        std::future::pending(),
    )
    .await
}

/// Serves [`router()`] on `listener` until `signal` completes, then stops accepting
/// connections and returns once the open ones are done.
pub async fn serve_with_shutdown<F>(listener: TcpListener, backend: Arc<dyn RestBackend>, signal: F) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    serve_app(listener, router(backend), RestServerOptions::default(), signal).await
}

/// A REST server running on the current tokio runtime; dropping the handle asks the
/// server to stop (without waiting), [`RestServerHandle::shutdown`] stops it and waits.
#[derive(Debug)]
pub struct RestServerHandle {
    local_addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl RestServerHandle {
    /// Binds `addr` (e.g. `127.0.0.1:0` for an ephemeral port) and serves `backend`
    /// on a task of the current tokio runtime. Must be called within a runtime.
    pub async fn start(addr: impl ToSocketAddrs, backend: Arc<dyn RestBackend>) -> io::Result<Self> {
        Self::start_with(addr, backend, RestServerOptions::default()).await
    }

    /// [`start`](Self::start) with TLS, CORS and connection bounds of `options`.
    pub async fn start_with(
        addr: impl ToSocketAddrs,
        backend: Arc<dyn RestBackend>,
        options: RestServerOptions,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let (tx, rx) = oneshot::channel::<()>();
        let signal = async move {
            // Either an explicit shutdown or a dropped handle stops the server.
            let _ = rx.await;
        };
        let app = router_with_origin(backend, options.allow_origin.clone());
        let task = tokio::spawn(serve_app(listener, app, options, signal));
        Ok(Self {
            local_addr,
            shutdown: Some(tx),
            task: Some(task),
        })
    }

    /// The bound address (with the actual port when started on port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting connections, waits for the open ones to finish and returns the
    /// server's result.
    pub async fn shutdown(mut self) -> io::Result<()> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.task.take() {
            Some(task) => task.await.map_err(io::Error::other)?,
            None => Ok(()),
        }
    }
}

impl Drop for RestServerHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

// ---------------------------------------------------------------------------------
// Handlers
