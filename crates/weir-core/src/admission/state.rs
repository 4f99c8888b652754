//! The admission state machine: the pending and established pools and the count per
//! peer (rules in the [module docs](super)).

use super::refusal_log::RefusalLog;
use super::{ConnId, Decision, Limits, Refusal, Warning};
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::time::Instant;

/// A connection waiting for its handshake.
#[derive(Debug)]
struct Pending {
    peer: IpAddr,
    deadline: Instant,
}

/// The connections of one server, by state and by peer.
#[derive(Debug)]
pub struct Admission {
    limits: Limits,
    next_id: u64,
    /// By id, that is oldest first.
    pending: BTreeMap<ConnId, Pending>,
    established: HashMap<ConnId, IpAddr>,
    per_peer: HashMap<IpAddr, usize>,
    log: RefusalLog,
}

impl Admission {
    /// No connection yet, under `limits`.
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            next_id: 0,
            pending: BTreeMap::new(),
            established: HashMap::new(),
            per_peer: HashMap::new(),
            log: RefusalLog::default(),
        }
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Connections waiting for their handshake.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Established connections.
    pub fn established(&self) -> usize {
        self.established.len()
    }

    /// Connections from `peer`, pending and established.
    pub fn connections_of(&self, peer: IpAddr) -> usize {
        self.per_peer.get(&canonical(peer)).copied().unwrap_or(0)
    }

    /// A connection from `peer` was accepted at `now`: admitted as pending (closing the
    /// pending connections listed in the decision), or refused.
    pub fn admit(&mut self, peer: IpAddr, now: Instant) -> Decision<ConnId> {
        let peer = canonical(peer);
        let mut close = self.expire(now);
        let result = self.place_for(peer, &mut close);
        let refused = u64::from(result.is_err());
        let warning = self.log.note(refused, close.len() as u64, now);
        let result = result.map(|()| {
            let id = ConnId(self.next_id);
            self.next_id += 1;
            let deadline = now + self.limits.handshake_timeout;
            self.pending.insert(id, Pending { peer, deadline });
            *self.per_peer.entry(peer).or_insert(0) += 1;
            id
        });
        Decision { result, close, warning }
    }

    /// Connection `id` finished its handshake at `now`: established, or refused (then
    /// the caller closes it; its place is free already).
    pub fn establish(&mut self, id: ConnId, now: Instant) -> Decision<()> {
        if self.established.contains_key(&id) {
            return decided(Ok(()), None);
        }
        let Some(pending) = self.pending.remove(&id) else {
            return decided(Err(Refusal::Evicted), None);
        };
        let refusal = if now > pending.deadline {
            Some(Refusal::HandshakeTooLate {
                timeout: self.limits.handshake_timeout,
            })
        } else if self.established.len() >= self.limits.max_connections {
            Some(Refusal::ServerFull {
                limit: self.limits.max_connections,
            })
        } else {
            None
        };
        match refusal {
            None => {
                self.established.insert(id, pending.peer);
                decided(Ok(()), None)
            }
            Some(refusal) => {
                self.forget_peer(pending.peer);
                let late = matches!(refusal, Refusal::HandshakeTooLate { .. });
                let warning = self.log.note(u64::from(!late), u64::from(late), now);
                decided(Err(refusal), warning)
            }
        }
    }

    /// Connection `id` closed: its place is free. Unknown ids (already closed) are
    /// ignored.
    pub fn release(&mut self, id: ConnId) {
        let peer = match self.pending.remove(&id) {
            Some(pending) => Some(pending.peer),
            None => self.established.remove(&id),
        };
        if let Some(peer) = peer {
            self.forget_peer(peer);
        }
    }

    /// Makes room for a connection from `peer`, adding the pending connections evicted
    /// for it to `close`; or says why there is none.
    fn place_for(&mut self, peer: IpAddr, close: &mut Vec<ConnId>) -> Result<(), Refusal> {
        if self.established.len() >= self.limits.max_connections {
            return Err(Refusal::ServerFull {
                limit: self.limits.max_connections,
            });
        }
        if self.connections_of(peer) >= self.limits.max_per_peer {
            let oldest_of_peer = self.pending.iter().find(|(_, p)| p.peer == peer).map(|(id, _)| *id);
            let Some(victim) = oldest_of_peer else {
                return Err(Refusal::PeerFull {
                    peer,
                    limit: self.limits.max_per_peer,
                });
            };
            self.release(victim);
            close.push(victim);
        } else if self.pending.len() >= self.limits.max_pending {
            if let Some(victim) = self.pending.keys().next().copied() {
                self.release(victim);
                close.push(victim);
            }
        }
        Ok(())
    }

    /// Removes the pending connections whose deadline is past at `now`.
    fn expire(&mut self, now: Instant) -> Vec<ConnId> {
        let expired: Vec<ConnId> = self
            .pending
            .iter()
            .filter(|(_, p)| now > p.deadline)
            .map(|(id, _)| *id)
            .collect();
        for id in &expired {
            self.release(*id);
        }
        expired
    }

    fn forget_peer(&mut self, peer: IpAddr) {
        if let Some(n) = self.per_peer.get_mut(&peer) {
            *n -= 1;
            if *n == 0 {
                self.per_peer.remove(&peer);
            }
        }
    }
}

fn decided<T>(result: Result<T, Refusal>, warning: Option<Warning>) -> Decision<T> {
    Decision {
        result,
        close: Vec::new(),
        warning,
    }
}

/// An IPv4 peer is one peer whether it came over IPv4 or as an IPv4-mapped IPv6
/// address.
fn canonical(peer: IpAddr) -> IpAddr {
    peer.to_canonical()
}
