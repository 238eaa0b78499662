//! The options that go into the request body as the caller gave them: the pass-through fields,
//! `system`, `toolChoice`, `serverTools` and `extraBody`. Each is checked through a parsed copy
//! of its (small) value and sent as the JSON text it came as, keys in their order.

use serde_json::value::RawValue;
use serde_json::Value;

use super::list::RunOptions;
use super::read::{bad, value, Given};
use crate::engine::json::ordered_fields::Fields;
use crate::engine::{RunError, ToolChoice};

/// Body fields `extraBody` may not replace: the loop owns them.
const OWN_FIELDS: &[&str] = &["model", "messages", "tools", "stream", "thread"];

/// The JSON type a pass-through option must have.
#[derive(Clone, Copy)]
enum Json {
    Object,
    String,
    Number,
    Integer,
    Strings,
}

impl Json {
    fn accepts(self, v: &Value) -> bool {
        match self {
            Json::Object => v.is_object(),
            Json::String => v.is_string(),
            Json::Number => v.is_number(),
            Json::Integer => v.is_i64() || v.is_u64(),
            Json::Strings => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Json::Object => "an object",
            Json::String => "a string",
            Json::Number => "a number",
            Json::Integer => "an integer",
            Json::Strings => "an array of strings",
        }
    }
}

/// The fields passed through as given, each as (wire name, JSON text), in a fixed order.
pub fn pass_through(o: &RunOptions) -> Result<Vec<(&'static str, Box<RawValue>)>, RunError> {
    let fields = [
        (o.thinking, "thinking", Json::Object),
        (o.stop_sequences, "stop_sequences", Json::Strings),
        (o.top_p, "top_p", Json::Number),
        (o.top_k, "top_k", Json::Integer),
        (o.metadata, "metadata", Json::Object),
        (o.service_tier, "service_tier", Json::String),
        (o.cache_control, "cache_control", Json::Object),
        (o.output_config, "output_config", Json::Object),
        (o.context_management, "context_management", Json::Object),
    ];
    let mut out = Vec::new();
    for (option, wire, json) in fields {
        if let Some((raw, v)) = option.to_send() {
            if !json.accepts(&v) {
                return Err(option.bad(json.name(), &v));
            }
            out.push((wire, raw.to_owned()));
        }
    }
    Ok(out)
}

/// `system`: a string or an array of text blocks, kept as given.
pub fn system(option: Given) -> Result<Option<Box<RawValue>>, RunError> {
    let Some((raw, v)) = option.to_send() else {
        return Ok(None);
    };
    let text_blocks = v.as_array().is_some_and(|blocks| {
        blocks.iter().all(|b| {
            b.get("type") == Some(&Value::from("text"))
                && b.get("text").is_some_and(Value::is_string)
        })
    });
    if !v.is_string() && !text_blocks {
        return Err(option.bad(
            "a string or an array of text blocks { type: \"text\", text }",
            &v,
        ));
    }
    Ok(Some(raw.to_owned()))
}

/// `toolChoice`, checked; kept as given, with the `auto` choice that follows a forcing one.
pub fn tool_choice(option: Given) -> Result<Option<ToolChoice>, RunError> {
    let Some((raw, v)) = option.to_send() else {
        return Ok(None);
    };
    let expected = "{ type: \"auto\" | \"any\" | \"none\" } or { type: \"tool\", name }";
    let Value::Object(obj) = &v else {
        return Err(option.bad(expected, &v));
    };
    let kind = obj.get("type").and_then(Value::as_str);
    match kind {
        Some("auto") | Some("any") | Some("none") => {}
        Some("tool") if obj.get("name").is_some_and(Value::is_string) => {}
        _ => return Err(option.bad(expected, &v)),
    }
    match obj.get("disable_parallel_tool_use") {
        None => {}
        Some(Value::Bool(_)) if kind != Some("none") => {}
        Some(Value::Bool(_)) => {
            return Err(RunError::invalid_request(
                "Option toolChoice { type: \"none\" } cannot carry disable_parallel_tool_use (the API refuses it). Nothing was sent.",
            ))
        }
        Some(other) => return Err(bad("toolChoice.disable_parallel_tool_use", "true or false", other)),
    }
    Ok(Some(ToolChoice::new(raw.to_owned())))
}

/// `serverTools`: definitions with a `type`, sent as given after the client tools.
pub fn server_tools(option: Given) -> Result<Vec<Box<RawValue>>, RunError> {
    let expected = "an array of server tool definitions { type, name, … }";
    let Some((raw, v)) = option.to_send() else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = &v else {
        return Err(option.bad(expected, &v));
    };
    for (i, item) in items.iter().enumerate() {
        let typed = item.get("type").is_some_and(Value::is_string)
            && item.get("name").is_some_and(Value::is_string);
        if !typed {
            return Err(bad(
                &format!("serverTools[{i}]"),
                "an object with a string type and name",
                item,
            ));
        }
    }
    let raws: Vec<&RawValue> =
        serde_json::from_str(raw.get()).map_err(|_| option.bad(expected, &v))?;
    Ok(raws.into_iter().map(|r| r.to_owned()).collect())
}

/// `extraBody`: merged into the body last; the loop's own fields are refused.
pub fn extra_body(option: Given) -> Result<Vec<(String, Box<RawValue>)>, RunError> {
    let Some(raw) = option.raw() else {
        return Ok(Vec::new());
    };
    let fields = serde_json::from_str::<Fields>(raw.get())
        .map_err(|_| option.bad("an object of request fields", &value(raw)))?
        .last_wins();
    if let Some((key, _)) = fields
        .iter()
        .find(|(k, _)| OWN_FIELDS.contains(&k.as_str()))
    {
        return Err(RunError::invalid_request(format!(
            "Option extraBody may not set {key:?}: the loop owns {}. Nothing was sent.",
            OWN_FIELDS.join(", ")
        )));
    }
    Ok(fields)
}
