//! The channel queue alone (every short sequence of pushes, promotions and pops
//! against a naive reference), then as both ends of one channel: a producer's
//! subpartition, a credit limited transfer, a consumer's receive queue (remote) or none
//! (local), and a consumer that takes elements and promotes in-band events, explored
//! over every reachable state. Both check that a priority event's overtaken data
//! accounts exactly for what was in flight.

use super::*;
use std::collections::HashSet;

/// A queue element of the model: a data buffer of bytes, an in-band event (with the
/// number of data buffers written before it), or the priority event of barrier `id`
/// with the bytes it overtook.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum El {
    Data(Vec<u8>),
    Event(u8),
    Priority(u8, Vec<u8>),
}

impl QueueElement for El {
    fn data(&self) -> Option<&[u8]> {
        match self {
            El::Data(d) => Some(d),
            _ => None,
        }
    }

    fn is_priority(&self) -> bool {
        matches!(self, El::Priority(..))
    }
}

#[test]
fn a_priority_event_overtakes_queued_buffers_and_events_but_not_earlier_priority_events() {
    let mut q = ChannelQueue::new();
    q.push(El::Data(vec![1, 2]));
    q.push(El::Event(1));
    q.push(El::Data(vec![3]));
    assert_eq!(q.overtaken(), vec![1, 2, 3]);
    q.push(El::Priority(1, Vec::new()));
    q.push(El::Data(vec![4]));
    assert_eq!(q.overtaken(), vec![1, 2, 3, 4], "what the second one overtakes");
    q.push(El::Priority(2, Vec::new()));
    assert_eq!((q.len(), q.buffers(), q.events(), q.priority_events()), (6, 3, 3, 2));
    let order: Vec<El> = std::iter::from_fn(|| q.pop_front()).collect();
    assert_eq!(
        order,
        vec![
            El::Priority(1, Vec::new()),
            El::Priority(2, Vec::new()),
            El::Data(vec![1, 2]),
            El::Event(1),
            El::Data(vec![3]),
            El::Data(vec![4]),
        ]
    );
    assert_eq!((q.buffers(), q.events(), q.priority_events()), (0, 0, 0));
}

#[test]
fn a_promoted_event_leaves_with_the_data_ahead_of_it_and_returns_as_a_priority_event() {
    let mut q = ChannelQueue::new();
    q.push(El::Priority(1, Vec::new()));
    q.push(El::Data(vec![1]));
    q.push(El::Data(vec![2]));
    q.push(El::Event(2));
    q.push(El::Data(vec![3]));
    assert_eq!(q.take_with_overtaken(|e| matches!(e, El::Priority(..))), None);
    let (event, overtaken) = q.take_with_overtaken(|e| matches!(e, El::Event(_))).unwrap();
    assert_eq!((event, overtaken.clone()), (El::Event(2), vec![1, 2]));
    assert_eq!((q.buffers(), q.events()), (3, 1));
    q.push(El::Priority(2, overtaken));
    let order: Vec<El> = std::iter::from_fn(|| q.pop_front()).collect();
    assert_eq!(
        order,
        vec![
            El::Priority(1, Vec::new()),
            El::Priority(2, vec![1, 2]),
            El::Data(vec![1]),
            El::Data(vec![2]),
            El::Data(vec![3]),
        ]
    );
}

#[test]
fn taking_everything_empties_the_counts() {
    let mut q = ChannelQueue::new();
    q.push(El::Data(vec![1]));
    q.push(El::Priority(1, Vec::new()));
    assert_eq!(q.take_all().len(), 2);
    assert!(q.is_empty() && q.overtaken().is_empty());
    assert_eq!((q.buffers(), q.events(), q.priority_events()), (0, 0, 0));
}

/// One step of the queue-alone exploration.
#[derive(Debug, Clone, Copy)]
enum Op {
    Data,
    Event,
    Priority,
    /// Promote the first in-band event to a priority event.
    Promote,
    Pop,
}

/// Runs `ops` on a queue and on a naive reference (a vector, priority events inserted
/// after the leading ones), checking the module's invariants after each step.
fn check_queue_sequence(ops: &[Op]) {
    let mut q: ChannelQueue<El> = ChannelQueue::new();
    let mut reference: Vec<El> = Vec::new();
    let mut next = 0u8;
    let mut next_id = 0u8;
    let mut pushed: Vec<u8> = Vec::new();
    let mut delivered: Vec<u8> = Vec::new();
    // Per priority event: the data pushed before it, and what it overtook.
    let mut expected: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for op in ops {
        match op {
            Op::Data => {
                let e = El::Data(vec![next]);
                pushed.push(next);
                next += 1;
                q.push(e.clone());
                reference.push(e);
            }
            Op::Event => {
                let e = El::Event(pushed.len() as u8);
                q.push(e.clone());
                reference.push(e);
            }
            Op::Promote => {
                let found = q.take_with_overtaken(|e| matches!(e, El::Event(_)));
                let lead = reference.iter().take_while(|e| e.is_priority()).count();
                let at = reference.iter().skip(lead).position(|e| matches!(e, El::Event(_)));
                assert_eq!(found.is_some(), at.is_some(), "{ops:?}");
                if let (Some((El::Event(before), overtaken)), Some(at)) = (found, at) {
                    reference.remove(lead + at);
                    expected.push((pushed[..before as usize].to_vec(), overtaken));
                    let e = El::Priority(next_id, Vec::new());
                    next_id += 1;
                    q.push(e.clone());
                    reference.insert(lead, e);
                }
            }
            Op::Priority => {
                let overtaken = q.overtaken();
                expected.push((pushed.clone(), overtaken.clone()));
                let e = El::Priority(next_id, Vec::new());
                next_id += 1;
                q.push(e.clone());
                let at = reference.iter().take_while(|e| e.is_priority()).count();
                reference.insert(at, e);
            }
            Op::Pop => {
                let got = q.pop_front();
                let want = (!reference.is_empty()).then(|| reference.remove(0));
                assert_eq!(got, want, "{ops:?}");
                match got {
                    Some(El::Data(d)) => delivered.extend(d),
                    Some(El::Priority(id, _)) => {
                        let (before, overtaken) = &expected[id as usize];
                        let mut accounted = delivered.clone();
                        accounted.extend(overtaken);
                        assert_eq!(&accounted, before, "priority event {id} misaccounts: {ops:?}");
                    }
                    _ => {}
                }
            }
        }
        assert_eq!(q.iter().cloned().collect::<Vec<_>>(), reference, "{ops:?}");
        let leading = reference.iter().take_while(|e| e.is_priority()).count();
        assert_eq!(q.priority_events(), leading, "{ops:?}");
        assert!(
            reference.iter().skip(leading).all(|e| !e.is_priority()),
            "priority events only at the head: {ops:?}"
        );
        assert_eq!(q.buffers(), reference.iter().filter(|e| e.data().is_some()).count());
        assert_eq!(q.events(), reference.iter().filter(|e| e.data().is_none()).count());
        assert!(pushed.starts_with(&delivered), "data keeps its order: {ops:?}");
    }
}

/// Every sequence of up to 8 pushes, promotions and pops.
#[test]
fn every_sequence_of_pushes_promotions_and_pops_keeps_the_queue_invariants() {
    let all = [Op::Data, Op::Event, Op::Priority, Op::Promote, Op::Pop];
    let mut stack: Vec<Vec<Op>> = vec![Vec::new()];
    let mut explored = 0usize;
    while let Some(seq) = stack.pop() {
        explored += 1;
        check_queue_sequence(&seq);
        if seq.len() < 8 {
            for op in all {
                let mut next = seq.clone();
                next.push(op);
                stack.push(next);
            }
        }
    }
    assert!(explored > 400_000, "explored {explored}");
}

/// Both ends of one channel: the producer's subpartition queue, the consumer's receive
/// queue (remote channels; local channels take from the subpartition directly) and
/// what the consumer took so far. The in-band event is an aligned barrier the consumer
/// may promote (its checkpoint switched to unaligned): from its receive queue, or for a
/// local channel from the subpartition.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Channel {
    remote: bool,
    producer: ChannelQueue<El>,
    consumer: ChannelQueue<El>,
    /// Buffers written so far (buffer `k` carries the byte `k`).
    written: u8,
    events: u8,
    /// Receive buffers the consumer has free (credit).
    credit: u8,
    /// Data the consumer took, in order.
    processed: Vec<u8>,
    /// Per barrier (priority or promoted): the producer's output channel state and the
    /// buffers written before it.
    barriers: Vec<(Vec<u8>, u8)>,
    /// Per barrier the consumer took as a priority event: its input channel state (the
    /// data it overtook in the consumer's queue).
    taken: std::collections::BTreeMap<u8, Vec<u8>>,
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Write,
    Event,
    Barrier,
    Transfer,
    Consume,
    Promote,
}

const MAX_WRITES: u8 = 4;
const MAX_BARRIERS: usize = 2;

impl Channel {
    fn new(remote: bool, credit: u8) -> Self {
        Self {
            remote,
            producer: ChannelQueue::new(),
            consumer: ChannelQueue::new(),
            written: 0,
            events: 0,
            credit,
            processed: Vec::new(),
            barriers: Vec::new(),
            taken: Default::default(),
        }
    }

    fn enabled(&self) -> Vec<Step> {
        let mut out = Vec::new();
        if self.written < MAX_WRITES {
            out.push(Step::Write);
        }
        if self.events < 1 {
            out.push(Step::Event);
        }
        if self.barriers.len() < MAX_BARRIERS {
            out.push(Step::Barrier);
        }
        if self.remote && self.can_transfer() {
            out.push(Step::Transfer);
        }
        let consumable = if self.remote { &self.consumer } else { &self.producer };
        if self.remote && !consumable.is_empty() || !self.remote && self.can_transfer() {
            out.push(Step::Consume);
        }
        if self.barriers.len() < MAX_BARRIERS && consumable.iter().any(|e| matches!(e, El::Event(_))) {
            out.push(Step::Promote);
        }
        out
    }

    /// A buffer moves only against credit, events always.
    fn can_transfer(&self) -> bool {
        match self.producer.front() {
            Some(El::Data(_)) => self.credit > 0,
            Some(_) => true,
            None => false,
        }
    }

    fn step(&mut self, s: Step) {
        match s {
            Step::Write => {
                self.producer.push(El::Data(vec![self.written]));
                self.written += 1;
            }
            Step::Event => {
                self.producer.push(El::Event(self.written));
                self.events += 1;
            }
            Step::Promote => {
                let queue = if self.remote {
                    &mut self.consumer
                } else {
                    &mut self.producer
                };
                let Some((El::Event(written), overtaken)) = queue.take_with_overtaken(|e| matches!(e, El::Event(_)))
                else {
                    return;
                };
                // Nothing of it is in the producer's output channel state: it was in band.
                let id = self.barriers.len() as u8;
                queue.push(El::Priority(id, overtaken));
                self.barriers.push((Vec::new(), written));
            }
            Step::Barrier => {
                // The producer's output channel state: what the barrier overtakes.
                self.barriers.push((self.producer.overtaken(), self.written));
                let id = (self.barriers.len() - 1) as u8;
                self.producer.push(El::Priority(id, Vec::new()));
            }
            Step::Transfer => {
                let Some(e) = self.producer.pop_front() else { return };
                let e = match e {
                    El::Data(d) => {
                        self.credit -= 1;
                        El::Data(d)
                    }
                    // The receive queue's overtaken buffers travel with the barrier.
                    El::Priority(id, _) => El::Priority(id, self.consumer.overtaken()),
                    El::Event(n) => El::Event(n),
                };
                self.consumer.push(e);
            }
            Step::Consume => {
                let taken = if self.remote {
                    self.consumer.pop_front()
                } else {
                    // Local: the consumer takes from the subpartition, under credit.
                    let e = self.producer.pop_front();
                    if let Some(El::Data(_)) = e {
                        self.credit -= 1;
                    }
                    e
                };
                match taken {
                    Some(El::Data(d)) => {
                        self.processed.extend(d);
                        self.credit += 1;
                    }
                    Some(El::Priority(id, overtaken)) => {
                        assert!(self.taken.insert(id, overtaken).is_none(), "barrier twice: {self:?}");
                        self.check_barrier(id);
                    }
                    _ => {}
                }
            }
        }
    }

    /// When the consumer takes barrier `id`: what it processed, then its input channel
    /// state, then the producer's output channel state is exactly what was written
    /// before the barrier.
    fn check_barrier(&self, id: u8) {
        let (output_state, written) = &self.barriers[id as usize];
        let mut stream = self.processed.clone();
        stream.extend(&self.taken[&id]);
        stream.extend(output_state);
        let expected: Vec<u8> = (0..*written).collect();
        assert_eq!(
            stream, expected,
            "barrier {id} misaccounts the in-flight data: {self:?}"
        );
        if !self.remote && !output_state.is_empty() {
            assert!(
                self.taken[&id].is_empty(),
                "a local channel has no queue of its own: what a producer's barrier overtook is the \
                 producer's"
            );
        }
    }

    fn check(&self) {
        let prefix: Vec<u8> = (0..self.processed.len() as u8).collect();
        assert_eq!(self.processed, prefix, "data arrives in order: {self:?}");
        if self.remote {
            let in_flight = self.consumer.buffers() as u8;
            assert!(self.credit + in_flight <= 2, "credit bound: {self:?}");
        }
    }

    fn drain(mut self) -> Self {
        loop {
            let steps: Vec<Step> = self
                .enabled()
                .into_iter()
                .filter(|s| matches!(s, Step::Transfer | Step::Consume))
                .collect();
            let Some(s) = steps.first() else { return self };
            self.step(*s);
        }
    }
}

fn explore(remote: bool, credit: u8) -> usize {
    let start = Channel::new(remote, credit);
    let mut seen = HashSet::new();
    let mut stack = vec![start.clone()];
    seen.insert(start);
    while let Some(c) = stack.pop() {
        c.check();
        let drained = c.clone().drain();
        drained.check();
        assert_eq!(
            drained.processed.len(),
            drained.written as usize,
            "undelivered: {drained:?}"
        );
        assert_eq!(drained.taken.len(), drained.barriers.len(), "barrier lost: {drained:?}");
        for s in c.enabled() {
            let mut next = c.clone();
            next.step(s);
            if seen.insert(next.clone()) {
                stack.push(next);
            }
        }
    }
    seen.len()
}

/// Every reachable state of a local and a remote channel (one or two credits) with up
/// to four buffers, one in-band event (promotable) and two priority barriers: at every
/// barrier the consumer takes, its processed data, its input channel state and the
/// producer's output channel state add up to exactly the data written before the
/// barrier, and draining delivers everything in order.
#[test]
fn overtaken_data_of_both_ends_of_a_channel_accounts_exactly_for_the_data_in_flight_in_every_reachable_state() {
    let mut states = 0;
    for (remote, credit) in [(false, 1), (false, 2), (true, 1), (true, 2)] {
        states += explore(remote, credit);
    }
    assert!(states > 5_000, "explored only {states} states");
}
