//! Tool input schemas: compiled once when a tool is defined, used before every `execute`.

use jsonschema::{Draft, Validator};
use serde_json::Value;

/// At most this many validation errors are listed in a message.
const MAX_LISTED_ERRORS: usize = 3;
/// A value longer than this is not quoted in a message.
const MAX_QUOTED_MESSAGE: usize = 200;

/// Compiles `schema` in the dialect its `$schema` names (draft-04, -06, -07, 2019-09),
/// else JSON Schema 2020-12. The error says where in the schema and why.
pub fn compile(schema: &Value) -> Result<Validator, String> {
    compile_with(schema, false)
}

/// [`compile`], with `format` an assertion in every dialect (2019-09 and 2020-12 only annotate it
/// by default): for the answer's schema, whose formats the API is partly only told in words.
pub fn compile_checking_formats(schema: &Value) -> Result<Validator, String> {
    compile_with(schema, true)
}

fn compile_with(schema: &Value, formats: bool) -> Result<Validator, String> {
    let mut options = jsonschema::options().with_draft(Draft::Draft202012);
    if formats {
        options = options.should_validate_formats(true);
    }
    if let Some(uri) = schema.get("$schema").and_then(Value::as_str) {
        let draft = draft_of(uri).ok_or_else(|| {
            format!("$schema {uri:?} is not a dialect we know (draft-04, draft-06, draft-07, 2019-09, 2020-12)")
        })?;
        options = options.with_draft(draft);
    }
    options.build(schema).map_err(|e| {
        let pointer = e.instance_path().as_str();
        let at = if pointer.is_empty() { "/" } else { pointer };
        match unknown_type(schema, pointer) {
            Some(why) => format!("at {at}: {why}"),
            None => format!("at {at}: {}", e.masked()),
        }
    })
}

/// Starts building, on a thread of its own, what the first schema a process compiles needs once:
/// the validator of JSON Schema's meta-schema (about a millisecond in a release build). Called
/// when the addon loads, so that the first `registerTool` does not pay for it on the JS thread
/// while the package's modules are still loading. A later [`compile`] waits for it if it is not
/// done yet; nothing is built twice. Once a process.
pub fn warm_up() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        // A process that cannot start a thread builds it on first use instead.
        let _ = std::thread::Builder::new()
            .name("atc-schema-warm-up".into())
            .spawn(|| {
                let _ = compile(&serde_json::json!({
                    "type": "object",
                    "properties": { "x": { "type": "string" } },
                    "required": ["x"]
                }));
            });
    });
}

/// The type names JSON Schema has.
const TYPE_NAMES: &[&str] = &[
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// Where a schema fails to compile at a `type` keyword naming no type (`"strin"`), what to say
/// instead of the meta-schema's `anyOf` failure: the name, the nearest type, every type.
fn unknown_type(schema: &Value, pointer: &str) -> Option<String> {
    let (parent, last) = pointer.rsplit_once('/')?;
    let holder = parent.rsplit('/').next().unwrap_or("");
    let maps = [
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
        "dependencies",
    ];
    if last != "type" || maps.contains(&holder) {
        return None;
    }
    let given = schema.pointer(pointer)?;
    let names: Vec<&str> = match given {
        Value::String(name) => vec![name],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    let wrong = names.into_iter().find(|n| !TYPE_NAMES.contains(n))?;
    let hint = match nearest(wrong, TYPE_NAMES.iter().copied()) {
        Some(near) => format!(" (did you mean {near:?}?)"),
        None => String::new(),
    };
    Some(format!(
        "{wrong:?} is not a JSON Schema type{hint}; the types are {}",
        TYPE_NAMES.join(", ")
    ))
}

/// The name among `known` nearest to `given` (a typo of it: a letter or two off, or another
/// case or `_` spelling), or `None` when none is that close. The first of equally near ones.
pub fn nearest<'a>(given: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let fold = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let given = fold(given);
    let allowed = (given.len() / 4).max(1);
    let mut best: Option<(usize, &str)> = None;
    for name in known {
        let d = edit_distance(&given, &fold(name));
        if d <= allowed && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, name));
        }
    }
    best.map(|(_, name)| name)
}

/// How many letters must be added, removed or replaced to turn `a` into `b`.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let replaced = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = replaced.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

fn draft_of(uri: &str) -> Option<Draft> {
    let uri = uri.trim_end_matches('#');
    let uri = uri
        .strip_prefix("https://")
        .or_else(|| uri.strip_prefix("http://"))
        .unwrap_or(uri);
    Some(match uri {
        "json-schema.org/draft-04/schema" => Draft::Draft4,
        "json-schema.org/draft-06/schema" => Draft::Draft6,
        "json-schema.org/draft-07/schema" => Draft::Draft7,
        "json-schema.org/draft/2019-09/schema" => Draft::Draft201909,
        "json-schema.org/draft/2020-12/schema" => Draft::Draft202012,
        _ => return None,
    })
}

/// Validates `input`; on failure, one line per error (`orderId: 4821 is not of type "string"`),
/// a few at most.
pub fn check(validator: &Validator, input: &Value) -> Result<(), Vec<String>> {
    let issues = issues(validator, input);
    if issues.listed.is_empty() {
        Ok(())
    } else {
        Err(issues.lines())
    }
}

/// One way a value fails its schema: where, and why.
pub struct Issue {
    /// The failing value's place, a key or an index per step (a Standard Schema issue's `path`).
    pub path: Vec<Value>,
    /// Why it fails (a long value is not quoted).
    pub message: String,
}

impl Issue {
    /// The issue as a Standard Schema writes one: `{ message, path }`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({ "message": self.message, "path": self.path })
    }
}

/// How a value fails its schema: the first few issues, and how many there are in all.
pub struct Issues {
    /// The first few, in the validator's order; none when the value passes.
    pub listed: Vec<Issue>,
    /// How many there are in all.
    pub total: usize,
}

impl Issues {
    /// The issues one line each (`items[0].name: reason`), and how many more there were.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .listed
            .iter()
            .map(|issue| format!("{}: {}", field_name(&issue.path), issue.message))
            .collect();
        if self.total > lines.len() {
            lines.push(format!("(and {} more)", self.total - lines.len()));
        }
        lines
    }
}

/// How `value` fails its schema.
pub fn issues(validator: &Validator, value: &Value) -> Issues {
    let mut listed: Vec<Issue> = Vec::new();
    let mut total = 0usize;
    for error in validator.iter_errors(value) {
        total += 1;
        if listed.len() < MAX_LISTED_ERRORS {
            let mut message = error.to_string();
            if message.len() > MAX_QUOTED_MESSAGE {
                message = error.masked().to_string();
            }
            let path = path_in(value, error.instance_path().as_str());
            listed.push(Issue { path, message });
        }
    }
    Issues { listed, total }
}

/// The steps of a JSON Pointer into `value`: a key where the value there is an object (`"007"`
/// stays a string), an index where it is an array.
fn path_in(value: &Value, pointer: &str) -> Vec<Value> {
    let mut at = Some(value);
    let mut path = Vec::new();
    for seg in pointer.split('/').skip(1) {
        let key = seg.replace("~1", "/").replace("~0", "~");
        match (at, key.parse::<usize>()) {
            (Some(Value::Array(items)), Ok(i)) => {
                at = items.get(i);
                path.push(Value::from(i));
            }
            (Some(Value::Object(members)), _) => {
                at = members.get(&key);
                path.push(Value::String(key));
            }
            _ => {
                at = None;
                path.push(Value::String(key));
            }
        }
    }
    path
}

/// `["items", 0, "name"]` → `items[0].name`, the way a person names a field; `(root)` for none.
fn field_name(path: &[Value]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Value::Number(i) => out.push_str(&format!("[{i}]")),
            Value::String(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            _ => {}
        }
    }
    if out.is_empty() {
        "(root)".to_owned()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_field_and_the_reason() {
        let v = compile(&json!({"type":"object","properties":{"orderId":{"type":"string"}},"required":["orderId"]})).unwrap();
        assert_eq!(
            check(&v, &json!({"orderId": 4821})),
            Err(vec![r#"orderId: 4821 is not of type "string""#.to_owned()])
        );
        let missing = check(&v, &json!({})).unwrap_err();
        assert_eq!(
            missing,
            vec![r#"(root): "orderId" is a required property"#.to_owned()]
        );
        assert!(check(&v, &json!({"orderId": "A1"})).is_ok());
    }

    #[test]
    fn lists_a_few_errors_at_most_and_masks_long_values() {
        let v = compile(&json!({"type":"object","properties":{"items":{"type":"array","items":{"type":"string"}}}})).unwrap();
        let errs = check(&v, &json!({"items": [1, 2, 3, 4, 5]})).unwrap_err();
        assert_eq!(errs.len(), 4);
        assert_eq!(errs[0], r#"items[0]: 1 is not of type "string""#);
        assert_eq!(errs[3], "(and 2 more)");
        let long = "x".repeat(5000);
        let v = compile(&json!({"type":"object","properties":{"n":{"type":"number"}}})).unwrap();
        let errs = check(&v, &json!({ "n": long })).unwrap_err();
        assert!(errs[0].len() < 300, "{}", errs[0]);
    }

    #[test]
    fn picks_the_dialect_from_dollar_schema() {
        // In draft-07 `items` as an array is a tuple; in 2020-12 it must be a schema.
        let tuple = json!({"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
            "properties":{"p":{"items":[{"type":"string"}]}}});
        let v = compile(&tuple).unwrap();
        assert!(check(&v, &json!({"p": [1]})).is_err());
        let mut in_2020 = tuple.clone();
        in_2020.as_object_mut().unwrap().remove("$schema");
        assert!(compile(&in_2020).is_err());
        assert!(compile(&json!({"$schema":"https://example.com/mine","type":"object"})).is_err());
    }

    /// JSON-Schema-Test-Suite, ref.json, "simple URN base URI with $ref via the URN": a schema
    /// whose `$id` is a URN can `$ref` itself by it.
    #[test]
    fn a_urn_id_names_its_schema_for_ref_in_both_dialects() {
        const URN: &str = "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed";
        for dialect in [
            "https://json-schema.org/draft/2020-12/schema",
            "http://json-schema.org/draft-07/schema#",
        ] {
            let suite = json!({"$id": URN, "minimum": 30, "properties": {"foo": {"$ref": URN}}});
            // As a tool's input_schema: `type: "object"` beside the suite's schema, not in it.
            let v =
                compile(&json!({"$schema": dialect, "type": "object", "allOf": [suite]})).unwrap();
            assert_eq!(check(&v, &json!({"foo": 37})), Ok(()), "{dialect}");
            assert_eq!(
                check(&v, &json!({"foo": 12})),
                Err(vec!["foo: 12 is less than the minimum of 30".to_owned()]),
                "{dialect}"
            );
            // Merged into the root the `$ref` names, `type: "object"` applies to `foo` as well.
            // That is the schema's meaning, not a failure to resolve the URN.
            let mut merged = suite.clone();
            merged["$schema"] = json!(dialect);
            merged["type"] = json!("object");
            let v = compile(&merged).unwrap();
            assert_eq!(
                check(&v, &json!({"foo": 37})),
                Err(vec![r#"foo: 37 is not of type "object""#.to_owned()]),
                "{dialect}"
            );
        }
    }

    #[test]
    fn a_bad_schema_says_where_and_why() {
        let err =
            compile(&json!({"type":"object","properties":{"a":{"type":"strin"}}})).unwrap_err();
        assert!(err.contains("/properties/a/type"), "{err}");
        assert_eq!(
            err,
            "at /properties/a/type: \"strin\" is not a JSON Schema type (did you mean \"string\"?); \
             the types are array, boolean, integer, null, number, object, string"
        );
        let err = compile(&json!({"type":"object","properties":{"a":{"type":["null","intger"]}}}))
            .unwrap_err();
        assert!(
            err.starts_with("at /properties/a/type: \"intger\" is not a JSON Schema type (did you mean \"integer\"?)"),
            "{err}"
        );
        let err =
            compile(&json!({"type":"object","properties":{"a":{"type":"text"}}})).unwrap_err();
        assert!(
            err.starts_with(
                "at /properties/a/type: \"text\" is not a JSON Schema type; the types are"
            ),
            "{err}"
        );
        // A property named `type` whose schema is not one is the meta-schema's to word.
        let err = compile(&json!({"type":"object","properties":{"type":"x"}})).unwrap_err();
        assert!(!err.contains("is not a JSON Schema type"), "{err}");
    }

    #[test]
    fn the_nearest_name_is_only_a_close_one() {
        let known = ["maxTokens", "maxToolIterations", "model", "topK"];
        for typo in [
            "maxToken",
            "max_tokens",
            "maxtokens",
            "MAX_TOKENS",
            "maxTokns",
        ] {
            assert_eq!(nearest(typo, known), Some("maxTokens"), "{typo}");
        }
        assert_eq!(nearest("top_k", known), Some("topK"));
        for far in ["zeta", "__proto__", "temperature", "max"] {
            assert_eq!(nearest(far, known), None, "{far}");
        }
    }
}
