//! A turn the API paused and the loop continues: a long server-tool turn (`pause_turn`, a
//! round) or a compaction (`stop_reason: "compaction"`, not a round). The reply goes back as the
//! last message, unchanged, and its continuation joins it.

use super::{Conversation, Paused};
use crate::engine::error::RunError;
use crate::engine::run::model_reply::Reply;
use crate::engine::wire::protocol;

/// Compaction pauses in a row (failed ones: no summary) before the run gives up.
const MAX_COMPACTIONS_IN_A_ROW: u32 = 3;

impl Conversation<'_> {
    /// A paused server-tool turn goes back to the model to continue, if rounds are left.
    pub fn continue_paused(&mut self, reply: Reply) -> Result<(), RunError> {
        let rounds = self.rounds;
        if rounds >= self.run.cfg.max_tool_iterations {
            return Err(RunError::max_iterations(
                format!(
                    "The model's server-tool turn was paused (pause_turn) after {rounds} round(s), the limit set by maxToolIterations; \
                     it was not continued. Raise maxToolIterations to let long server-tool turns finish."
                ),
            ));
        }
        self.rounds += 1;
        self.continue_turn(reply);
        Ok(())
    }

    /// The API compacted the history and handed the turn back (`stop_reason: "compaction"`):
    /// the reply goes back as the last message, nothing added, for the model to answer. Not a
    /// tool round: it does not count against `maxToolIterations`.
    /// A compaction again right after one that summarised the history, without the model
    /// answering, means the API compacts every request (the system prompt and tools alone
    /// cross the trigger); and failed compactions are retried a few times at most: the run ends
    /// rather than loop.
    pub fn continue_compacted(&mut self, reply: Reply) -> Result<(), RunError> {
        if (self.compacting > 0 && self.summarised) || self.compacting >= MAX_COMPACTIONS_IN_A_ROW {
            return Err(RunError::compacting_in_circles());
        }
        // The model has not answered yet: a forcing toolChoice still applies to its answer.
        self.first = self.sending_first;
        self.compacting += 1;
        self.summarised = reply.fresh_summary;
        self.continue_turn(reply);
        Ok(())
    }

    /// A paused turn goes back as the last message, unchanged; its continuation joins it.
    fn continue_turn(&mut self, reply: Reply) {
        self.step_finished(&reply, false);
        self.step += 1;
        self.messages
            .push(protocol::assistant_message(&reply.content));
        self.paused = Some(Paused {
            thoughts: reply.thoughts,
            content: reply.content,
        });
    }
}
