//! A run taken over from a process that stopped goes on from its journal: how far it had got,
//! and the round of its last committed reply when that round had not finished.

use super::Conversation;
use crate::engine::error::RunError;
use crate::engine::output::run_output::RunOutput;
use crate::engine::report::usage::Usage;
use crate::engine::run::model_reply::Reply;
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
}
