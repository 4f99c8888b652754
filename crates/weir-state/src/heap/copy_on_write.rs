//! A key group's map that an asynchronous snapshot shares instead of copying.
//!
//! A snapshot takes each group as it is ([`CowGroup::share`]: the map moves behind an
//! `Arc`, no entry is copied) and encodes it on another thread. The task keeps
//! writing: the first write to a group the snapshot still holds copies that one group
//! (copy-on-write), a write after the snapshot let go takes the map back without a
//! copy. Between snapshots a group is owned and reached without any atomic operation.

use std::sync::Arc;

/// One key group's map, owned or shared with snapshots in flight.
#[derive(Debug)]
pub(super) enum CowGroup<M> {
    /// Only the backend holds it.
    Owned(M),
    /// A snapshot taken since the last write holds it too.
    Shared(Arc<M>),
}

impl<M: Clone + Default> CowGroup<M> {
    /// The map, to read.
    #[inline]
    pub(super) fn get(&self) -> &M {
        match self {
            CowGroup::Owned(m) => m,
            CowGroup::Shared(m) => m,
        }
    }

    /// The map, to write: copied first if a snapshot still holds it.
    #[inline]
    pub(super) fn get_mut(&mut self) -> &mut M {
        if let CowGroup::Shared(_) = self {
            self.unshare();
        }
        match self {
            CowGroup::Owned(m) => m,
            CowGroup::Shared(_) => unreachable!("unshare leaves the group owned"),
        }
    }

    #[cold]
    fn unshare(&mut self) {
        if let CowGroup::Shared(shared) = std::mem::replace(self, CowGroup::Owned(M::default())) {
            *self = CowGroup::Owned(Arc::try_unwrap(shared).unwrap_or_else(|still_held| (*still_held).clone()));
        }
    }

    /// The map as it is now, for a snapshot; the group is shared from here on.
    pub(super) fn share(&mut self) -> Arc<M> {
        if let CowGroup::Owned(m) = self {
            *self = CowGroup::Shared(Arc::new(std::mem::take(m)));
        }
        match self {
            CowGroup::Shared(m) => m.clone(),
            CowGroup::Owned(_) => unreachable!("an owned group was just made shared"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_after_a_share_copies_the_group_and_leaves_the_snapshot_as_it_was() {
        let mut g = CowGroup::Owned(vec![1, 2]);
        let snapshot = g.share();
        g.get_mut().push(3);
        assert_eq!(*snapshot, vec![1, 2]);
        assert_eq!(g.get(), &vec![1, 2, 3]);
    }

    #[test]
    fn a_write_after_the_snapshot_let_go_takes_the_map_back_without_a_copy() {
        let mut g = CowGroup::Owned(Vec::with_capacity(8));
        g.get_mut().push(1);
        let snapshot = g.share();
        let buffer = snapshot.as_ptr();
        drop(snapshot);
        g.get_mut().push(2);
        assert!(matches!(g, CowGroup::Owned(_)));
        assert_eq!(g.get(), &vec![1, 2]);
        assert_eq!(g.get().as_ptr(), buffer, "the vector was copied");
    }
}
