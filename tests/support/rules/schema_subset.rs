//! The JSON Schema subset structured outputs accept (`output_config.format.schema`): the keywords
//! the API supports, the ones it refuses and the limits on a schema's size. The API compiles the
//! schema into a grammar, so anything it cannot compile is a 400 before the model runs; each
//! refusal names the place in the schema, as the API's own words do. Worded as the JS stand-in's
//! `stand-in/rules/schema-subset.mjs`.

use serde_json::{Map, Value};

pub const SCHEMA_TYPES: &[&str] = &[
    "object", "array", "string", "integer", "number", "boolean", "null",
];
pub const STRING_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];
/// The documented limits, counted across the whole schema.
pub const MAX_OPTIONAL_PROPERTIES: usize = 24;
pub const MAX_UNION_PROPERTIES: usize = 16;

const SUPPORTED: &[&str] = &[
    "type",
    "enum",
    "const",
    "anyOf",
    "allOf",
    "$ref",
    "$defs",
    "definitions",
    "default",
    "description",
    "title",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "format",
    "pattern",
];

/// Refused keywords that belong to one type: the refusal names the type, as the API's does.
const TYPED: &[(&str, &str)] = &[
    ("minimum", "number"),
    ("maximum", "number"),
    ("exclusiveMinimum", "number"),
    ("exclusiveMaximum", "number"),
    ("multipleOf", "number"),
    ("minLength", "string"),
    ("maxLength", "string"),
    ("contentEncoding", "string"),
    ("contentMediaType", "string"),
    ("maxItems", "array"),
    ("uniqueItems", "array"),
    ("contains", "array"),
    ("minContains", "array"),
    ("maxContains", "array"),
    ("prefixItems", "array"),
    ("unevaluatedItems", "array"),
    ("additionalItems", "array"),
    ("minProperties", "object"),
    ("maxProperties", "object"),
    ("patternProperties", "object"),
    ("propertyNames", "object"),
    ("dependentRequired", "object"),
    ("dependentSchemas", "object"),
    ("dependencies", "object"),
    ("unevaluatedProperties", "object"),
];

const SUPPORTED_REFS: &str = "only local references to '#/$defs/…' or '#/definitions/…' are";

fn is_primitive(v: &Value) -> bool {
    !(v.is_array() || v.is_object())
}

fn shown(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// The feature of a regular expression the grammar cannot hold, if any.
pub fn unsupported_regex_feature(pattern: &str) -> Option<&'static str> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut in_class = false;
    let mut i = 0;
    while i < chars.len() {
        let at = |k: usize| chars.get(k).copied().unwrap_or('\0');
        match chars[i] {
            '\\' => {
                let next = at(i + 1);
                if ('1'..='9').contains(&next) || (next == 'k' && at(i + 2) == '<') {
                    return Some("backreferences");
                }
                if !in_class && (next == 'b' || next == 'B') {
                    return Some("word boundaries (\\b)");
                }
                i += 1;
            }
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => {
                let ahead: String = chars[i + 1..].iter().take(3).collect();
                if ["?=", "?!", "?<=", "?<!"]
                    .iter()
                    .any(|p| ahead.starts_with(p))
                {
                    return Some("lookahead or lookbehind");
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A `$ref` found in the walk: where it sits (as the message says it and as a pointer) and what it names.
struct Ref {
    at: String,
    pointer: Vec<String>,
    target: String,
}

#[derive(Default)]
struct Seen {
    optional: usize,
    unions: usize,
    refs: Vec<Ref>,
}

/// Walks every schema below `schema`, refusing what the subset leaves out; fills `seen`.
fn walk(schema: &Value, at: &str, pointer: &[String], seen: &mut Seen) -> Result<(), String> {
    let Some(fields) = schema.as_object() else {
        return Err(format!("{at}: Input should be a valid dictionary"));
    };
    let inner = |key: &str, name: &str| {
        let mut p = pointer.to_vec();
        p.extend([key.to_owned(), name.to_owned()]);
        (format!("{at}.{key}.{name}"), p)
    };
    for key in fields.keys() {
        if SUPPORTED.contains(&key.as_str()) {
            continue;
        }
        if let Some((_, family)) = TYPED.iter().find(|(k, _)| k == key) {
            let kind = if *family == "number" && schema["type"] == "integer" {
                "integer"
            } else {
                family
            };
            return Err(format!("{at}: For '{kind}' type, '{key}' is not supported"));
        }
        return Err(format!("{at}: '{key}' is not supported"));
    }
    for key in ["description", "title"] {
        if fields.get(key).is_some_and(|v| !v.is_string()) {
            return Err(format!("{at}.{key}: Input should be a valid string"));
        }
    }
    let types: Vec<&Value> = match fields.get("type") {
        Some(Value::Array(list)) if list.is_empty() => {
            return Err(format!("{at}.type: a list of types must not be empty"))
        }
        Some(Value::Array(list)) => list.iter().collect(),
        Some(one) => vec![one],
        None => Vec::new(),
    };
    if let Some(t) = types
        .iter()
        .find(|t| !t.as_str().is_some_and(|t| SCHEMA_TYPES.contains(&t)))
    {
        return Err(format!(
            "{at}: type '{}' is not supported (supported: {})",
            shown(t),
            SCHEMA_TYPES.join(", ")
        ));
    }
    if (types.iter().any(|t| *t == "object") || fields.contains_key("additionalProperties"))
        && fields.get("additionalProperties") != Some(&Value::Bool(false))
    {
        return Err(format!(
            "{at}: For 'object' type, 'additionalProperties' must be explicitly set to false"
        ));
    }
    let required: Vec<&str> = match fields.get("required") {
        None => Vec::new(),
        Some(r) => r
            .as_array()
            .and_then(|r| r.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
            .ok_or_else(|| format!("{at}.required: Input should be a valid list of strings"))?,
    };
    if let Some(properties) = fields.get("properties") {
        let properties = properties
            .as_object()
            .ok_or_else(|| format!("{at}.properties: Input should be a valid dictionary"))?;
        for (name, property) in properties {
            let (at, pointer) = inner("properties", name);
            walk(property, &at, &pointer, seen)?;
            seen.optional += usize::from(!required.contains(&name.as_str()));
            seen.unions +=
                usize::from(property.get("anyOf").is_some() || property["type"].is_array());
        }
    }
    if let Some(items) = fields.get("items") {
        if items.is_array() {
            return Err(format!("{at}: For 'array' type, 'items' must be one schema (a list of item schemas is not supported)"));
        }
        let mut p = pointer.to_vec();
        p.push("items".into());
        walk(items, &format!("{at}.items"), &p, seen)?;
    }
    if fields.get("minItems").is_some_and(|n| n != 0 && n != 1) {
        return Err(format!(
            "{at}: For 'array' type, 'minItems' values other than 0 or 1 are not supported"
        ));
    }
    check_values(fields, at)?;
    for key in ["anyOf", "allOf"] {
        let Some(list) = fields.get(key) else {
            continue;
        };
        let list = list
            .as_array()
            .filter(|l| !l.is_empty())
            .ok_or_else(|| format!("{at}: '{key}' must be a non-empty list of schemas"))?;
        for (i, branch) in list.iter().enumerate() {
            if key == "allOf" && branch.get("$ref").is_some() {
                return Err(format!(
                    "{at}.allOf.{i}: '$ref' inside 'allOf' is not supported"
                ));
            }
            let (at, pointer) = inner(key, &i.to_string());
            walk(branch, &at, &pointer, seen)?;
        }
    }
    for key in ["$defs", "definitions"] {
        let Some(defs) = fields.get(key) else {
            continue;
        };
        let defs = defs
            .as_object()
            .ok_or_else(|| format!("{at}.{key}: Input should be a valid dictionary"))?;
        for (name, def) in defs {
            let (at, pointer) = inner(key, name);
            walk(def, &at, &pointer, seen)?;
        }
    }
    if let Some(target) = fields.get("$ref") {
        let target = target
            .as_str()
            .ok_or_else(|| format!("{at}.$ref: Input should be a valid string"))?;
        seen.refs.push(Ref {
            at: at.to_owned(),
            pointer: pointer.to_vec(),
            target: target.to_owned(),
        });
    }
    Ok(())
}

/// `enum`, `const`, `format` and `pattern`: literal values and string constraints.
fn check_values(fields: &Map<String, Value>, at: &str) -> Result<(), String> {
    if let Some(options) = fields.get("enum") {
        if !options
            .as_array()
            .is_some_and(|o| !o.is_empty() && o.iter().all(is_primitive))
        {
            return Err(format!(
                "{at}: 'enum' must be a non-empty list of strings, numbers, booleans or null"
            ));
        }
    }
    if fields.get("const").is_some_and(|c| !is_primitive(c)) {
        return Err(format!(
            "{at}: 'const' must be a string, number, boolean or null"
        ));
    }
    if let Some(format) = fields.get("format") {
        if !format.as_str().is_some_and(|f| STRING_FORMATS.contains(&f)) {
            return Err(format!(
                "{at}: For 'string' type, format '{}' is not supported (supported: {})",
                shown(format),
                STRING_FORMATS.join(", ")
            ));
        }
    }
    if let Some(pattern) = fields.get("pattern") {
        let pattern = pattern
            .as_str()
            .ok_or_else(|| format!("{at}.pattern: Input should be a valid string"))?;
        if let Some(feature) = unsupported_regex_feature(pattern) {
            return Err(format!(
                "{at}: For 'string' type, 'pattern' with {feature} is not supported"
            ));
        }
        if jsonschema::validator_for(&serde_json::json!({ "pattern": pattern })).is_err() {
            return Err(format!("{at}: 'pattern' is not a valid regular expression"));
        }
    }
    Ok(())
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// The definition a `$ref` names (`$defs/NAME`), refusing any other kind of reference.
fn definition_of(root: &Value, r: &Ref) -> Result<String, String> {
    let (at, target) = (&r.at, &r.target);
    if !target.starts_with('#') {
        return Err(format!(
            "{at}: external '$ref' '{target}' is not supported; {SUPPORTED_REFS}"
        ));
    }
    let path: Option<Vec<String>> = match target.as_str() {
        "#" => Some(Vec::new()),
        t => t
            .strip_prefix("#/")
            .map(|rest| rest.split('/').map(unescape).collect()),
    };
    // A reference to the whole schema or to a schema holding the reference makes the schema infinite.
    if let Some(path) = &path {
        if path
            .iter()
            .enumerate()
            .all(|(i, s)| r.pointer.get(i) == Some(s))
        {
            return Err(format!("{at}: recursive schemas are not supported ('$ref' '{target}' refers to a schema that holds it)"));
        }
    }
    let Some(path) = path.filter(|p| p.len() == 2 && (p[0] == "$defs" || p[0] == "definitions"))
    else {
        return Err(format!(
            "{at}: '$ref' '{target}' is not supported; {SUPPORTED_REFS}"
        ));
    };
    if root[&path[0]].get(&path[1]).is_none() {
        return Err(format!(
            "{at}: '$ref' '{target}' does not resolve to a definition"
        ));
    }
    Ok(path.join("/"))
}

/// Refuses a reference that leads back, through other definitions, to the definition holding it.
fn check_cycles(root: &Value, refs: &[Ref]) -> Result<(), String> {
    let owner = |p: &[String]| {
        (p.len() >= 2 && (p[0] == "$defs" || p[0] == "definitions")).then(|| p[..2].join("/"))
    };
    let mut resolved = Vec::new();
    for r in refs {
        resolved.push((r, owner(&r.pointer), definition_of(root, r)?));
    }
    let reaches = |start: &str, goal: &str| {
        let mut stack = vec![start.to_owned()];
        let mut visited = Vec::new();
        while let Some(next) = stack.pop() {
            if next == goal {
                return true;
            }
            if visited.contains(&next) {
                continue;
            }
            stack.extend(
                resolved
                    .iter()
                    .filter(|(_, from, _)| from.as_deref() == Some(next.as_str()))
                    .map(|(_, _, to)| to.clone()),
            );
            visited.push(next);
        }
        false
    };
    for (r, from, to) in &resolved {
        if let Some(from) = from.as_deref().filter(|from| reaches(to, from)) {
            return Err(format!(
                "{}: recursive schemas are not supported ('$ref' '{}' leads back to '#/{from}')",
                r.at, r.target
            ));
        }
    }
    Ok(())
}

/// Refuses a schema outside the subset; `at` is where it sits in the request.
pub fn check_schema_subset(schema: &Value, at: &str) -> Result<(), String> {
    let mut seen = Seen::default();
    walk(schema, at, &[], &mut seen)?;
    check_cycles(schema, &seen.refs)?;
    if seen.optional > MAX_OPTIONAL_PROPERTIES {
        return Err(format!(
            "{at}: the schema has {} optional properties; at most {MAX_OPTIONAL_PROPERTIES} are supported",
            seen.optional
        ));
    }
    if seen.unions > MAX_UNION_PROPERTIES {
        return Err(format!("{at}: the schema has {} properties using 'anyOf' or a list of types; at most {MAX_UNION_PROPERTIES} are supported", seen.unions));
    }
    Ok(())
}
