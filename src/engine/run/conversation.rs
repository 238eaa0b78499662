//! The state of one run's conversation with the model, and the verbs the loop is told in: send
//! the history, take the reply, answer its tool round (or continue a paused turn), and finish.

use std::collections::HashSet;

use serde_json::value::RawValue;

use crate::engine::error::RunError;
use crate::engine::output::run_output::RunOutput;
use crate::engine::report::usage::Usage;
use crate::engine::run::budget::Budget;
use crate::engine::run::call_counts::CallMemory;
use crate::engine::run::config::{OnMaxIterations, RunConfig};
use crate::engine::run::model_reply::{self, tool_names, Reply, Requested};
use crate::engine::run::posted_history;
use crate::engine::run::round::{run_round, RoundContext, RoundOutcome};
use crate::engine::run::settle_round::{not_run_at_limit, results_message, Answer};
use crate::engine::run::stop::StopReason;
use crate::engine::tools::approval::{Decision, PendingApproval, APPROVAL_REQUIRED};
use crate::engine::tools::changes::{ToolChange, Withdrawn};
use crate::engine::trace::events::RunEvent;
use crate::engine::wire::client::{ApiClient, Target};
use crate::engine::wire::protocol::{self, Container, MessageResponse, RawMessage};
use crate::engine::wire::threads::ApiThread;

mod cleared;
mod continued;
mod send;
mod taken_over;

/// A paused turn's content, sent back as the last message, and how many thinking blocks of it
/// the reasoning already holds.
struct Paused {
    content: Box<RawValue>,
    thoughts: usize,
}

/// One run's conversation: the history as it grows, and what the run has counted so far.
pub struct Conversation<'r> {
    client: &'r ApiClient,
    run: RoundContext<'r>,
    /// The tool definitions, as sent with every request.
    definitions: Vec<&'r RawValue>,
    /// `tool_choice: none`, for the answer asked for at the tool-round limit.
    none_choice: Box<RawValue>,
    /// The history: the prompt's, then every reply and every round's results.
    pub(super) messages: Vec<RawMessage>,
    /// How much of the history the observer was told ([`Conversation::commit`]).
    committed: usize,
    /// How much of the history the API holds, and what the next request sends of it.
    thread: ApiThread,
    /// Every call id of the conversation: no reply may reuse one.
    call_ids: HashSet<String>,
    usage: Usage,
    /// The run's token budget (`maxTotalTokens`), as the requests spend it.
    budget: Budget,
    memory: CallMemory,
    /// The run's tools that tool changes in the history have withdrawn.
    withdrawn: Withdrawn,
    /// Every reply's `context_management.applied_edits`, once a reply had one.
    applied_edits: Option<Vec<Box<RawValue>>>,
    /// The thinking of every reply, in order.
    reasoning: Vec<String>,
    /// Tool rounds (and paused server-tool turns) so far.
    rounds: u32,
    /// The step being sent (step 0 is the first request).
    step: u32,
    /// The model has not answered a request yet (a compaction pause is not an answer): a
    /// forcing `toolChoice` still applies.
    first: bool,
    /// The request in flight is the first the model answers.
    sending_first: bool,
    /// The container the last reply ran in.
    container: Option<Container>,
    /// The content of a paused turn (server tools, or a compaction), sent back as the last
    /// message.
    paused: Option<Paused>,
    /// Compaction pauses continued in a row, nothing sampled between them.
    compacting: u32,
    /// The last of them summarised the history (its compaction block has content).
    summarised: bool,
    /// Set once the tool-round limit was answered (`onMaxIterations: "answer"`).
    limit_reached: bool,
    /// Some thinking was shown earlier in the run (streamed deltas join blocks by a blank line).
    thought_before: bool,
    /// Where the run's requests go, made at its first request (unthreaded, then threaded):
    /// the URL, headers and secrets are the run's, not each request's.
    targets: [Option<Target>; 2],
}

impl<'r> Conversation<'r> {
    /// A conversation going on from `messages`, whose tool call ids and tool changes (read and
    /// checked by `trust.rs`) are `call_ids` and `changes`.
    pub fn new(
        client: &'r ApiClient,
        run: RoundContext<'r>,
        messages: Vec<RawMessage>,
        call_ids: HashSet<String>,
        changes: &[ToolChange],
    ) -> Self {
        let mut withdrawn = Withdrawn::default();
        withdrawn.apply(changes);
        Conversation {
            client,
            definitions: run.tools.iter().map(|t| &*t.definition).collect(),
            none_choice: RawValue::from_string(r#"{"type":"none"}"#.to_owned())
                .expect("a JSON object"),
            thread: ApiThread::new(run.cfg.api_threads && run.cfg.api.platform.has_threads()),
            run,
            committed: messages.len(),
            messages,
            call_ids,
            usage: Usage::default(),
            budget: Budget::new(run.cfg.max_total_tokens, run.cfg.thinking_budget()),
            memory: CallMemory::default(),
            withdrawn,
            applied_edits: None,
            reasoning: Vec::new(),
            rounds: 0,
            step: 0,
            first: true,
            sending_first: false,
            container: None,
            paused: None,
            compacting: 0,
            summarised: false,
            limit_reached: false,
            thought_before: false,
            targets: [None, None],
        }
    }

    /// The run's settings.
    pub fn cfg(&self) -> &'r RunConfig {
        self.run.cfg
    }

    /// Reads the response's reply; a paused turn and its continuation are one assistant
    /// message. Its thinking joins the run's reasoning.
    pub fn take_reply(&mut self, response: MessageResponse) -> Result<Reply, RunError> {
        // Whether this response itself (not the paused part before it) summarised the history.
        let fresh_summary = response.stop_reason.as_deref() == Some("compaction")
            && model_reply::summarises(&response.content);
        let (content, thought_before) = match self.paused.take() {
            Some(before) => {
                self.messages.pop();
                self.committed = self.committed.min(self.messages.len());
                let joined = protocol::join_content(&before.content, &response.content);
                (joined, before.thoughts)
            }
            None => (response.content, 0),
        };
        let mut reply = Reply::read(content, response.stop_reason, &response.usage)?;
        // The paused part's thinking is in the reasoning already.
        let thoughts = reply.thinking.len();
        self.reasoning
            .extend(reply.thinking.drain(..).skip(thought_before));
        reply.thoughts = thoughts;
        reply.fresh_summary = fresh_summary;
        if reply.stop != StopReason::Compaction {
            self.compacting = 0;
        }
        if reply.compacted {
            // What earlier calls returned is summarised away: the model may need to call again.
            self.memory.forget_successes();
        }
        self.withdrawn.apply(&reply.tool_changes);
        Ok(reply)
    }

    /// The reply answers: the run ends with it (with `output`, once the answer is read as the
    /// schema asks). An empty reply is an answer with no text, and stays out of the history:
    /// the API refuses an empty message anywhere but last.
    pub async fn answered(mut self, reply: Reply) -> Result<RunOutput, RunError> {
        if !protocol::is_empty_content(&reply.content) {
            self.messages
                .push(protocol::assistant_message(&reply.content));
        }
        self.commit_last().await?;
        self.step_finished(&reply, false);
        let cfg = self.run.cfg;
        let value = match &cfg.output {
            Some(format) => Some(format.read(&reply, cfg.max_tokens, self.usage)?),
            None => None,
        };
        let mut output = self.output(reply.text, reply.stop_reason);
        output.output = value;
        Ok(output)
    }

    /// The model declined: the run ends with its reply, which stays out of the history.
    pub fn refused(mut self, reply: Reply) -> RunOutput {
        self.step_finished(&reply, false);
        self.output(reply.text, reply.stop_reason)
    }

    /// A reply asking for tools was cut, so their input may be incomplete: the run ends, nothing
    /// run.
    pub fn truncated(&self, reply: &Reply) -> RunError {
        RunError::output_truncated(
            format!(
                "The model's reply asking for {} was cut ({}), so its input may be incomplete; nothing was run. \
                 Raise maxTokens (now {}), or shorten the history.",
                tool_names(&reply.requested),
                reply.stop_reason,
                self.run.cfg.max_tokens
            ),
        )
    }

    /// Answers the reply's tool calls: a round is run (or, past the tool-round limit, answered
    /// without running) and its results join the history for the next request. Returns the
    /// run's output when the round waits for a person's decision instead.
    pub async fn answer_round(&mut self, reply: Reply) -> Result<Option<RunOutput>, RunError> {
        posted_history::add_reply_ids(&mut self.call_ids, &reply.requested)?;
        self.messages
            .push(protocol::assistant_message(&reply.content));
        self.starting_with_commit(&reply.requested);
        self.commit().await?;
        self.round_of(reply).await
    }

    /// The round of a reply in the history (its last message).
    async fn round_of(&mut self, mut reply: Reply) -> Result<Option<RunOutput>, RunError> {
        let requested = std::mem::take(&mut reply.requested);
        let answers = if self.rounds >= self.run.cfg.max_tool_iterations {
            self.past_the_limit(requested)?
        } else {
            match self.tool_round(requested, None).await? {
                RoundOutcome::Done(answers) => answers,
                RoundOutcome::Paused { answers, pending } => {
                    return Ok(Some(self.pause(reply, answers, pending).await?))
                }
            }
        };
        self.step_finished(&reply, true);
        self.step += 1;
        self.messages.push(results_message(&answers));
        Ok(None)
    }

    /// Runs one tool round of this conversation.
    pub async fn tool_round(
        &mut self,
        requested: Vec<Requested>,
        resumed: Option<&[Decision]>,
    ) -> Result<RoundOutcome, RunError> {
        self.rounds += 1;
        run_round(
            requested,
            self.run,
            &mut self.memory,
            &self.withdrawn,
            resumed,
        )
        .await
    }

    /// The model asks for tools after the last round allowed: the run ends, or
    /// (`onMaxIterations: "answer"`) the calls are answered without running and the model is
    /// asked once more, for an answer.
    fn past_the_limit(&mut self, requested: Vec<Requested>) -> Result<Vec<Answer>, RunError> {
        let rounds = self.rounds;
        let cfg = self.run.cfg;
        if self.limit_reached || cfg.on_max_iterations == OnMaxIterations::Error {
            return Err(RunError::max_iterations(
                format!(
                    "The model asked for tools ({}) after {rounds} tool round(s), the limit set by maxToolIterations; \
                     they were not run. Raise maxToolIterations, or make the tools' answers more complete.",
                    tool_names(&requested)
                ),
            ));
        }
        self.limit_reached = true;
        Ok(not_run_at_limit(
            requested,
            rounds,
            self.run.log,
            self.run.events,
        ))
    }

    /// The round waits for a person: nothing goes to the model until they decide. The history
    /// ends with the tool_use turn and the results of the calls that did run; the run ends with
    /// `stopReason: "approval_required"` and the calls that wait.
    async fn pause(
        &mut self,
        reply: Reply,
        answers: Vec<Answer>,
        pending: Vec<PendingApproval>,
    ) -> Result<RunOutput, RunError> {
        if !answers.is_empty() {
            self.messages.push(results_message(&answers));
        }
        self.commit_last().await?;
        self.step_finished(&reply, true);
        let mut output = self.output(reply.text, APPROVAL_REQUIRED.to_owned());
        output.pending_approvals = pending;
        Ok(output)
    }

    /// Commits (with `RunConfig::journal`) what the history holds since the last commit, and
    /// waits for it: a store keeps each step before the run goes on.
    pub(super) async fn commit(&mut self) -> Result<(), RunError> {
        self.commit_step(false).await
    }

    /// [`Self::commit`] for the step the run ends with, which the journal may keep with the
    /// run's ending.
    async fn commit_last(&mut self) -> Result<(), RunError> {
        self.commit_step(true).await
    }

    async fn commit_step(&mut self, last: bool) -> Result<(), RunError> {
        let Some(journal) = &self.run.cfg.journal else {
            return Ok(());
        };
        let at = self.committed.min(self.messages.len());
        if at == self.messages.len() && at == self.committed {
            return Ok(());
        }
        let messages = &self.messages[at..];
        let progress = self.progress();
        if last {
            journal.0.commit_last(at, messages, &progress).await?;
        } else {
            journal.0.commit(at, messages, &progress).await?;
        }
        self.committed = self.messages.len();
        Ok(())
    }

    /// Tells the observer the step is over, with the calls of its round when it had one.
    fn step_finished(&self, reply: &Reply, with_round: bool) {
        if let Some(sink) = self.run.events {
            sink.emit(RunEvent::StepFinish {
                step: self.step,
                stop_reason: reply.stop_reason.clone(),
                usage: reply.usage,
                tool_calls: if with_round {
                    self.run.log.last_round()
                } else {
                    Vec::new()
                },
            });
        }
    }

    /// What the run hands back, ending with `text`; the calls are added by the caller.
    fn output(&mut self, text: String, stop_reason: String) -> RunOutput {
        RunOutput {
            text,
            reasoning: self.reasoning.join("\n\n"),
            tool_calls: Vec::new(),
            stop_reason,
            usage: self.usage,
            messages: std::mem::take(&mut self.messages),
            limit_reached: self.limit_reached,
            container: self.container.take(),
            pending_approvals: Vec::new(),
            applied_edits: self.applied_edits.take(),
            output: None,
            run_id: None,
            resumed: None,
        }
    }
}
