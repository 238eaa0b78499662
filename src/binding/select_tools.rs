//! Which registered tools a run offers (the `tools` option), checked against `toolChoice`.
//! Pure Rust, tested without Node.

use crate::engine::{RunError, Tool, ToolChoice};

/// All of `registered`, or those `names` picks (each once, in the order named). A name that is
/// not registered, or a `toolChoice` naming a tool not offered, is `invalid_request`.
pub fn offered(
    registered: Vec<Tool>,
    names: Option<&[String]>,
    choice: Option<&ToolChoice>,
) -> Result<Vec<Tool>, RunError> {
    let tools = match names {
        None => registered,
        Some(names) => {
            let mut picked: Vec<Tool> = Vec::with_capacity(names.len());
            for name in names {
                if picked.iter().any(|t| &t.name == name) {
                    continue;
                }
                match registered.iter().find(|t| &t.name == name) {
                    Some(t) => picked.push(t.clone()),
                    None => {
                        let all: Vec<&str> = registered.iter().map(|t| t.name.as_str()).collect();
                        return Err(RunError::invalid_request(format!(
                            "Option tools names {name:?}, which is not registered (registered: {}). Register it with registerTool first. Nothing was sent.",
                            if all.is_empty() { "none".to_owned() } else { all.join(", ") }
                        )));
                    }
                }
            }
            picked
        }
    };
    if let Some(name) = choice.and_then(ToolChoice::tool_name) {
        if !tools.iter().any(|t| t.name == name) {
            return Err(RunError::invalid_request(format!(
                "Option toolChoice names the tool {name:?}, which is not offered in this run. Nothing was sent."
            )));
        }
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::value::RawValue;

    use super::*;
    use crate::engine::{ToolInvocation, ToolOutcome};

    fn tool(name: &str) -> Tool {
        Tool::new(
            &format!(r#"{{"name":"{name}","input_schema":{{"type":"object"}}}}"#),
            Arc::new(|_c: ToolInvocation| async { ToolOutcome::Failed("unused".into()) }),
        )
        .unwrap()
    }

    fn names(tools: &[Tool]) -> Vec<&str> {
        tools.iter().map(|t| t.name.as_str()).collect()
    }

    #[test]
    fn picks_by_name_and_checks_the_choice() {
        let all = || vec![tool("a"), tool("b"), tool("c")];
        assert_eq!(names(&offered(all(), None, None).unwrap()), ["a", "b", "c"]);
        let pick = ["c".to_owned(), "a".to_owned(), "c".to_owned()];
        assert_eq!(
            names(&offered(all(), Some(&pick), None).unwrap()),
            ["c", "a"]
        );
        let err = offered(all(), Some(&["z".to_owned()]), None).err().unwrap();
        assert!(err
            .message
            .contains("\"z\", which is not registered (registered: a, b, c)"));
        let choice =
            ToolChoice::new(RawValue::from_string(r#"{"type":"tool","name":"b"}"#.into()).unwrap());
        let err = offered(all(), Some(&["a".to_owned()]), Some(&choice))
            .err()
            .unwrap();
        assert!(
            err.message.contains("toolChoice names the tool \"b\""),
            "{}",
            err.message
        );
        assert!(offered(all(), None, Some(&choice)).is_ok());
    }
}
