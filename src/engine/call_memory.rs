//! What a run remembers of its calls, by exact call (the tool's name and its canonical input):
//! how often each failed (`maxToolFailures`, continue mode) and how often each was dispatched
//! and did not fail — the ones that succeeded and the ones still running (`maxIdenticalCalls`).

use std::collections::HashMap;

/// One exact call: the tool's name and its canonical input.
pub type CallKey = (String, String);

/// The run's memory of its exact calls.
#[derive(Default)]
pub struct CallMemory {
    failures: HashMap<CallKey, u32>,
    /// Dispatched and not failed: succeeded, or still running.
    standing: HashMap<CallKey, u32>,
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
        self.standing.get(key).copied().unwrap_or(0)
    }

    /// The call is about to run: counted, unless it has already succeeded (or is running)
    /// `limit` times, which is returned instead.
    pub fn dispatch(&mut self, key: &CallKey, limit: u32) -> Result<(), u32> {
        let standing = self.standing(key);
        if standing >= limit {
            return Err(standing);
        }
        self.standing.insert(key.clone(), standing + 1);
        Ok(())
    }

    /// The model no longer sees what earlier calls returned (context editing cleared it, or a
    /// compaction summarised it away): no call counts as one it has the result of.
    pub fn forget_successes(&mut self) {
        self.standing.clear();
    }

    /// A dispatched call failed: it no longer counts as one that succeeded.
    pub fn dispatched_failed(&mut self, key: &CallKey) {
        if let Some(n) = self.standing.get_mut(key) {
            *n = n.saturating_sub(1);
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
        assert_eq!(m.dispatch(&key, 2), Ok(()));
        assert_eq!(m.dispatch(&key, 2), Ok(()));
        assert_eq!(m.dispatch(&key, 2), Err(2));
        assert_eq!(m.dispatch(&other, 2), Ok(()));
        m.dispatched_failed(&key);
        assert_eq!(m.dispatch(&key, 2), Ok(()));
        assert_eq!(m.dispatch(&key, 2), Err(2));
        assert_eq!(m.failures(&key), 0);
        m.record_failure(key.clone());
        assert_eq!(m.failures(&key), 1);
    }
}
