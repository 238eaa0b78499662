//! The loop: request → tool calls → results → request … until an answer or a limit.

use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::api::ApiClient;
use super::config::RunConfig;
use super::error::{ErrorCode, RunError};
use super::protocol::{self, ContentBlock, MessagesRequest, RawMessage, ToolResultBlock};
use super::result::{RunOutput, ToolCall, Usage};
use super::round::{run_round, FailureMemory, Requested};
use super::tools::Tool;

/// Runs a conversation to its answer. `messages` is the history so far (the last one from the
/// user); `tools` are the tools offered. Cancelling `cancel` ends the run at once with `aborted`,
/// dropping the request in flight and every running tool.
pub async fn run(
    client: &ApiClient,
    cfg: &RunConfig,
    tools: &[Tool],
    messages: Vec<RawMessage>,
    cancel: &CancellationToken,
) -> Result<RunOutput, RunError> {
    if cancel.is_cancelled() {
        return Err(aborted());
    }
    // The calls made so far live out here, so that a run ended by its signal still reports them.
    let mut tool_calls: Vec<ToolCall> = Vec::new();
    let finished = {
        let work = run_loop(client, cfg, tools, messages, &mut tool_calls);
        tokio::pin!(work);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            result = &mut work => Some(result),
        }
    };
    let mut error = match finished {
        Some(Ok(output)) => return Ok(output),
        Some(Err(error)) => error,
        None => aborted(),
    };
    error.tool_calls = tool_calls;
    Err(error)
}

fn aborted() -> RunError {
    RunError::new(
        ErrorCode::Aborted,
        "The run was aborted by its AbortSignal.",
    )
}

async fn run_loop(
    client: &ApiClient,
    cfg: &RunConfig,
    tools: &[Tool],
    mut messages: Vec<RawMessage>,
    tool_calls: &mut Vec<ToolCall>,
) -> Result<RunOutput, RunError> {
    let definitions: Vec<&RawValue> = tools.iter().map(|t| &*t.definition).collect();
    let mut usage = Usage::default();
    let mut memory = FailureMemory::default();
    let mut rounds = 0u32;
    loop {
        let body = request_body(cfg, &definitions, &messages);
        let response = client.create_message(&cfg.api, body).await?;
        usage.add(&response.usage);
        let (blocks, requested) = read_content(&response.content)?;
        let stop_reason = response.stop_reason.clone().unwrap_or_default();
        messages.push(protocol::assistant_message(&response.content));

        if requested.is_empty() {
            let text: String = blocks
                .iter()
                .filter(|b| b.kind == "text")
                .filter_map(|b| b.text.as_deref())
                .collect();
            return Ok(RunOutput {
                text,
                tool_calls: std::mem::take(tool_calls),
                stop_reason,
                usage,
                messages,
            });
        }
        if rounds >= cfg.max_tool_iterations {
            let names: Vec<&str> = requested.iter().map(|r| r.name.as_str()).collect();
            return Err(RunError::new(
                ErrorCode::MaxIterationsExceeded,
                format!(
                    "The model asked for tools ({}) after {rounds} tool round(s), the limit set by maxToolIterations; \
                     they were not run. Raise maxToolIterations, or make the tools' answers more complete.",
                    names.join(", ")
                ),
            ));
        }
        rounds += 1;
        let settled = match run_round(requested, tools, cfg, &mut memory).await {
            Ok(settled) => settled,
            Err(mut error) => {
                // The failed round's calls join the earlier ones; `run` attaches them all.
                tool_calls.append(&mut error.tool_calls);
                return Err(error);
            }
        };
        let blocks: Vec<ToolResultBlock> = settled
            .iter()
            .map(|s| ToolResultBlock {
                kind: "tool_result",
                tool_use_id: &s.call.tool_use_id,
                content: &s.content,
                is_error: s.call.is_error,
            })
            .collect();
        messages.push(protocol::raw_message("user", &blocks));
        tool_calls.extend(settled.into_iter().map(|s| s.call));
    }
}

/// Reads a reply's content: its blocks, and the `tool_use` calls among them.
pub(crate) fn read_content(
    content: &RawValue,
) -> Result<(Vec<ContentBlock<'_>>, Vec<Requested>), RunError> {
    let blocks: Vec<ContentBlock> = serde_json::from_str(content.get()).map_err(|e| {
        RunError::new(
            ErrorCode::UnknownError,
            format!("The model's reply has content blocks that cannot be read: {e}."),
        )
    })?;
    let requested = tool_uses(&blocks)?;
    Ok((blocks, requested))
}

/// The `tool_use` blocks of a reply, checked: each needs an id, a name and an input.
fn tool_uses(blocks: &[ContentBlock]) -> Result<Vec<Requested>, RunError> {
    let mut out = Vec::new();
    for (i, block) in blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.kind == "tool_use")
    {
        let (Some(id), Some(name), Some(input)) = (&block.id, &block.name, block.input) else {
            return Err(RunError::new(
                ErrorCode::UnknownError,
                format!("The model's reply has a tool_use block (content.{i}) without an id, a name or an input."),
            ));
        };
        out.push(Requested {
            id: id.clone(),
            name: name.clone(),
            input: input.to_owned(),
        });
    }
    Ok(out)
}

/// Serialises a request; the history is copied as pre-serialised text, never re-encoded.
fn request_body(cfg: &RunConfig, tools: &[&RawValue], messages: &[RawMessage]) -> Vec<u8> {
    let request = MessagesRequest {
        model: &cfg.model,
        max_tokens: cfg.max_tokens,
        system: cfg.system.as_deref(),
        temperature: cfg.temperature,
        tool_choice: cfg.tool_choice.as_deref(),
        tools,
        messages,
    };
    // Sized up front: the history is most of the body, and growing the buffer as it is written
    // would copy it again and again.
    let raw_len = |r: Option<&RawValue>| r.map_or(0, |r| r.get().len());
    let size = 256
        + cfg.model.len()
        + raw_len(request.system)
        + raw_len(request.tool_choice)
        + tools.iter().map(|t| t.get().len() + 1).sum::<usize>()
        + messages.iter().map(|m| m.get().len() + 1).sum::<usize>();
    let mut body = Vec::with_capacity(size);
    serde_json::to_writer(&mut body, &request)
        .expect("a request of strings, numbers and raw JSON always serialises");
    body
}
