//! A run taken over from a process that stopped goes on from its journal: how far it had got,
//! and the round of its last committed reply when that round had not finished.

use super::Conversation;
use crate::engine::error::RunError;
use crate::engine::output::run_output::RunOutput;
use crate::engine::report::usage::Usage;
use crate::engine::run::model_reply::{Reply, Requested};
use crate::engine::trace::events::Progress;
use crate::engine::wire::protocol;

impl Conversation<'_> {
    /// How far the run got, as its journal keeps it.
    pub(super) fn progress(&self) -> Progress {
        let u = self.usage;
        Progress {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_input_tokens: u.cache_read_input_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens,
            rounds: self.rounds,
            step: self.step,
        }
    }

    /// A run taken over goes on from how far its journal says it got.
    pub fn go_on_from(&mut self, progress: &Progress) {
        self.usage = Usage {
            input_tokens: progress.input_tokens,
            output_tokens: progress.output_tokens,
            cache_read_input_tokens: progress.cache_read_input_tokens,
            cache_creation_input_tokens: progress.cache_creation_input_tokens,
        };
        self.rounds = progress.rounds;
        self.step = progress.step;
    }

    /// A run taken over whose last reply (the history's last message, committed) asked for
    /// tools that were not all answered: its round runs again (the journal knows which calls
    /// finished, and which started), as if the reply had just come.
    pub async fn retake_round(&mut self) -> Result<Option<RunOutput>, RunError> {
        let content = self
            .messages
            .last()
            .and_then(|m| protocol::content_of(m.get()))
            .ok_or_else(|| RunError::internal("a run taken over has no reply to go on from"))?;
        let reply = Reply::read(content, Some("tool_use".to_owned()), &Default::default())?;
        self.round_of(reply).await
    }

    /// Tells the journal which of the reply's calls start as soon as it is committed, so their
    /// `started` records go in that commit: those the round will run at once (all of them, or
    /// the first one in order), of offered tools that ask no person first and are run again when
    /// interrupted (for `onInterrupted: "report"` a start must be a real one). A call recorded
    /// so that then does not run (its input refused) is answered without running on a take-over
    /// too; one whose process dies in between runs as attempt 2, with the same key.
    pub(super) fn starting_with_commit(&self, requested: &[Requested]) {
        let (cfg, tools) = (self.run.cfg, self.run.tools);
        let Some(journal) = &cfg.journal else {
            return;
        };
        if self.rounds >= cfg.max_tool_iterations {
            return;
        }
        let runs_at_once = |r: &&Requested| {
            tools
                .iter()
                .any(|t| t.name == r.name && t.approval.is_none() && !t.report_interrupted)
        };
        let take = if cfg.parallel_tool_calls {
            usize::MAX
        } else {
            1
        };
        let ids: Vec<String> = requested
            .iter()
            .take(take)
            .filter(runs_at_once)
            .map(|r| r.id.clone())
            .collect();
        if !ids.is_empty() {
            journal.0.will_start(ids);
        }
    }
}
