//! The words for a failed tool call: what the model is told (`is_error` results, written so it
//! can act on them and holding nothing internal) and what the developer is told. Every sentence
//! either of them reads after a failure is written here; the code that finds a failure passes
//! only its facts (the tool's name, the error's text, the API version), and so does the JS layer
//! (lib/tool-bridge.js settles a call with a kind and a raw detail). `tests/house.rs` checks
//! that no such words are written anywhere else.

/// Model: the tool it named is not offered.
pub fn unknown_tool_for_model(name: &str, offered: &[&str]) -> String {
    if offered.is_empty() {
        format!("The tool {name} does not exist. No tools are available; answer without tools.")
    } else {
        format!(
            "The tool {name} does not exist. Available tools: {}.",
            offered.join(", ")
        )
    }
}

/// Developer: the tool the model named is not offered.
pub fn unknown_tool_for_developer(name: &str, offered: &[&str]) -> String {
    format!(
        "The model called the tool {name:?}, which is not offered in this run (offered: {}). It was not run.",
        if offered.is_empty() { "none".to_owned() } else { offered.join(", ") }
    )
}

/// Model: its input failed the schema; one line per field.
pub fn invalid_input_for_model(name: &str, problems: &[String]) -> String {
    format!(
        "Invalid input for {name}: {}. Call {name} again with input that matches its input_schema.",
        problems.join("; ")
    )
}

/// Developer: the model's input failed the schema.
pub fn invalid_input_for_developer(name: &str, problems: &[String]) -> String {
    format!(
        "The model's input for {name} does not match its input_schema: {}. The tool was not run.",
        problems.join("; ")
    )
}

/// Model: the tool failed in a way it must not hear the details of.
pub fn internal_error_for_model(name: &str) -> String {
    format!("Internal error while running {name}. Try again later or tell the user.")
}

/// Model: the tool's own words for its failure (a `ToolError`, an MCP result with `isError`),
/// or, as the API refuses an empty `is_error` result ("content cannot be empty if `is_error` is
/// true", which would end the whole run), the internal error's words when it gave none.
pub fn tool_error_for_model(name: &str, message: String) -> String {
    if message.trim().is_empty() {
        internal_error_for_model(name)
    } else {
        message
    }
}

/// Developer: the tool failed in its own words.
pub fn tool_error_for_developer(name: &str, message: &str) -> String {
    format!(
        "The tool {name} failed in its own words (a ToolError, or an MCP result with isError): {message}"
    )
}

/// Developer, stop mode: the tool failed in its own words.
pub fn tool_error_stop(name: &str, message: &str) -> String {
    format!(
        "The tool {name} failed: {} {STOP_ADVICE}",
        sentence(message)
    )
}

/// Developer: the tool failed (it threw, or its output could not be read); `why` is one of
/// the fragments below or a thrown error's own text.
pub fn failed_for_developer(name: &str, why: &str) -> String {
    format!("The tool {name} failed: {why}")
}

/// Developer, stop mode: the tool failed.
pub fn failed_stop(name: &str, why: &str) -> String {
    format!(
        "{} {STOP_ADVICE}",
        sentence(&failed_for_developer(name, why))
    )
}

/// Developer: the tool said its output is JSON, and it does not parse.
pub fn bad_json_for_developer(name: &str) -> String {
    format!("The tool {name} returned output that is not valid JSON.")
}

/// Developer: the tool's content blocks are not a JSON array.
pub fn blocks_not_array_for_developer(name: &str) -> String {
    format!("The tool {name} returned content blocks that are not a JSON array.")
}

/// Developer: the tool's content blocks hold a cited text block (at `at`), which API version
/// `version` refuses in a user message (removed in `removed_in`; `legacy` still takes it).
pub fn cited_blocks_for_developer(
    name: &str,
    at: &str,
    version: &str,
    removed_in: &str,
    legacy: &str,
) -> String {
    format!(
        "The tool {name} returned content blocks with citations on a text block ({at}): a tool result goes in a user message, which API version {version} refuses citations in (removed in {removed_in}). Leave the citations out of what the tool returns, or pin apiVersion: \"{legacy}\"."
    )
}

/// Why a JS tool failed, the `why` of [`failed_for_developer`]: the value it returned has no
/// JSON form (`detail`: the JS error's message).
pub fn unserializable_value(detail: &str) -> String {
    format!("it returned a value that cannot be turned into JSON ({detail})")
}

/// Why a JS tool failed: its `toolResult` blocks could not be turned into JSON.
pub fn unserializable_blocks(detail: &str) -> String {
    format!("its toolResult blocks cannot be turned into JSON ({detail})")
}

/// Why a JS tool failed: the wrapper around it threw (`detail`: what was thrown, described).
pub fn wrapper_failed(detail: &str) -> String {
    format!("the tool wrapper failed: {detail}")
}

/// Why a JS tool failed: the wrapper threw something that could not even be described.
pub const WRAPPER_FAILED_UNDESCRIBED: &str =
    "the tool wrapper failed on a value it could not describe";

/// Why a JS tool failed: the engine gave up on the call while its Standard Schema checked the
/// input, so `execute` never started.
pub const CANCELLED_IN_CHECK: &str = "the call was cancelled while its input was checked";

/// Why a JS tool failed: its thread still runs, but the call's reply never came.
pub const REPLY_NEVER_CAME: &str = "its reply never came";

/// Why a JS tool failed: calling its function failed (`status`: the napi status).
pub fn calling_failed(status: impl std::fmt::Display) -> String {
    format!("calling it failed: {status}")
}

/// What the model is told, in a stored thread, of a call that never ran because its run ended first.
pub const NOT_RUN_RUN_ENDED: &str =
    "This call was not run: the run that asked for it ended before it could run.";

/// What the model is told, in a stored thread, of a call a person never decided on, when the user wrote again.
pub const UNDECIDED_USER_WROTE: &str =
    "The user sent a new message instead of deciding on this call, so it was not run.";

/// Why a JS tool failed: it was refused at dispatch, the engine having given up on it first.
pub const NOT_STARTED: &str = "it was not started: the call was cancelled first";

/// Model, in an MCP result: audio (of type `mime`), which a `tool_result` cannot hold.
pub fn mcp_audio(mime: &str) -> String {
    format!("[The tool returned audio ({mime}), which cannot be passed on.]")
}

/// Model, in an MCP result: a content block of a type this package does not know.
pub fn mcp_unknown_block(kind: &str) -> String {
    format!("[The tool returned content of type {kind}, which is not passed on.]")
}

/// Model, in an MCP result: an image of a type the API does not take.
pub fn mcp_image(mime: &str) -> String {
    format!("[The tool returned an image of type {mime}, which cannot be shown.]")
}

/// Model, in an MCP result: a resource whose blob (of type `mime`) cannot be passed on.
pub fn mcp_resource_blob(uri: &str, mime: &str) -> String {
    format!("[The tool returned the resource {uri} ({mime}), which cannot be passed on.]")
}

/// Model, in an MCP result: a resource with neither text nor blob.
pub fn mcp_empty_resource(uri: &str) -> String {
    format!("[The tool returned the resource {uri} without content.]")
}

/// Model: the tool did not finish in time.
pub fn timeout_for_model(name: &str, ms: u128) -> String {
    format!("The tool {name} did not finish within {ms} ms and was stopped. Try again later or tell the user.")
}

/// Developer: the tool did not finish in time.
pub fn timeout_for_developer(name: &str, ms: u128) -> String {
    format!("The tool {name} timed out after {ms} ms (toolTimeoutMs) and was told to stop (a JS tool's ctx.signal is aborted; an MCP server is sent notifications/cancelled).")
}

/// Model, in-order calls: this call was not run because an earlier one of its turn waits for
/// the user. Not a failure: the model may ask for it again once that one is answered.
pub fn not_run_waiting_for_model(name: &str, waiting: &str) -> String {
    format!(
        "This call to {name} was not run: an earlier call in this turn ({waiting}) is waiting for the user's approval, \
         and the calls after it are not run meanwhile. Call {name} again once that is answered, if it is still needed."
    )
}

/// Developer, in-order calls: this call was not run because an earlier one waits for the user.
pub fn not_run_waiting_for_developer(name: &str, waiting: &str) -> String {
    format!(
        "Not run: {waiting}, before {name} in the same turn, waits for the user's approval (parallelToolCalls: false runs calls in order). \
         The model was told to call {name} again if still needed."
    )
}

/// Model: the user declined this call (`reason`: theirs, if they gave one).
pub fn declined_for_model(reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!(
            "The user declined this call: {}. Do not retry it.",
            reason.trim_end_matches('.')
        ),
        None => "The user declined this call. Do not retry it.".to_owned(),
    }
}

/// Developer: the user declined this call.
pub fn declined_for_developer(reason: Option<&str>) -> String {
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(reason) => format!("Declined by the user: {reason}"),
        None => "Declined by the user.".to_owned(),
    }
}

/// Model: a call that started was stopped before it finished (an abort, a failed stop-mode
/// sibling; or, `taken_over`, its process stopped and its tool asks not to be run again).
pub fn interrupted_for_model(name: &str, taken_over: bool) -> String {
    let why = ["the run was stopped", "the process running it stopped"][usize::from(taken_over)];
    format!("The call to {name} was started but interrupted before it finished ({why}); it may or may not have taken effect. Check before calling it again.")
}

/// Developer: a call started by a process that stopped, not run again (`onInterrupted: "report"`).
pub fn taken_over_interrupted_for_developer(name: &str, attempts: u32) -> String {
    format!("{name} was started {attempts} time(s) by a process that stopped before it finished; not run again (onInterrupted: \"report\"): the model was told so.")
}

/// Model: this exact call has failed too often to be run again.
pub fn repeated_for_model(name: &str, times: u32) -> String {
    format!(
        "The tool {name} has failed {times} times with this same input and was not run again. \
         Do not repeat this call; tell the user that it could not be done."
    )
}

/// Developer: this exact call was not run because it failed too often.
pub fn repeated_for_developer(name: &str, times: u32) -> String {
    format!("Not run: {name} already failed {times} times with this same input (maxToolFailures).")
}

/// Model: this exact call already succeeded (or is running) `times` times (`maxIdenticalCalls`),
/// not run.
pub fn identical_for_model(name: &str, times: u32) -> String {
    format!(
        "Not run: this exact call of {name} (the same input) was already made {times} time(s) in this conversation \
         without failing, so you have its result (among this turn's results if it was made in this turn). \
         Do not repeat it: use that result, or do something else."
    )
}

/// Developer: this exact call was not run because it already succeeded often enough.
pub fn identical_for_developer(name: &str, times: u32) -> String {
    format!(
        "Not run: {name} already succeeded (or was running) {times} time(s) with this same input in this run (maxIdenticalCalls)."
    )
}

/// Model: a call past `maxToolIterations` (`onMaxIterations: "answer"`), not run.
pub fn limit_for_model(name: &str) -> String {
    format!(
        "Not run: the tool-round limit of this conversation was reached, so {name} was not called. \
         Do not call tools again; answer the user now with what you have, and say what is missing."
    )
}

/// Developer: a call past `maxToolIterations`, not run.
pub fn limit_for_developer(name: &str, rounds: u32) -> String {
    format!("Not run: the model asked for {name} after {rounds} tool round(s), the limit set by maxToolIterations (onMaxIterations: \"answer\").")
}

/// Developer, stop mode: a call stopped because another one of its round failed first.
pub fn interrupted_by(failed: &str) -> String {
    format!(
        "Interrupted: {failed} failed first and the run stopped (onToolError: \"stop\"); this call's ctx.signal was aborted and its result discarded."
    )
}

/// Developer: a call stopped because the run was aborted.
pub const ABORTED_CALL: &str =
    "Aborted: the run's signal fired while this call was running; its ctx.signal was aborted and its result discarded.";

/// How to make an approval secret, for the messages that ask for one.
fn make_a_secret() -> String {
    format!(
        "at least {} characters, e.g. the output of `openssl rand -hex 32`, the same on every server",
        crate::engine::wire::secret::MIN_APPROVAL_SECRET_CHARS
    )
}

/// A tool needs approval but there is no secret to sign approval ids with.
pub fn no_approval_secret() -> crate::engine::RunError {
    crate::engine::RunError::invalid_request(format!(
        "A tool offered in this run needs approval (needsApproval), which needs a secret to sign approval ids: \
         set ANTHROPIC_TOOL_CALLING_SECRET in the environment or pass the approvalSecret option ({}). Nothing was sent.",
        make_a_secret()
    ))
}

/// The approval secret given (`source`: the option or the variable) is too short to be one.
pub fn short_approval_secret(source: &str, chars: usize) -> crate::engine::RunError {
    crate::engine::RunError::invalid_request(format!(
        "{source} is {chars} characters long; an approval secret (approvalSecret or ANTHROPIC_TOOL_CALLING_SECRET) must be \
         {}: anyone who guesses it can approve any call. Nothing was sent.",
        make_a_secret()
    ))
}

/// An approval decision that matches no waiting call.
pub fn bad_decision(
    index: usize,
    approval_id: &str,
    why: crate::engine::tools::approval::Refused,
) -> crate::engine::RunError {
    use crate::engine::tools::approval::Refused;
    let shown: String = approval_id.chars().take(40).collect();
    let what = match why {
        Refused::Malformed => "is not an approval id this package issued",
        Refused::Forged => "does not match any call waiting for approval: the call's name, id or input was changed, the id was made up, or it was signed with another secret",
        Refused::Expired => "has expired (approvalTtlMs); ask the model again",
    };
    crate::engine::RunError::invalid_request(format!(
        "approvals[{index}] (approvalId {shown:?}) {what}. Nothing was sent and nothing ran."
    ))
}

/// Developer, stop mode: how to go on from a failed tool.
pub const STOP_ADVICE: &str =
    "The run stopped (onToolError: \"stop\"); fix the tool, or pass onToolError: \"continue\" to let the model handle tool failures.";

/// `text` ending in a full stop (one is added unless it already ends a sentence).
pub fn sentence(text: &str) -> String {
    let trimmed = text.trim_end();
    if trimmed.ends_with(['.', '!', '?']) {
        trimmed.to_owned()
    } else {
        format!("{trimmed}.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_denial_text_carries_the_reason() {
        assert_eq!(
            declined_for_model(Some("too expensive.")),
            "The user declined this call: too expensive. Do not retry it."
        );
        assert_eq!(
            declined_for_model(None),
            "The user declined this call. Do not retry it."
        );
    }

    /// What a JS tool's failure kinds come to, as lib/tool-bridge.js wrote it before it passed
    /// facts only.
    #[test]
    fn a_js_failure_reads_as_it_did() {
        let dev = |why: &str| failed_for_developer("t", why);
        assert_eq!(
            dev(&unserializable_value("Do not know how to serialize a BigInt")),
            "The tool t failed: it returned a value that cannot be turned into JSON (Do not know how to serialize a BigInt)"
        );
        assert_eq!(
            dev(&unserializable_blocks("x")),
            "The tool t failed: its toolResult blocks cannot be turned into JSON (x)"
        );
        assert_eq!(
            dev(&wrapper_failed("no peeking")),
            "The tool t failed: the tool wrapper failed: no peeking"
        );
        assert_eq!(
            dev(WRAPPER_FAILED_UNDESCRIBED),
            "The tool t failed: the tool wrapper failed on a value it could not describe"
        );
        assert_eq!(
            dev(CANCELLED_IN_CHECK),
            "The tool t failed: the call was cancelled while its input was checked"
        );
        assert_eq!(
            failed_stop("t", "boom"),
            format!("The tool t failed: boom. {STOP_ADVICE}")
        );
    }
}
