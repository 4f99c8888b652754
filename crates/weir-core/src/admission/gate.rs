//! [`Gate`]: one server's [`Admission`] shared by its accept loop and connections,
//! with the handle that closes each pending connection; [`Ticket`]: one connection's
//! place, freed when it is dropped.
//!
//! Invariant: a closer is kept exactly while its connection is pending; the closers of
//! evicted connections are handed to the caller, who closes them outside the lock.

use super::{Admission, ConnId, Decision, Limits};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// The admission state of one server; `C` closes a pending connection (a socket
/// handle, a cancellation signal).
#[derive(Debug)]
pub struct Gate<C> {
    inner: Mutex<Inner<C>>,
}

#[derive(Debug)]
struct Inner<C> {
    admission: Admission,
    closers: HashMap<ConnId, C>,
}

/// An admitted connection's place: pending until [`Ticket::establish`] succeeds,
/// released when dropped.
#[derive(Debug)]
pub struct Ticket<C> {
    gate: Arc<Gate<C>>,
    id: ConnId,
    established: AtomicBool,
}

impl<C> Gate<C> {
    /// A gate with no connection, under `limits`.
    pub fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            inner: Mutex::new(Inner {
                admission: Admission::new(limits),
                closers: HashMap::new(),
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner<C>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.lock().admission.limits()
    }

    /// Pending and established connections.
    pub fn counts(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.admission.pending(), inner.admission.established())
    }

    /// A connection from `peer`, which `closer` closes, was accepted at `now`: its
    /// ticket or the refusal, and the closers of the pending connections to close now.
    pub fn admit(self: &Arc<Self>, peer: IpAddr, now: Instant, closer: C) -> Decision<Ticket<C>, C> {
        let mut inner = self.lock();
        let decision = inner.admission.admit(peer, now);
        let close = decision
            .close
            .iter()
            .filter_map(|id| inner.closers.remove(id))
            .collect();
        if let Ok(id) = decision.result {
            inner.closers.insert(id, closer);
        }
        Decision {
            result: decision.result.map(|id| Ticket {
                gate: self.clone(),
                id,
                established: AtomicBool::new(false),
            }),
            close,
            warning: decision.warning,
        }
    }
}

impl<C> Ticket<C> {
    /// The connection's id.
    pub fn id(&self) -> ConnId {
        self.id
    }

    /// The connection finished its handshake at `now`: established (at once when it
    /// was already), or refused, and then the caller closes it.
    pub fn establish(&self, now: Instant) -> Decision<(), C> {
        if self.established.load(Ordering::Acquire) {
            return Decision {
                result: Ok(()),
                close: Vec::new(),
                warning: None,
            };
        }
        let mut inner = self.gate.lock();
        inner.closers.remove(&self.id);
        let decision = inner.admission.establish(self.id, now);
        self.established.store(decision.result.is_ok(), Ordering::Release);
        Decision {
            result: decision.result,
            close: Vec::new(),
            warning: decision.warning,
        }
    }
}

impl<C> Drop for Ticket<C> {
    fn drop(&mut self) {
        let mut inner = self.gate.lock();
        inner.closers.remove(&self.id);
        inner.admission.release(self.id);
    }
}
