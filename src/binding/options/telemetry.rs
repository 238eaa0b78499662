//! `telemetry`: whether a run is traced where a tracer provider is registered, and whether its
//! content (the messages, tool inputs and outputs) goes into the spans. Checked here even when
//! no tracer is set up, so a typo fails in development rather than in the traced deployment.

use serde_json::Value;

use super::read::Given;
use crate::engine::trace::request::Telemetry;
use crate::engine::RunError;

/// `true`, `false` or `{ recordContent?: boolean }`; absent is traced without content.
pub fn telemetry(option: Given) -> Result<Option<Telemetry>, RunError> {
    let expected = "false, true or { recordContent: boolean }";
    match option.value() {
        None | Some(Value::Bool(true)) => Ok(Some(Telemetry::default())),
        Some(Value::Bool(false)) => Ok(None),
        Some(Value::Object(fields)) => {
            let mut telemetry = Telemetry::default();
            for (key, value) in &fields {
                match (key.as_str(), value) {
                    ("recordContent", Value::Bool(on)) => telemetry.record_content = *on,
                    ("recordContent", Value::Null) => {}
                    _ => return Err(option.bad(expected, &Value::Object(fields.clone()))),
                }
            }
            Ok(Some(telemetry))
        }
        Some(other) => Err(option.bad(expected, &other)),
    }
}
