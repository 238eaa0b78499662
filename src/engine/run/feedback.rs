//! The words for a failed tool call: what the model is told (`is_error` results, written so it
//! can act on them and holding nothing internal) and what the developer is told.

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

/// Model: a call that started was stopped before it finished (the run was aborted, or in stop
/// mode another call failed). It may have had effects, and the next turn must not assume either way.
pub fn interrupted_for_model(name: &str) -> String {
    format!(
        "The call to {name} was started but interrupted before it finished (the run was stopped); it may or may not have taken effect. \
         Check before calling it again."
    )
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
