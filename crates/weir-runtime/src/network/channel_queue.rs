//! A channel's queue of data buffers and events with *priority events* at its head
//! (Flink's `PipelinedSubpartition` with its `numPriorityElements`), as a plain state
//! machine: no locks, no I/O. It is the queue of a producer's subpartition
//! ([`Subpartition`](super::partition::subpartition)) and the receive queue of a remote input
//! channel (`remote::client`).
//!
//! A priority event (the barrier of an unaligned checkpoint) is queued behind the
//! priority events already queued and ahead of everything else: it *overtakes* the
//! queued buffers and events, which stay queued and are delivered after it, in their
//! order. Before queueing one, its producer asks which data it will overtake
//! ([`ChannelQueue::overtaken`]): the bytes of the queued data buffers, in order. An
//! unaligned checkpoint persists them as channel state: a producer's subpartition
//! gives its *output channel state*, a remote channel's receive queue part of the
//! consumer's *input channel state* (buffers received before the barrier and not yet
//! taken). Events are overtaken but not persisted. A consumer may also *promote* an
//! event queued in band ([`ChannelQueue::take_with_overtaken`], an aligned barrier
//! whose checkpoint switched to unaligned): it leaves its place, with the bytes of the
//! data buffers queued ahead of it, and is queued again as a priority event.
//!
//! Invariants (checked exhaustively in the tests, the queue alone and as the two ends
//! of a channel): the first [`priority_events`](ChannelQueue::priority_events) elements
//! are exactly the priority events, in the order they were queued; every other element
//! keeps the order it was pushed in; [`buffers`](ChannelQueue::buffers) and
//! [`events`](ChannelQueue::events) count the data buffers and the events (priority
//! events included). For every priority event, the data delivered before it, followed
//! by the data it overtook, is exactly the data pushed before it was queued: nothing is
//! lost or counted twice.

use std::collections::VecDeque;

/// What a [`ChannelQueue`] holds.
pub(crate) trait QueueElement {
    /// The bytes of a data buffer; `None` for an event.
    fn data(&self) -> Option<&[u8]>;
    /// True for a priority event.
    fn is_priority(&self) -> bool;
}

/// Data buffers and events of one channel, priority events first.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ChannelQueue<E> {
    items: VecDeque<E>,
    priority: usize,
    buffers: usize,
    events: usize,
}

impl<E> Default for ChannelQueue<E> {
    fn default() -> Self {
        Self {
            items: VecDeque::new(),
            priority: 0,
            buffers: 0,
            events: 0,
        }
    }
}

impl<E: QueueElement> ChannelQueue<E> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Elements queued.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// True when nothing is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Data buffers queued.
    pub(crate) fn buffers(&self) -> usize {
        self.buffers
    }

    /// Events queued, priority events included.
    pub(crate) fn events(&self) -> usize {
        self.events
    }

    /// Priority events queued (all at the head).
    pub(crate) fn priority_events(&self) -> usize {
        self.priority
    }

    /// The next element to deliver.
    pub(crate) fn front(&self) -> Option<&E> {
        self.items.front()
    }

    /// Queues `element`: a priority event behind the priority events queued already,
    /// anything else at the back.
    pub(crate) fn push(&mut self, element: E) {
        match element.data() {
            Some(_) => self.buffers += 1,
            None => self.events += 1,
        }
        if element.is_priority() {
            self.items.insert(self.priority, element);
            self.priority += 1;
        } else {
            self.items.push_back(element);
        }
    }

    /// The bytes of the data buffers a priority event queued now would overtake, in
    /// order (copied: they stay queued).
    pub(crate) fn overtaken(&self) -> Vec<u8> {
        let len = self.items.iter().filter_map(E::data).map(<[u8]>::len).sum();
        let mut out = Vec::with_capacity(len);
        for data in self.items.iter().skip(self.priority).filter_map(E::data) {
            out.extend_from_slice(data);
        }
        out
    }

    /// Removes the first element after the priority events that `is_target` picks, and
    /// returns it with the bytes of the data buffers queued ahead of it (the data it
    /// overtakes when it is queued again as a priority event).
    pub(crate) fn take_with_overtaken(&mut self, is_target: impl Fn(&E) -> bool) -> Option<(E, Vec<u8>)> {
        let at = self
            .items
            .iter()
            .skip(self.priority)
            .position(is_target)
            .map(|i| i + self.priority)?;
        let mut overtaken = Vec::new();
        for data in self.items.range(self.priority..at).filter_map(E::data) {
            overtaken.extend_from_slice(data);
        }
        let element = self.items.remove(at)?;
        match element.data() {
            Some(_) => self.buffers -= 1,
            None => self.events -= 1,
        }
        Some((element, overtaken))
    }

    /// Takes the next element.
    pub(crate) fn pop_front(&mut self) -> Option<E> {
        let element = self.items.pop_front()?;
        match element.data() {
            Some(_) => self.buffers -= 1,
            None => self.events -= 1,
        }
        if self.priority > 0 {
            self.priority -= 1;
        }
        Some(element)
    }

    /// Takes every element (the consumer went away).
    pub(crate) fn take_all(&mut self) -> VecDeque<E> {
        self.priority = 0;
        self.buffers = 0;
        self.events = 0;
        std::mem::take(&mut self.items)
    }

    /// The queued elements, front first.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = &E> {
        self.items.iter()
    }
}

#[cfg(test)]
mod tests;
