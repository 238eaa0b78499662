//! A token budget for a whole run (`maxTotalTokens`): before each request, what it may cost is
//! estimated and its `max_tokens` lowered to what is left; a request that would cross the
//! budget is not sent.
//!
//! The estimate of a request's input is the previous request's input (0 for the first): the
//! history grows between two requests by a reply and its results, which the estimate does not
//! know, so a run can overshoot by that much (the README says so).

use crate::engine::error::RunError;
use crate::engine::report::usage::ApiUsage;
use crate::engine::report::usage::Usage;

/// The budget of one run, as its requests spend it.
#[derive(Debug, Default)]
pub struct Budget {
    /// `maxTotalTokens`; none: no budget.
    limit: Option<u64>,
    /// `thinking.budget_tokens`: a request whose `max_tokens` leaves no more than this is not
    /// worth sending (the API refuses `max_tokens` ≤ the thinking budget).
    thinking: Option<u64>,
    /// The input (cache included) of the last request answered.
    last_input: u64,
    /// The `max_tokens` of the request in flight was lowered to fit the budget.
    lowered: Option<u32>,
}

impl Budget {
    /// A run's budget: `limit` tokens in all (none: unbounded), with thinking's own budget.
    pub fn new(limit: Option<u64>, thinking: Option<u64>) -> Self {
        Budget {
            limit,
            thinking,
            ..Budget::default()
        }
    }

    /// The `max_tokens` of the next request, after `spent` so far: `max_tokens`, or less to fit
    /// the budget; an error when the request would cross it (nothing is sent then).
    pub fn cap(&mut self, max_tokens: u32, spent: &Usage) -> Result<u32, RunError> {
        self.lowered = None;
        let Some(limit) = self.limit else {
            return Ok(max_tokens);
        };
        let used = spent.total();
        let estimate = self.last_input;
        let left = limit.saturating_sub(used).saturating_sub(estimate);
        let refuse = |why: String| {
            RunError::budget_exceeded(
                format!(
                    "The run's token budget (maxTotalTokens {limit}) would be crossed by the next request: \
                     {used} tokens spent, about {estimate} more to send the history, {why}. Nothing more was sent. \
                     Raise maxTotalTokens, or shorten the run (fewer tool rounds, a shorter history)."
                ),
                *spent,
            )
        };
        if left < 1 {
            return Err(refuse("and no room left for the answer".to_owned()));
        }
        let cap = u64::from(max_tokens).min(left);
        // Only where the budget lowered it: a maxTokens of its own no more than the thinking
        // budget is the caller's to fix, and the API's 400 says so.
        let lowered = cap < u64::from(max_tokens);
        if let Some(thinking) = self.thinking.filter(|&t| lowered && cap <= t) {
            return Err(refuse(format!(
                "leaving {cap} tokens for the answer, no more than thinking's budget_tokens ({thinking})"
            )));
        }
        let cap = u32::try_from(cap).expect("no more than max_tokens");
        if lowered {
            self.lowered = Some(cap);
        }
        Ok(cap)
    }

    /// The response to the request just sent: its input is the next request's estimate. A
    /// reply cut by the cap the budget lowered (`stop_reason: max_tokens`) ends the run: the
    /// budget, not `maxTokens`, stopped it.
    pub fn answered(
        &mut self,
        usage: &ApiUsage,
        stop_reason: Option<&str>,
        spent: &Usage,
    ) -> Result<(), RunError> {
        self.last_input = usage.input_tokens.unwrap_or(0)
            + usage.cache_read_input_tokens.unwrap_or(0)
            + usage.cache_creation_input_tokens.unwrap_or(0);
        match (self.lowered, self.limit) {
            (Some(cap), Some(limit)) if stop_reason == Some("max_tokens") => {
                Err(RunError::budget_exceeded(
                    format!(
                        "The model's reply was cut at {cap} tokens, all that the run's token budget (maxTotalTokens {limit}) \
                         had left; {} tokens were spent. Raise maxTotalTokens, or shorten the run.",
                        spent.total()
                    ),
                    *spent,
                ))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64) -> ApiUsage {
        ApiUsage {
            input_tokens: Some(input),
            output_tokens: Some(output),
            ..ApiUsage::default()
        }
    }

    fn spent(total_in: u64, total_out: u64) -> Usage {
        Usage {
            input_tokens: total_in,
            output_tokens: total_out,
            ..Usage::default()
        }
    }

    #[test]
    fn without_a_limit_nothing_is_lowered() {
        let mut b = Budget::new(None, None);
        assert_eq!(b.cap(4096, &spent(1 << 40, 0)).unwrap(), 4096);
    }

    #[test]
    fn the_cap_is_what_the_estimate_leaves() {
        let mut b = Budget::new(Some(1000), None);
        // The first request: no estimate yet.
        assert_eq!(b.cap(4096, &Usage::default()).unwrap(), 1000);
        b.answered(&usage(300, 50), Some("tool_use"), &spent(300, 50))
            .unwrap();
        // 350 spent, about 300 to send: 350 left.
        assert_eq!(b.cap(4096, &spent(300, 50)).unwrap(), 350);
        assert_eq!(b.cap(200, &spent(300, 50)).unwrap(), 200);
        // Exactly full: spent + estimate + 1 must fit.
        let e = b.cap(4096, &spent(650, 50)).unwrap_err();
        assert_eq!(e.code.as_str(), "budget_exceeded");
        assert_eq!(e.usage, Some(spent(650, 50)));
        assert!(e.message.contains("maxTotalTokens 1000"), "{}", e.message);
        assert_eq!(b.cap(4096, &spent(649, 50)).unwrap(), 1);
    }

    #[test]
    fn the_cache_counts_as_input() {
        let mut b = Budget::new(Some(1000), None);
        let cached = ApiUsage {
            input_tokens: Some(10),
            cache_read_input_tokens: Some(400),
            cache_creation_input_tokens: Some(90),
            output_tokens: Some(0),
            ..ApiUsage::default()
        };
        b.answered(&cached, None, &spent(0, 0)).unwrap();
        assert_eq!(b.cap(4096, &Usage::default()).unwrap(), 500);
    }

    #[test]
    fn no_request_leaves_no_more_than_thinking_s_budget() {
        let mut b = Budget::new(Some(3000), Some(1024));
        assert_eq!(b.cap(4096, &spent(1000, 0)).unwrap(), 2000);
        let e = b.cap(4096, &spent(1976, 0)).unwrap_err();
        assert!(e.message.contains("budget_tokens (1024)"), "{}", e.message);
        assert_eq!(b.cap(4096, &spent(1975, 0)).unwrap(), 1025);
        // maxTokens itself no more than the thinking budget: sent, for the API to refuse.
        let mut b = Budget::new(Some(100_000), Some(2048));
        assert_eq!(b.cap(1024, &Usage::default()).unwrap(), 1024);
    }

    #[test]
    fn huge_counts_saturate_rather_than_wrap_past_the_budget() {
        let mut total = Usage::default();
        total.add(&usage(u64::MAX, 1));
        total.add(&usage(5, 5));
        assert_eq!(total.input_tokens, u64::MAX);
        assert_eq!(total.total(), u64::MAX);
        let mut b = Budget::new(Some(1000), None);
        assert!(b.cap(4096, &total).is_err());
    }

    #[test]
    fn a_reply_cut_by_the_lowered_cap_ends_the_run_but_not_one_cut_by_max_tokens() {
        let mut b = Budget::new(Some(1000), None);
        assert_eq!(b.cap(4096, &Usage::default()).unwrap(), 1000);
        let e = b
            .answered(&usage(10, 1000), Some("max_tokens"), &spent(10, 1000))
            .unwrap_err();
        assert_eq!(e.code.as_str(), "budget_exceeded");
        assert!(e.message.contains("cut at 1000"), "{}", e.message);
        let mut b = Budget::new(Some(100_000), None);
        assert_eq!(b.cap(4096, &Usage::default()).unwrap(), 4096);
        b.answered(&usage(10, 4096), Some("max_tokens"), &spent(10, 4096))
            .unwrap();
    }
}
