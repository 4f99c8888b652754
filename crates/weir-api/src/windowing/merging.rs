//! The in-flight windows of one key with a merging assigner (Flink's
//! `MergingWindowSet`): which window's state namespace holds each window's contents.
//!
//! A plain data structure, loaded from keyed state per element or timer and persisted
//! after a change. When a new window merges with existing ones, the merge result takes
//! over the *state window* of one of the merged windows, so that only the other state
//! windows' contents have to move: the merge callback gets (merge result, merged
//! windows, the result's state window, the state windows to merge into it).
//!
//! Invariant: every in-flight window maps to exactly one state window, and state
//! windows are distinct.

use super::error::WindowError;
use super::window::Window;

/// Window → state window, for one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergingWindowSet<W> {
    mapping: Vec<(W, W)>,
    initial: Vec<(W, W)>,
}

impl<W: Window> MergingWindowSet<W> {
    /// The set as persisted.
    pub fn new(mapping: Vec<(W, W)>) -> Self {
        Self {
            initial: mapping.clone(),
            mapping,
        }
    }

    /// The mapping to persist.
    pub fn mapping(&self) -> &[(W, W)] {
        &self.mapping
    }

    /// True if the mapping changed since it was loaded.
    pub fn changed(&self) -> bool {
        self.mapping != self.initial
    }

    /// The state window of an in-flight window.
    pub fn state_window(&self, window: &W) -> Option<&W> {
        self.mapping.iter().find(|(w, _)| w == window).map(|(_, s)| s)
    }

    fn remove(&mut self, window: &W) -> Option<W> {
        let i = self.mapping.iter().position(|(w, _)| w == window)?;
        Some(self.mapping.swap_remove(i).1)
    }

    fn put(&mut self, window: W, state: W) {
        match self.mapping.iter_mut().find(|(w, _)| *w == window) {
            Some(entry) => entry.1 = state,
            None => self.mapping.push((window, state)),
        }
    }

    /// Removes a window that is purged for good.
    pub fn retire_window(&mut self, window: &W) -> Result<(), WindowError> {
        self.remove(window)
            .map(|_| ())
            .ok_or_else(|| WindowError::NotInFlight(format!("{window:?}")))
    }

    /// Adds `new_window`, merging it with in-flight windows as `merge_windows` decides;
    /// `merge(result, merged, result_state_window, merged_state_windows)` moves state.
    /// Returns the window `new_window` ended up in.
    pub fn add_window<E>(
        &mut self,
        new_window: W,
        merge_windows: impl Fn(&[W]) -> Vec<(W, Vec<W>)>,
        mut merge: impl FnMut(&W, &[W], &W, &[W]) -> Result<(), E>,
    ) -> Result<W, E> {
        let mut windows: Vec<W> = self.mapping.iter().map(|(w, _)| w.clone()).collect();
        windows.push(new_window.clone());
        let merge_results = merge_windows(&windows);
        let mut result_window = new_window.clone();
        let mut merged_new_window = false;
        for (merge_result, mut merged_windows) in merge_results.iter().cloned() {
            if let Some(i) = merged_windows.iter().position(|w| *w == new_window) {
                merged_windows.remove(i);
                merged_new_window = true;
                result_window = merge_result.clone();
            }
            // The result takes over the state window of one of the merged windows.
            let Some(merged_state_window) = merged_windows.iter().find_map(|w| self.state_window(w).cloned()) else {
                continue;
            };
            let mut merged_state_windows: Vec<W> = merged_windows.iter().filter_map(|w| self.remove(w)).collect();
            self.put(merge_result.clone(), merged_state_window.clone());
            merged_state_windows.retain(|s| *s != merged_state_window);
            // A pre-existing window merged into itself, unchanged, needs no merge.
            if !(merged_windows.len() == 1 && merged_windows[0] == merge_result) {
                merge(
                    &merge_result,
                    &merged_windows,
                    &merged_state_window,
                    &merged_state_windows,
                )?;
            }
        }
        if merge_results.is_empty() || (result_window == new_window && !merged_new_window) {
            self.put(result_window.clone(), result_window.clone());
        }
        Ok(result_window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::windowing::window::TimeWindow;

    type Merges = Vec<(TimeWindow, Vec<TimeWindow>, TimeWindow, Vec<TimeWindow>)>;

    fn add(set: &mut MergingWindowSet<TimeWindow>, w: TimeWindow, log: &mut Merges) -> TimeWindow {
        set.add_window(w, TimeWindow::merge_windows, |r, m, s, ms| {
            log.push((*r, m.to_vec(), *s, ms.to_vec()));
            Ok::<(), ()>(())
        })
        .unwrap()
    }

    fn w(s: i64, e: i64) -> TimeWindow {
        TimeWindow::new(s, e)
    }

    #[test]
    fn a_separate_window_is_its_own_state_window() {
        let mut set = MergingWindowSet::new(Vec::new());
        let mut log = Merges::new();
        assert_eq!(add(&mut set, w(0, 10), &mut log), w(0, 10));
        assert_eq!(add(&mut set, w(20, 30), &mut log), w(20, 30));
        assert!(log.is_empty());
        assert_eq!(set.state_window(&w(20, 30)), Some(&w(20, 30)));
        assert!(set.changed());
    }

    #[test]
    fn touching_windows_merge_and_keep_the_first_state_window() {
        let mut set = MergingWindowSet::new(vec![(w(0, 10), w(0, 10))]);
        let mut log = Merges::new();
        assert_eq!(add(&mut set, w(10, 20), &mut log), w(0, 20));
        assert_eq!(log, vec![(w(0, 20), vec![w(0, 10)], w(0, 10), vec![])]);
        assert_eq!(set.mapping(), &[(w(0, 20), w(0, 10))]);
    }

    #[test]
    fn a_window_bridging_two_sessions_merges_all_three_state_into_one() {
        let mut set = MergingWindowSet::new(vec![(w(0, 10), w(0, 10)), (w(15, 25), w(15, 25))]);
        let mut log = Merges::new();
        assert_eq!(add(&mut set, w(8, 18), &mut log), w(0, 25));
        assert_eq!(log.len(), 1);
        let (result, merged, state, moved) = &log[0];
        assert_eq!(*result, w(0, 25));
        assert_eq!(merged, &vec![w(0, 10), w(15, 25)]);
        assert_eq!(*state, w(0, 10));
        assert_eq!(moved, &vec![w(15, 25)]);
        assert_eq!(set.mapping(), &[(w(0, 25), w(0, 10))]);
    }

    #[test]
    fn a_window_inside_an_existing_session_needs_no_merge() {
        let mut set = MergingWindowSet::new(vec![(w(0, 20), w(0, 10))]);
        let mut log = Merges::new();
        assert_eq!(add(&mut set, w(5, 15), &mut log), w(0, 20));
        assert!(log.is_empty());
        assert_eq!(set.mapping(), &[(w(0, 20), w(0, 10))]);
        assert!(!set.changed());
    }

    #[test]
    fn retiring_an_unknown_window_is_an_error() {
        let mut set = MergingWindowSet::<TimeWindow>::new(Vec::new());
        assert!(set.retire_window(&w(0, 1)).is_err());
    }
}
