//! Rules across messages: tool_use / tool_result pairing, server tool blocks and their results,
//! where thinking blocks must be, and the container that results for code-called tools continue.

use std::collections::HashSet;

use serde_json::Value;

use super::blocks::is_server_result;
use super::CONTAINER_REQUIRED;

fn blocks(message: &Value) -> &[Value] {
    message["content"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn ids_of<'a>(blocks: &'a [Value], kind: &str, field: &str) -> Vec<&'a str> {
    blocks
        .iter()
        .filter(|b| b["type"] == kind)
        .filter_map(|b| b[field].as_str())
        .collect()
}

/// The pairing rules of `tool_use` and `tool_result`; the error is the API's 400 message.
pub fn check_pairing(messages: &[Value]) -> Result<(), String> {
    let mut seen = HashSet::new();
    for (n, message) in messages.iter().enumerate() {
        let uses = ids_of(blocks(message), "tool_use", "id");
        for id in &uses {
            if !seen.insert(*id) {
                return Err(format!(
                    "messages.{n}: `tool_use` ids must be unique ({id})"
                ));
            }
        }
        if !uses.is_empty() {
            let next = messages.get(n + 1).filter(|m| m["role"] == "user");
            let next_blocks = next.map(blocks).unwrap_or(&[]);
            let results = ids_of(next_blocks, "tool_result", "tool_use_id");
            let missing: Vec<&str> = uses
                .iter()
                .copied()
                .filter(|id| !results.contains(id))
                .collect();
            if !missing.is_empty() {
                return Err(format!(
                    "messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. \
                     Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                    missing.join(", ")
                ));
            }
            let leading = next_blocks
                .iter()
                .take_while(|b| b["type"] == "tool_result")
                .count();
            if leading < uses.len() {
                return Err(format!(
                    "messages.{}: Did not find {} `tool_result` block(s) at the beginning of this message. \
                     Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
                    n + 1,
                    uses.len()
                ));
            }
        }
        if message["role"] == "user" {
            let previous_uses = match n.checked_sub(1).map(|p| &messages[p]) {
                Some(p) if p["role"] == "assistant" => ids_of(blocks(p), "tool_use", "id"),
                _ => Vec::new(),
            };
            let mut answered = HashSet::new();
            for (m, block) in blocks(message)
                .iter()
                .enumerate()
                .filter(|(_, b)| b["type"] == "tool_result")
            {
                let id = block["tool_use_id"].as_str().unwrap_or_default();
                if !previous_uses.contains(&id) {
                    return Err(format!(
                        "messages.{n}.content.{m}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. \
                         Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                    ));
                }
                if !answered.insert(id) {
                    return Err(format!(
                        "messages.{n}.content.{m}: `tool_result` ids must be unique ({id})"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A `tool_use` called from code execution (programmatic tool calling), not by the model directly.
fn called_by_code(block: &Value) -> bool {
    block["type"] == "tool_use"
        && block["caller"].is_object()
        && block["caller"]["type"] != "direct"
}

/// A user message of `tool_result` blocks only: the tool loop goes on, no new turn starts.
fn only_tool_results(message: &Value) -> bool {
    let blocks = blocks(message);
    message["role"] == "user"
        && !blocks.is_empty()
        && blocks.iter().all(|b| b["type"] == "tool_result")
}

/// Whether the `server_tool_use` `id` of assistant message `n` may wait for its result: the
/// messages after it, up to the assistant message holding that result (or the end), go on with
/// the tool loop (user messages of tool results only). Real runs do this: a tool search or a code
/// execution running beside client calls gets its result in the reply after their results.
fn may_wait(messages: &[Value], n: usize, id: &str) -> bool {
    for message in &messages[n + 1..] {
        if message["role"] == "assistant"
            && blocks(message)
                .iter()
                .any(|b| is_server_result(b["type"].as_str()) && b["tool_use_id"] == id)
        {
            return true;
        }
        if message["role"] == "user" && !only_tool_results(message) {
            return false;
        }
    }
    true
}

/// Server tools: each `server_tool_use` is followed by its result block in the same message,
/// except in the final message (a paused turn sent back to continue), while code execution
/// waits for the results of code-called tools the final user message holds, or while the tool
/// loop goes on (`may_wait`), its result then in a later assistant message.
pub fn check_server_pairing(messages: &[Value]) -> Result<(), String> {
    let last = messages.len() - 1;
    // Ids left open by an earlier assistant message that may wait: their result may come later.
    let mut waiting: HashSet<&str> = HashSet::new();
    for (n, message) in messages.iter().enumerate() {
        if message["role"] != "assistant" {
            continue;
        }
        let blocks = blocks(message);
        let pending_allowed = n == last || (n + 1 == last && blocks.iter().any(called_by_code));
        let mut open: Vec<&str> = Vec::new();
        for (m, block) in blocks.iter().enumerate() {
            let kind = block["type"].as_str();
            if kind == Some("server_tool_use") {
                open.push(block["id"].as_str().unwrap_or_default());
            } else if is_server_result(kind) {
                let id = block["tool_use_id"].as_str().unwrap_or_default();
                if let Some(at) = open.iter().position(|o| *o == id) {
                    open.remove(at);
                } else if !waiting.remove(id) {
                    return Err(format!(
                        "messages.{n}.content.{m}: `{}` block has tool_use_id {id}, which matches no `server_tool_use` block before it in this message.",
                        kind.unwrap_or_default()
                    ));
                }
            }
        }
        let unanswered: Vec<&str> = if pending_allowed {
            Vec::new()
        } else {
            open.iter()
                .copied()
                .filter(|id| !may_wait(messages, n, id))
                .collect()
        };
        if !unanswered.is_empty() {
            return Err(format!(
                "messages.{n}: `server_tool_use` ids were found without their result blocks: {}. \
                 A `server_tool_use` block must be followed by its result block in the same message, \
                 unless it is in the final message (a paused turn).",
                unanswered.join(", ")
            ));
        }
        waiting.extend(open);
    }
    Ok(())
}

/// The index of the last message that is not a `system` one: tool changes after the final
/// results or reply leave the turn they follow the current one.
fn final_turn(messages: &[Value]) -> usize {
    messages
        .iter()
        .rposition(|m| m["role"] != "system")
        .unwrap_or(messages.len() - 1)
}

/// With thinking on, the assistant message of the current tool loop starts with a thinking block.
pub fn check_thinking_placement(messages: &[Value]) -> Result<(), String> {
    let last = final_turn(messages);
    let final_message = &messages[last];
    let answers_tools = final_message["role"] == "user"
        && blocks(final_message)
            .iter()
            .any(|b| b["type"] == "tool_result");
    let n = if answers_tools && last >= 1 && messages[last - 1]["role"] == "assistant" {
        last - 1
    } else if final_message["role"] == "assistant"
        && blocks(final_message)
            .iter()
            .any(|b| b["type"] == "tool_use" || b["type"] == "server_tool_use")
    {
        last
    } else {
        return Ok(());
    };
    let Some(first) = blocks(&messages[n]).first() else {
        return Ok(());
    };
    let kind = first["type"].as_str().unwrap_or_default();
    if kind == "thinking" || kind == "redacted_thinking" {
        return Ok(());
    }
    Err(format!(
        "messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{kind}`. \
         When `thinking` is enabled, a final `assistant` message must start with a thinking block \
         (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include \
         thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult \
         our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
    ))
}

/// With thinking off, a final (prefilled or paused) assistant message holds no thinking block.
pub fn check_no_final_thinking(messages: &[Value]) -> Result<(), String> {
    let n = messages.len() - 1;
    if messages[n]["role"] != "assistant" {
        return Ok(());
    }
    match blocks(&messages[n])
        .iter()
        .position(|b| b["type"] == "thinking" || b["type"] == "redacted_thinking")
    {
        Some(m) => Err(format!(
            "messages.{n}.content.{m}: When thinking is disabled, an `assistant` message in the final position \
             cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."
        )),
        None => Ok(()),
    }
}

/// Results for code-called tools continue a container, which the request must name.
pub(super) fn check_pending_code_execution(body: &Value, messages: &[Value]) -> Result<(), String> {
    let [.., previous, last] = &messages[..=final_turn(messages)] else {
        return Ok(());
    };
    let pending = last["role"] == "user"
        && previous["role"] == "assistant"
        && blocks(previous).iter().any(called_by_code);
    if pending && body["container"].is_null() {
        return Err(CONTAINER_REQUIRED.into());
    }
    Ok(())
}
