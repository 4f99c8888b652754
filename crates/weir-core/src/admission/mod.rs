//! Admission of a server's connections, so that outsiders cannot take every place.
//!
//! [`Admission`] is the plain state machine: it takes events (a connection accepted
//! from a peer address, its handshake done, it closed) with the time they happened and
//! returns decisions (admit, refuse, close these others). [`Gate`] shares one between
//! the threads or tasks of a server and keeps, per waiting connection, the handle that
//! closes it; [`Ticket`] is one admitted connection's place. Sockets stay at the edges.
//!
//! The rules, for limits `max_connections`, `max_per_peer`, `max_pending` and
//! `handshake_timeout`:
//! - a new connection is *pending* until its handshake is done (the TLS handshake, the
//!   data protocol's hello, the first HTTP request's headers), then *established*;
//! - pending connections sit in their own pool of at most `max_pending`, each with a
//!   deadline `handshake_timeout` after it was admitted; a pending connection past its
//!   deadline is closed at the next admission and may not become established;
//! - established connections are at most `max_connections`: a new connection while
//!   they are full is refused, and so is a handshake that finishes while they are full;
//! - one peer address has at most `max_per_peer` connections, pending and established
//!   together; a new connection from a peer at its limit closes that peer's oldest
//!   pending connection, or is refused when the peer has none pending;
//! - a new connection while the pending pool is full closes the oldest pending
//!   connection: connections that never speak cannot keep out peers that do;
//! - refusals and closed pending connections are reported at most once per
//!   [`WARN_INTERVAL`], with their counts since the previous report ([`Warning`]).
//!
//! Invariants: `pending + established` is the number of connections whose place is
//! taken; a connection id is in at most one of the two pools; ids are never reused, so
//! an event about a connection already closed changes nothing.

mod gate;
mod refusal_log;
mod state;
#[cfg(test)]
mod tests;

pub use gate::{Gate, Ticket};
pub use refusal_log::{Warning, WARN_INTERVAL};
pub use state::Admission;

use std::net::IpAddr;
use std::time::Duration;

/// The bounds of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Established connections at once.
    pub max_connections: usize,
    /// Connections from one peer address at once, pending and established.
    pub max_per_peer: usize,
    /// Connections waiting for their handshake at once.
    pub max_pending: usize,
    /// How long a connection may stay pending.
    pub handshake_timeout: Duration,
}

impl Limits {
    /// Limits of `max_connections` established connections, `max_per_peer` per peer,
    /// and as many pending connections as established ones, each bound at least 1.
    pub fn new(max_connections: usize, max_per_peer: usize, handshake_timeout: Duration) -> Self {
        Self {
            max_connections: max_connections.max(1),
            max_per_peer: max_per_peer.max(1),
            max_pending: max_connections.max(1),
            handshake_timeout,
        }
    }
}

/// One admitted connection, numbered in the order of admission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub u64);

/// Why a connection was not admitted, or may not become established.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The established connections are at their limit.
    #[error("the server has its limit of {limit} established connections")]
    ServerFull {
        /// The limit.
        limit: usize,
    },
    /// The peer has its limit of connections and none of them is pending.
    #[error("{peer} has its limit of {limit} connections")]
    PeerFull {
        /// The peer's address.
        peer: IpAddr,
        /// The limit per peer.
        limit: usize,
    },
    /// The handshake finished after the connection's deadline.
    #[error("the handshake took longer than {timeout:?}")]
    HandshakeTooLate {
        /// The handshake timeout.
        timeout: Duration,
    },
    /// The connection was closed while pending, to make room or at its deadline.
    #[error("the connection was closed while it waited for its handshake")]
    Evicted,
}

/// What an event decided: its result, the pending connections to close now, and a
/// warning to log when one is due.
#[derive(Debug, PartialEq, Eq)]
pub struct Decision<T, C = ConnId> {
    /// The new connection's id (admission) or `()` (handshake done), or why not.
    pub result: Result<T, Refusal>,
    /// Pending connections closed by this decision (evicted or past their deadline).
    pub close: Vec<C>,
    /// Refusals and closings to report now, if a report is due.
    pub warning: Option<Warning>,
}
