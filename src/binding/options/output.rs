//! `output`: the answer's schema, read into the run's [`OutputFormat`] and sent inside
//! `output_config` beside `outputConfig`'s own keys (`effort`, `task_budget`).

use super::read::Given;
use crate::engine::json::ordered_fields::Fields;
use crate::engine::output::answer_format::{Json, OutputFormat};
use crate::engine::{RunConfig, RunError};

/// Reads `output` into `cfg` (after the pass-through fields and `extraBody`): the format joins
/// `output_config`. Where something else would set the format too, the run is refused rather
/// than one of them silently dropped.
pub fn output(option: Given, cfg: &mut RunConfig) -> Result<(), RunError> {
    let Some(given) = option.raw() else {
        return Ok(());
    };
    let expected =
        "a JSON Schema object or a Standard Schema with a JSON Schema (zod ≥ 4, arktype, valibot)";
    // Read once, in order, here rather than through `value()`, so that a schema serde cannot
    // read (nested too deeply, a lone surrogate in a string) says so instead of "got null".
    let schema: Json = serde_json::from_str(given.get()).map_err(|e| {
        RunError::invalid_request(format!(
            "Option output cannot be read as JSON ({e}). Nothing was sent."
        ))
    })?;
    if !matches!(schema, Json::Object(_)) {
        return Err(option.bad(expected, &schema.to_value()));
    }
    let format = OutputFormat::new(&schema).map_err(|why| {
        RunError::invalid_request(format!(
            "Option output cannot be sent as the API's output_config.format: {why}. Nothing was sent."
        ))
    })?;
    if let Some((key, _)) = cfg
        .extra_body
        .iter()
        .find(|(k, _)| k == "output_config" || k == "output_format")
    {
        return Err(RunError::invalid_request(format!(
            "Option extraBody sets {key:?}, which would replace the format that output sends; give its other keys \
             through outputConfig. Nothing was sent."
        )));
    }
    let given_format = cfg
        .sent_field("output_config")
        .and_then(|raw| serde_json::from_str::<Fields>(raw.get()).ok())
        .is_some_and(|config| config.get("format").is_some_and(|f| f.get() != "null"));
    if given_format {
        return Err(RunError::invalid_request(
            "Options output and outputConfig.format both set the answer's format; use output alone (it checks the answer). Nothing was sent.",
        ));
    }
    cfg.set_output(format);
    Ok(())
}
