//! One step's request: the history (or, continuing the API thread, only what came after its last
//! reply) sent as the step asks — streamed when asked, its deltas told as they come — and sent
//! again, differently, when the API refuses the run's thread. Its reply's usage, container and
//! context edits are counted here.

use super::{cleared, Conversation};
use crate::engine::error::RunError;
use crate::engine::run::deltas::Deltas;
use crate::engine::trace::events::RunEvent;
use crate::engine::trace::pending::Pending;
use crate::engine::wire::client::Target;
use crate::engine::wire::protocol::MessageResponse;
use crate::engine::wire::request::{self, Body, Outgoing, Turn};
use crate::engine::wire::threads::{self, Plan, Replied};

impl Conversation<'_> {
    /// Sends the history as the next step's request (streamed when asked, its deltas told as
    /// they come) and counts the response's usage.
    pub async fn send(&mut self) -> Result<MessageResponse, RunError> {
        self.commit().await?;
        let cfg = self.run.cfg;
        let tool_choice = if self.limit_reached {
            Some(&*self.none_choice)
        } else {
            cfg.tool_choice.as_ref().map(|c| {
                if self.first || !c.forcing {
                    &*c.raw
                } else {
                    &*c.after_first
                }
            })
        };
        let max_tokens = self.budget.cap(cfg.max_tokens, &self.usage)?;
        let turn = Turn {
            max_tokens,
            tool_choice,
            container: self
                .container
                .as_ref()
                .map(|c| c.id.as_str())
                .or(cfg.container.as_deref()),
            stream: cfg.stream,
            thread: None,
        };
        self.sending_first = std::mem::replace(&mut self.first, false);
        if let Some(sink) = self.run.events {
            let run_id = Some(&cfg.durable_id).filter(|id| !id.is_empty()).cloned();
            sink.emit(RunEvent::StepStart {
                step: self.step,
                run_id,
            });
        }
        let traced = Pending::start(cfg, self.run.events, self.step, max_tokens, &self.messages);
        // The reply continues a paused turn (the last message): it joins that message.
        let (sent_len, joins) = (self.messages.len(), self.paused.is_some());
        // One step, one request — sent again, differently, when the API refuses its thread.
        let sent = loop {
            let sent = {
                let (messages, definitions) = (&self.messages, &self.definitions);
                let write = |plan: &Plan| {
                    let turn = Turn {
                        thread: plan.thread,
                        ..turn
                    };
                    if plan.from == 0 && plan.strip_before == 0 {
                        return request::body(cfg, definitions, messages, &turn);
                    }
                    let sent = threads::sent_messages(messages, plan);
                    request::body(cfg, definitions, &sent, &turn)
                };
                let plan = self.thread.plan();
                let restart = self.thread.restart().map(|p| move || write(&p));
                let request = Outgoing {
                    body: write(&plan),
                    threaded: plan.thread.is_some(),
                    restart: restart.as_ref().map(|r| r as &(dyn Fn() -> Body + Sync)),
                };
                let target = match &mut self.targets[usize::from(request.threaded)] {
                    Some(target) => target,
                    slot => slot.insert(Target::new(&cfg.api, request.threaded)?),
                };
                match self.run.events {
                    Some(sink) if cfg.stream => {
                        let mut forward = Deltas::new(sink, &mut self.thought_before);
                        let events: &mut (dyn FnMut(_) + Send) = &mut |e| forward.on(e);
                        self.client
                            .send_to(target, &cfg.api, request, Some(events))
                            .await
                    }
                    _ => self.client.send_to(target, &cfg.api, request, None).await,
                }
            };
            match sent {
                Err(e) if self.thread.recovers_from(e.api_error_code.as_deref()) => continue,
                sent => break sent,
            }
        };
        if let Some(traced) = traced {
            traced.end(&sent);
        }
        let mut response = sent?;
        let replied = Replied {
            id: response.id.as_deref(),
            after_cut: response.after_cut,
            fallback: response.usage.iterations.is_some_and(|i| i.fallback),
        };
        self.thread.replied(replied, sent_len, joins);
        self.usage.add(&response.usage);
        self.budget.answered(
            &response.usage,
            response.stop_reason.as_deref(),
            &self.usage,
        )?;
        if response.container.is_some() {
            self.container = response.container.clone();
        }
        if let Some(cm) = response.context_management.take() {
            let cleared = cleared::cleared_tool_uses(&cm.applied_edits);
            if cleared > 0 {
                // The model no longer sees those results: their calls may be made again.
                let calls = cleared::oldest_calls(&self.messages, cleared);
                self.memory.forget_calls(&calls);
            }
            self.applied_edits
                .get_or_insert_with(Vec::new)
                .extend(cm.applied_edits);
        }
        Ok(response)
    }
}
