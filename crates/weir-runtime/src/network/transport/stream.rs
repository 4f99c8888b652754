//! The byte stream under a data connection: plain TCP, or TLS (rustls) when the data
//! plane has [`DataPlaneTls`]. Either way a connection is split into a reading half
//! (the connection's reader thread) and a writing half (its writer thread), plus the
//! socket for timeouts and shutdown.
//!
//! TLS: the handshake runs on the accepting/connecting thread before the split, under
//! the handshake timeout; a peer without a certificate signed by the trust cert fails
//! it. After the split both halves share the rustls connection under a mutex held only
//! while encrypting or decrypting, never across a socket read; socket writes are
//! ordered by a second mutex so records leave in the order they were sealed. Servers
//! send no session tickets, so after the handshake only application data, alerts and
//! (rarely) key updates travel; a key update the reader must answer is written by the
//! reader under the write mutex.

use crate::network::buffer::lock;
use rustls::{ClientConfig, ClientConnection, Connection, ServerConfig, ServerConnection};
use std::fmt;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Mutual TLS for the data plane: the data server's configuration (requires a trusted
/// client certificate) and the client's (presents this process's certificate).
#[derive(Clone)]
pub struct DataPlaneTls {
    /// The data server's configuration.
    pub server: Arc<ServerConfig>,
    /// The data client's configuration.
    pub client: Arc<ClientConfig>,
}

impl fmt::Debug for DataPlaneTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DataPlaneTls { mutual TLS }")
    }
}

impl PartialEq for DataPlaneTls {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.server, &other.server) && Arc::ptr_eq(&self.client, &other.client)
    }
}

impl Eq for DataPlaneTls {}

/// A connection split for its two threads.
pub(crate) struct Halves {
    /// The reading half.
    pub(crate) reader: Box<dyn Read + Send>,
    /// The writing half (writes are sent when written; `flush` has nothing to do).
    pub(crate) writer: Box<dyn Write + Send>,
}

/// Splits a plaintext connection.
fn plain(stream: &TcpStream) -> io::Result<Halves> {
    Ok(Halves {
        reader: Box::new(stream.try_clone()?),
        writer: Box::new(stream.try_clone()?),
    })
}

/// The server side of a new connection: the TLS handshake (when `tls`) within
/// `timeout`, then the halves. The socket's read timeout is left at `timeout`.
pub(crate) fn accept(stream: &TcpStream, tls: Option<&Arc<ServerConfig>>, timeout: Duration) -> io::Result<Halves> {
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let Some(config) = tls else {
        return plain(stream);
    };
    let conn = ServerConnection::new(config.clone()).map_err(io::Error::other)?;
    split(stream, handshake(stream, conn.into())?)
}

/// The client side of a new connection to `address` (`host:port`; the server's
/// certificate must be valid for the host): the TLS handshake (when
/// `tls`) within `timeout`, then the halves. The socket's read timeout is left at
/// `timeout`.
pub(crate) fn connect(
    stream: &TcpStream,
    tls: Option<&Arc<ClientConfig>>,
    address: &str,
    timeout: Duration,
) -> io::Result<Halves> {
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let Some(config) = tls else {
        return plain(stream);
    };
    let name = weir_security::server_name(address).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let conn = ClientConnection::new(config.clone(), name).map_err(io::Error::other)?;
    split(stream, handshake(stream, conn.into())?)
}

fn handshake(stream: &TcpStream, mut conn: Connection) -> io::Result<Connection> {
    let mut socket = stream.try_clone()?;
    while conn.is_handshaking() {
        conn.complete_io(&mut socket)?;
    }
    while conn.wants_write() {
        conn.write_tls(&mut socket)?;
    }
    Ok(conn)
}

fn split(stream: &TcpStream, conn: Connection) -> io::Result<Halves> {
    let shared = Arc::new(TlsShared {
        conn: Mutex::new(conn),
        socket_out: Mutex::new(stream.try_clone()?),
    });
    Ok(Halves {
        reader: Box::new(TlsReader {
            shared: shared.clone(),
            socket: stream.try_clone()?,
            raw: vec![0; 64 * 1024],
            pos: 0,
            len: 0,
        }),
        writer: Box::new(TlsWriter {
            shared,
            sealed: Vec::with_capacity(64 * 1024),
        }),
    })
}

/// The rustls connection both halves use.
struct TlsShared {
    conn: Mutex<Connection>,
    /// The socket's writing end; held while sealed records are written.
    socket_out: Mutex<TcpStream>,
}

impl TlsShared {
    /// Seals and sends whatever rustls has to send, in order.
    fn send_pending(&self, sealed: &mut Vec<u8>) -> io::Result<()> {
        let mut socket = lock(&self.socket_out);
        sealed.clear();
        {
            let mut conn = lock(&self.conn);
            while conn.wants_write() {
                conn.write_tls(sealed)?;
            }
        }
        socket.write_all(sealed)
    }
}

struct TlsReader {
    shared: Arc<TlsShared>,
    socket: TcpStream,
    /// Received TLS bytes not yet given to rustls: `raw[pos..len]`.
    raw: Vec<u8>,
    pos: usize,
    len: usize,
}

impl Read for TlsReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            let mut conn = lock(&self.shared.conn);
            match conn.reader().read(out) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            if self.pos < self.len {
                let n = conn.read_tls(&mut &self.raw[self.pos..self.len])?;
                if n == 0 {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, "TLS layer took no bytes"));
                }
                self.pos += n;
                conn.process_new_packets()
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                let answer = conn.wants_write();
                drop(conn);
                if answer {
                    self.shared.send_pending(&mut Vec::new())?;
                }
                continue;
            }
            drop(conn);
            let n = self.socket.read(&mut self.raw)?;
            if n == 0 {
                return Ok(0);
            }
            (self.pos, self.len) = (0, n);
        }
    }
}

struct TlsWriter {
    shared: Arc<TlsShared>,
    sealed: Vec<u8>,
}

impl Write for TlsWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let mut socket = lock(&self.shared.socket_out);
        self.sealed.clear();
        let n = {
            let mut conn = lock(&self.shared.conn);
            let n = conn.writer().write(data)?;
            while conn.wants_write() {
                conn.write_tls(&mut self.sealed)?;
            }
            n
        };
        socket.write_all(&self.sealed)?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
