//! What a run remembers of its calls, by exact call (the tool's name and its canonical input):
//! how often each failed (`maxToolFailures`, continue mode) and how often each was dispatched
//! and did not fail — the ones that succeeded and the ones still running (`maxIdenticalCalls`).

use std::collections::{HashMap, HashSet};

/// One exact call: the tool's name and its canonical input.
pub type CallKey = (String, String);

/// The run's memory of its exact calls.
#[derive(Default)]
pub struct CallMemory {
    failures: HashMap<CallKey, u32>,
    /// Dispatched and not failed (succeeded, or still running): their `tool_use` ids.
    standing: HashMap<CallKey, Vec<String>>,
}

impl CallMemory {
    /// How often this call has failed.
    pub fn failures(&self, key: &CallKey) -> u32 {
        self.failures.get(key).copied().unwrap_or(0)
    }

    /// One more failure of this call.
    pub fn record_failure(&mut self, key: CallKey) {
        *self.failures.entry(key).or_insert(0) += 1;
    }

    /// How often this call stands: succeeded, or running.
    pub fn standing(&self, key: &CallKey) -> u32 {
        self.standing.get(key).map_or(0, |ids| ids.len() as u32)
    }

    /// Call `id` is about to run: counted, unless its exact call has already succeeded (or is
    /// running) `limit` times, which is returned instead.
    pub fn dispatch(&mut self, key: &CallKey, id: &str, limit: u32) -> Result<(), u32> {
        let standing = self.standing(key);
        if standing >= limit {
            return Err(standing);
        }
        self.standing
            .entry(key.clone())
            .or_default()
            .push(id.to_owned());
        Ok(())
    }

    /// A compaction summarised every earlier result away: no call counts as one whose result
    /// the model has.
    pub fn forget_successes(&mut self) {
        self.standing.clear();
    }

    /// Context editing cleared the results of these calls: they no longer count.
    pub fn forget_calls(&mut self, ids: &HashSet<String>) {
        for standing in self.standing.values_mut() {
            standing.retain(|id| !ids.contains(id));
        }
    }

    /// Dispatched call `id` failed: it no longer counts as one that succeeded.
    pub fn dispatched_failed(&mut self, key: &CallKey, id: &str) {
        if let Some(ids) = self.standing.get_mut(key) {
            ids.retain(|i| i != id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_refused_once_it_stood_limit_times_and_a_failure_gives_its_place_back() {
        let mut m = CallMemory::default();
        let key = ("search".to_owned(), r#"{"q":"x"}"#.to_owned());
        let other = ("search".to_owned(), r#"{"q":"y"}"#.to_owned());
        assert_eq!(m.dispatch(&key, "a", 2), Ok(()));
        assert_eq!(m.dispatch(&key, "b", 2), Ok(()));
        assert_eq!(m.dispatch(&key, "c", 2), Err(2));
        assert_eq!(m.dispatch(&other, "d", 2), Ok(()));
        m.dispatched_failed(&key, "a");
        assert_eq!(m.dispatch(&key, "e", 2), Ok(()));
        assert_eq!(m.dispatch(&key, "f", 2), Err(2));
        // Cleared results no longer count; the others still do.
        m.forget_calls(&["b".to_owned()].into());
        assert_eq!(m.standing(&key), 1);
        assert_eq!(m.standing(&other), 1);
        m.forget_successes();
        assert_eq!(m.standing(&key), 0);
        assert_eq!(m.failures(&key), 0);
        m.record_failure(key.clone());
        assert_eq!(m.failures(&key), 1);
    }
}
