//! Window contents kept window by window: the storage of the
//! [`super::window_table_operator`], for windows that fire once, at their end.
//!
//! A [`WindowTable`] holds a *pane* per live window, in order of the window's max
//! timestamp; a pane holds, for every key with contents in the window, its accumulator,
//! in the order of the key's first element in the window. The window operator over
//! keyed state keeps the same contents per (key, window) and a cleanup timer per (key,
//! window) at the window's max timestamp; timers of one time fire in registration order,
//! which is the order of the first elements. So popping the panes in order and their
//! entries in order is exactly the order in which those timers fire — provided no two
//! live windows share a max timestamp, which holds for assigners whose windows all have
//! one size (tumbling and sliding): their end determines them.
//!
//! Invariants: panes are sorted by max timestamp, strictly; a pane's index maps each of
//! its keys to the position of its entry, and entries are never removed from a pane
//! (a pane leaves whole).

use super::window::Window;
use crate::functions::KeyType;
use hashbrown::hash_map::RawEntryMut;
use std::collections::VecDeque;

type Index<K> = hashbrown::HashMap<K, u32, rustc_hash::FxBuildHasher>;

/// The contents of one key in one window.
#[derive(Debug, Clone, PartialEq)]
pub struct PaneEntry<K, A> {
    /// The key.
    pub key: K,
    /// Its accumulator (`None` until the first element is added).
    pub acc: Option<A>,
}

/// One window's contents, by key.
#[derive(Debug)]
pub struct Pane<K, W, A> {
    /// The window.
    pub window: W,
    index: Index<K>,
    /// The entries, in the order of each key's first element.
    pub entries: Vec<PaneEntry<K, A>>,
}

impl<K: KeyType, W, A> Pane<K, W, A> {
    fn new(window: W) -> Self {
        Self {
            window,
            index: Index::default(),
            entries: Vec::new(),
        }
    }

    /// The accumulator slot of `key`, appended (empty) if the key has none yet; the
    /// key is hashed once and cloned only when it is new.
    #[inline]
    pub fn slot(&mut self, key: &K) -> &mut Option<A> {
        let i = match self.index.raw_entry_mut().from_key(key) {
            RawEntryMut::Occupied(o) => *o.get() as usize,
            RawEntryMut::Vacant(v) => {
                let i = self.entries.len();
                self.entries.push(PaneEntry {
                    key: key.clone(),
                    acc: None,
                });
                v.insert(key.clone(), i as u32);
                i
            }
        };
        &mut self.entries[i].acc
    }
}

/// The live windows' panes, earliest end first.
#[derive(Debug)]
pub struct WindowTable<K, W, A> {
    panes: VecDeque<(i64, Pane<K, W, A>)>,
    /// The last pane fired, emptied, for the next new window: windows of one job tend
    /// to hold as many keys as the one before, so a new pane starts at that size
    /// instead of growing (and rehashing) from nothing.
    spare: Option<Pane<K, W, A>>,
}

impl<K, W, A> Default for WindowTable<K, W, A> {
    fn default() -> Self {
        Self {
            panes: VecDeque::new(),
            spare: None,
        }
    }
}

impl<K: KeyType, W: Window, A> WindowTable<K, W, A> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The pane of `window`, created if it has none. Elements mostly go to the latest
    /// windows, so the search starts from the back.
    #[inline]
    pub fn pane(&mut self, window: &W) -> &mut Pane<K, W, A> {
        let end = window.max_timestamp();
        let mut at = self.panes.len();
        while at > 0 && self.panes[at - 1].0 > end {
            at -= 1;
        }
        if at == 0 || self.panes[at - 1].0 != end {
            let pane = match self.spare.take() {
                Some(mut spare) => {
                    spare.window = window.clone();
                    spare
                }
                None => Pane::new(window.clone()),
            };
            self.panes.insert(at, (end, pane));
            return &mut self.panes[at].1;
        }
        let pane = &mut self.panes[at - 1].1;
        debug_assert!(&pane.window == window, "two live windows end at {end}");
        pane
    }

    /// Removes and returns the earliest pane if its window ends at or before
    /// `watermark` (its max timestamp is `<= watermark`).
    pub fn pop_due(&mut self, watermark: i64) -> Option<Pane<K, W, A>> {
        match self.panes.front() {
            Some((end, _)) if *end <= watermark => self.panes.pop_front().map(|(_, p)| p),
            _ => None,
        }
    }

    /// Takes back a fired pane's tables for a later pane.
    pub fn recycle(&mut self, mut pane: Pane<K, W, A>) {
        pane.index.clear();
        pane.entries.clear();
        self.spare = Some(pane);
    }

    /// The panes, earliest end first.
    pub fn panes(&self) -> impl Iterator<Item = &Pane<K, W, A>> {
        self.panes.iter().map(|(_, p)| p)
    }

    /// The number of (key, window) entries.
    pub fn len(&self) -> usize {
        self.panes.iter().map(|(_, p)| p.entries.len()).sum()
    }

    /// True without entries.
    pub fn is_empty(&self) -> bool {
        self.panes.iter().all(|(_, p)| p.entries.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::windowing::TimeWindow;

    fn w(start: i64) -> TimeWindow {
        TimeWindow::new(start, start + 10)
    }

    fn add(t: &mut WindowTable<u32, TimeWindow, u32>, window: TimeWindow, key: u32) {
        *t.pane(&window).slot(&key).get_or_insert(0) += 1;
    }

    #[test]
    fn panes_pop_in_end_order_with_keys_in_first_element_order() {
        let mut t = WindowTable::new();
        add(&mut t, w(20), 7);
        add(&mut t, w(0), 3);
        add(&mut t, w(20), 1);
        add(&mut t, w(10), 9);
        add(&mut t, w(0), 5);
        add(&mut t, w(20), 7);
        add(&mut t, w(0), 3);
        assert_eq!(t.len(), 5);
        assert!(t.pop_due(8).is_none());
        let p = t.pop_due(9).unwrap();
        assert_eq!(p.window, w(0));
        let got: Vec<(u32, Option<u32>)> = p.entries.iter().map(|e| (e.key, e.acc)).collect();
        assert_eq!(got, vec![(3, Some(2)), (5, Some(1))]);
        assert!(t.pop_due(9).is_none());
        let rest: Vec<Vec<(u32, Option<u32>)>> = std::iter::from_fn(|| t.pop_due(i64::MAX))
            .map(|p| p.entries.iter().map(|e| (e.key, e.acc)).collect())
            .collect();
        assert_eq!(rest, vec![vec![(9, Some(1))], vec![(7, Some(2)), (1, Some(1))]]);
        assert!(t.is_empty());
    }

    #[test]
    fn random_inserts_keep_panes_sorted_and_every_count_exact() {
        let mut t = WindowTable::new();
        let mut expected = std::collections::BTreeMap::<(i64, u32), u32>::new();
        let mut x: u64 = 12345;
        for _ in 0..5_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let start = ((x >> 33) % 40) as i64 * 10;
            let key = ((x >> 20) % 17) as u32;
            add(&mut t, w(start), key);
            *expected.entry((start, key)).or_default() += 1;
        }
        let ends: Vec<i64> = t.panes().map(|p| p.window.max_timestamp()).collect();
        assert!(ends.windows(2).all(|e| e[0] < e[1]), "{ends:?}");
        let mut got = std::collections::BTreeMap::new();
        while let Some(p) = t.pop_due(i64::MAX) {
            for e in p.entries {
                got.insert((p.window.start(), e.key), e.acc.unwrap());
            }
        }
        assert_eq!(got, expected);
    }
}
