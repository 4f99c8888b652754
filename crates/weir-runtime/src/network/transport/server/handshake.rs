//! The server side of a data connection's handshake: TLS (when on) and the hello, both
//! within `taskmanager.data.handshake-timeout`, then the socket set up for serving.
//!
//! A peer that sends no hello in time, a wrong magic number or another protocol
//! version gets no connection: the version mismatch is answered with an
//! `ErrorResponse` naming both versions, everything else is just closed.

use super::super::protocol::{self, ControlFrame, ErrorCode, HELLO_LEN};
use super::super::stream::{self, Halves};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

/// Shakes hands with the client on `stream` within `timeout`; on success the socket's
/// read timeout is `idle` and its halves are returned. Failures are logged, naming
/// `peer`. `establish` is asked once the client's hello is read and before it is
/// answered, so that a client holding the answer holds its place among the served
/// connections; when it says no, the connection is closed unanswered.
pub(super) fn shake_hands(
    stream: &TcpStream,
    tls: Option<&Arc<rustls::ServerConfig>>,
    timeout: Duration,
    idle: Duration,
    peer: &str,
    establish: impl FnOnce() -> bool,
) -> Option<Halves> {
    let log_failure = |e: &std::io::Error| {
        if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
            tracing::debug!(peer = %peer, "data connection sent no hello in time");
        } else if matches!(
            e.kind(),
            ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted
        ) {
            // Gone before its hello: the peer hung up, or the gate closed the connection
            // to make room (reported by the server's rate-limited warning).
            tracing::debug!(peer = %peer, error = %e, "data connection closed before its hello");
        } else {
            tracing::warn!(peer = %peer, error = %e, "data connection closed during the handshake");
        }
    };
    let Halves { mut reader, mut writer } = match stream::accept(stream, tls, timeout) {
        Ok(halves) => halves,
        Err(e) => {
            log_failure(&e);
            return None;
        }
    };
    let mut hello = [0u8; HELLO_LEN];
    if let Err(e) = reader.read_exact(&mut hello) {
        log_failure(&e);
        return None;
    }
    let (magic, version) = protocol::parse_hello(&hello);
    if magic != protocol::MAGIC {
        tracing::warn!(
            peer = %peer,
            magic = format_args!("{magic:#010x}"),
            "rejecting data connection: bad magic (not a Weir data client)"
        );
        return None;
    }
    if !establish() {
        return None;
    }
    if let Err(e) = writer.write_all(&protocol::hello()) {
        tracing::warn!(peer = %peer, error = %e, "data connection closed during the handshake");
        return None;
    }
    if version != protocol::PROTOCOL_VERSION {
        let message = format!(
            "protocol version mismatch: the data server speaks version {}, the client {version}",
            protocol::PROTOCOL_VERSION
        );
        tracing::warn!(peer = %peer, "rejecting data connection: {message}");
        // The refusal is already logged; telling the peer why is a courtesy that a peer
        // gone already does not need.
        if let Err(e) = protocol::write_control(
            &mut writer,
            &ControlFrame::ErrorResponse {
                channel: None,
                code: ErrorCode::VersionMismatch,
                message,
            },
        ) {
            tracing::debug!(peer = %peer, error = %e, "could not tell the peer about the version mismatch");
        }
        return None;
    }
    let prepared = stream
        .set_read_timeout(Some(idle))
        .and_then(|()| stream.set_write_timeout(None))
        .and_then(|()| stream.set_nodelay(true));
    if let Err(e) = prepared {
        tracing::warn!(peer = %peer, error = %e, "cannot set up a data connection");
        return None;
    }
    Some(Halves { reader, writer })
}
