//! Checking a call before it may run: the tool must be offered, the input must match its schema,
//! the same call must not have failed too often, and a tool that asks for approval may make the
//! call wait for a person.

use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::engine::error::RunError;
use crate::engine::json::canonical::canonical_json;
use crate::engine::run::call_counts::{CallKey, CallMemory};
use crate::engine::run::call_outcome::{failed, Call, Settled, Words};
use crate::engine::run::config::{OnToolError, RunConfig};
use crate::engine::run::feedback as fb;
use crate::engine::run::model_reply::Requested;
use crate::engine::tools::approval::{Bound, PendingApproval};
use crate::engine::tools::schema;
use crate::engine::tools::tool::{Tool, ToolInvocation};
use crate::engine::trace::events::Why;

/// A call that passed its checks and may run.
pub struct Ready<'t> {
    /// The tool it calls.
    pub tool: &'t Tool,
    /// Its `tool_use` id.
    pub id: String,
    /// The model's input, checked.
    pub input: Arc<RawValue>,
}

impl Ready<'_> {
    /// The call, to be answered without running it.
    pub fn into_call(self) -> Call {
        Call {
            id: self.id,
            name: self.tool.name.clone(),
            input: RawValue::from_string(self.input.get().to_owned())
                .expect("a checked input is JSON"),
        }
    }
}

/// A call checked: its key in the call memory (kept only when failures go back to the model or
/// identical calls are limited: a stop-mode run ends at its first failure, so otherwise it needs
/// no key per call), and either the call ready to run or what it settled as.
pub struct Checked<'t> {
    /// The call's key in the call memory, in continue mode or with `maxIdenticalCalls`.
    pub key: Option<CallKey>,
    /// Ready to run, or settled as a failure.
    pub result: Result<Ready<'t>, Settled>,
}

/// Finds the tool among those `offered` (the run's tools the history has not withdrawn),
/// validates the input and consults the call memory.
pub fn check_call<'t>(
    req: Requested,
    tools: &'t [Tool],
    offered: &[&str],
    cfg: &RunConfig,
    memory: &CallMemory,
) -> Checked<'t> {
    let parsed: Option<Value> = serde_json::from_str(req.input.get()).ok();
    let keyed = cfg.on_tool_error != OnToolError::Stop || cfg.max_identical_calls.is_some();
    let key = keyed.then(|| {
        let input = parsed
            .as_ref()
            .map(canonical_json)
            .unwrap_or_else(|| req.input.get().to_owned());
        (req.name.clone(), input)
    });
    let failures_so_far = key.as_ref().map_or(0, |k| memory.failures(k));
    let result = check(req, parsed, tools, offered, cfg, failures_so_far);
    Checked { key, result }
}

fn check<'t>(
    req: Requested,
    parsed: Option<Value>,
    tools: &'t [Tool],
    offered: &[&str],
    cfg: &RunConfig,
    failures_so_far: u32,
) -> Result<Ready<'t>, Settled> {
    let call = Call::from(req);
    let name = call.name.as_str();
    let Some(tool) = tools
        .iter()
        .find(|t| t.name == name && offered.contains(&name))
    else {
        let words = Words::new(
            fb::unknown_tool_for_model(name, offered),
            fb::unknown_tool_for_developer(name, offered),
        );
        return Err(failed(call, Why::UnknownTool, words, Duration::ZERO));
    };
    let problems = match &parsed {
        Some(value) => schema::check(&tool.validator, value).err(),
        None => Some(vec!["(root): the input is not valid JSON".to_owned()]),
    };
    if let Some(problems) = problems {
        let words = Words::new(
            fb::invalid_input_for_model(name, &problems),
            fb::invalid_input_for_developer(name, &problems),
        );
        return Err(failed(call, Why::InvalidInput, words, Duration::ZERO));
    }
    if cfg.on_tool_error == OnToolError::Continue && failures_so_far >= cfg.max_tool_failures {
        let words = Words::new(
            fb::repeated_for_model(name, failures_so_far),
            fb::repeated_for_developer(name, failures_so_far),
        );
        return Err(failed(call, Why::Repeated, words, Duration::ZERO));
    }
    Ok(Ready {
        tool,
        id: call.id,
        input: Arc::from(call.input),
    })
}

/// Asks the tool's approval policy, if it has one, whether this call must wait for a person;
/// if so, the call as it waits, with its signed approval id.
pub async fn needs_approval(
    ready: &Ready<'_>,
    cfg: &RunConfig,
) -> Result<Option<PendingApproval>, RunError> {
    let Some(policy) = &ready.tool.approval else {
        return Ok(None);
    };
    let asked = ToolInvocation {
        tool_use_id: ready.id.clone(),
        input: ready.input.clone(),
        attempt: 1,
        idempotency_key: cfg.idempotency_key(&ready.id),
    };
    if !policy.needs_approval(asked).await {
        return Ok(None);
    }
    let signer = cfg.signer()?;
    Ok(Some(signer.pending(&Bound {
        scope: &cfg.approval_scope,
        name: &ready.tool.name,
        tool_use_id: &ready.id,
        input: &ready.input,
    })))
}
