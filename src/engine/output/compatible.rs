//! The form of an output schema the API takes. The API constrains the model's answer with a
//! subset of JSON Schema: every object closed (`additionalProperties: false`), no length, range
//! or count constraints, a few string formats. Like the official SDK (its `transformJSONSchema`),
//! we send that subset and move every constraint the API does not take into the schema's
//! `description`, where the model still reads it; the answer is then checked against the full
//! schema here. What no rewrite can make acceptable (a recursive schema, a `$ref` outside the
//! schema, a schema without a type) is refused before anything is sent.

use std::collections::HashSet;

use percent_encoding::percent_decode_str;
use serde_json::Value;

use crate::engine::json::ordered_value::{get, take, Json, Members};

/// The string formats the API takes; another stays in the description.
const FORMATS: &[&str] = &[
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

/// The schema the API gets for `schema` (already known to compile), or why there is none: a
/// sentence naming where in the schema.
pub fn api_form(schema: &Json) -> Result<Json, String> {
    strict(schema.clone(), "")
}

/// Where in the schema, as a person reads it.
fn place(at: &str) -> String {
    if at.is_empty() {
        "the schema's root".to_owned()
    } else {
        format!("the schema at {at}")
    }
}

fn strict(schema: Json, at: &str) -> Result<Json, String> {
    let Json::Object(mut rest) = schema else {
        return Err(format!(
            "{} is {}, not a schema object; write out the type it stands for",
            place(at),
            kind(&schema)
        ));
    };
    let mut out: Members = Vec::new();
    // Definitions first: a `$ref` at the root keeps the definitions beside it.
    for key in ["$defs", "definitions"] {
        let Some(defs) = take(&mut rest, key) else {
            continue;
        };
        let Json::Object(defs) = defs else {
            return Err(format!(
                "{key} at {} must be an object of schemas",
                place(at)
            ));
        };
        let mut strict_defs = Vec::with_capacity(defs.len());
        for (name, def) in defs {
            let inner = strict(def, &format!("{at}/{key}/{}", escape(&name)))?;
            strict_defs.push((name, inner));
        }
        out.push((key.to_owned(), Json::Object(strict_defs)));
    }
    if let Some(reference) = take(&mut rest, "$ref") {
        out.push(("$ref".to_owned(), reference));
        return Ok(Json::Object(out));
    }
    if matches!(get(&rest, "enum"), Some(Json::Array(v)) if !v.is_empty() && v.iter().all(Json::is_primitive))
    {
        out.push(("enum".to_owned(), take(&mut rest, "enum").expect("seen")));
    }
    if get(&rest, "const").is_some_and(Json::is_primitive) {
        out.push(("const".to_owned(), take(&mut rest, "const").expect("seen")));
    }
    let literal = get(&out, "enum").is_some() || get(&out, "const").is_some();
    let declared = take(&mut rest, "type");
    let kind_of = if literal { None } else { declared };
    let any_of = take(&mut rest, "anyOf");
    let one_of = take(&mut rest, "oneOf");
    let all_of = take(&mut rest, "allOf");
    // `$schema` names the dialect and constrains nothing.
    take(&mut rest, "$schema");
    match (any_of, one_of, all_of) {
        (Some(Json::Array(v)), _, _) => out.push(("anyOf".into(), each(v, at, "anyOf")?)),
        // The API takes `anyOf` only; a model's answer that fits one branch fits `anyOf`, and the
        // full schema checks it is only one.
        (_, Some(Json::Array(v)), _) => out.push(("anyOf".into(), each(v, at, "oneOf")?)),
        (_, _, Some(Json::Array(v))) => out.push(("allOf".into(), each(v, at, "allOf")?)),
        _ if !literal => match &kind_of {
            Some(t) => out.push(("type".to_owned(), t.clone())),
            None => {
                return Err(format!(
                    "{} has no type (nor anyOf, oneOf, allOf, enum or const); the API needs one: give it a type",
                    place(at)
                ))
            }
        },
        _ => {}
    }
    for key in ["description", "title"] {
        if let Some(v) = take(&mut rest, key) {
            out.push((key.to_owned(), v));
        }
    }
    match kind_of.as_ref() {
        Some(Json::String(t)) if t == "object" => {
            let properties = match take(&mut rest, "properties") {
                None | Some(Json::Null) => Vec::new(),
                Some(Json::Object(p)) => p,
                Some(other) => {
                    return Err(format!(
                        "properties at {} must be an object of schemas, got {}",
                        place(at),
                        kind(&other)
                    ))
                }
            };
            let mut strict_props = Vec::with_capacity(properties.len());
            for (name, prop) in properties {
                let inner = strict(prop, &format!("{at}/properties/{}", escape(&name)))?;
                strict_props.push((name, inner));
            }
            out.push(("properties".to_owned(), Json::Object(strict_props)));
            take(&mut rest, "additionalProperties");
            out.push(("additionalProperties".to_owned(), Json::Bool(false)));
            if let Some(required) = take(&mut rest, "required") {
                out.push(("required".to_owned(), required));
            }
        }
        Some(Json::String(t)) if t == "string" => {
            if let Some(format) = take(&mut rest, "format") {
                match &format {
                    Json::String(f) if FORMATS.contains(&f.as_str()) => {
                        out.push(("format".to_owned(), format))
                    }
                    _ => rest.push(("format".to_owned(), format)),
                }
            }
        }
        Some(Json::String(t)) if t == "array" => {
            if let Some(items) = take(&mut rest, "items") {
                out.push(("items".to_owned(), strict(items, &format!("{at}/items"))?));
            }
            if let Some(min) = take(&mut rest, "minItems") {
                match &min {
                    Json::Number(n) if n.as_f64() == Some(0.0) || n.as_f64() == Some(1.0) => {
                        out.push(("minItems".to_owned(), min))
                    }
                    _ => rest.push(("minItems".to_owned(), min)),
                }
            }
        }
        _ => {}
    }
    if !rest.is_empty() {
        describe_the_rest(&mut out, &rest);
    }
    Ok(Json::Object(out))
}

/// The branches of an `anyOf` / `oneOf` / `allOf`, each rewritten.
fn each(branches: Vec<Json>, at: &str, key: &str) -> Result<Json, String> {
    let mut out = Vec::with_capacity(branches.len());
    for (i, branch) in branches.into_iter().enumerate() {
        out.push(strict(branch, &format!("{at}/{key}/{i}"))?);
    }
    Ok(Json::Array(out))
}

/// What the API does not take, in words the model reads: `{minLength: 1, maximum: 10}` after the
/// description.
fn describe_the_rest(out: &mut Members, rest: &Members) {
    let mut words = String::from("{");
    for (i, (key, value)) in rest.iter().enumerate() {
        if i > 0 {
            words.push_str(", ");
        }
        words.push_str(key);
        words.push_str(": ");
        value.write(&mut words);
    }
    words.push('}');
    match out.iter_mut().find(|(k, _)| k == "description") {
        Some((_, description)) => {
            let before = match &*description {
                Json::String(s) => s.clone(),
                other => other.to_text(),
            };
            *description = Json::String(if before.is_empty() {
                words
            } else {
                format!("{before}\n\n{words}")
            });
        }
        None => out.push(("description".to_owned(), Json::String(words))),
    }
}

fn kind(json: &Json) -> &'static str {
    match json {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// A place in the schema as a JSON Pointer, `/` for the root.
fn pointer(at: &str) -> &str {
    if at.is_empty() {
        "/"
    } else {
        at
    }
}

/// A key as a JSON Pointer segment.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Keywords whose value is a map of schemas, by name.
const SCHEMA_MAPS: &[&str] = &[
    "$defs",
    "definitions",
    "properties",
    "patternProperties",
    "dependentSchemas",
];
/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: &[&str] = &["anyOf", "allOf", "oneOf", "prefixItems"];
/// Keywords whose value is a schema (`items` may also be draft-07's list).
const SCHEMA_ONES: &[&str] = &[
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
];

/// What [`check_refs`] refuses.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Refs {
    /// Only a `$ref` that leaves the schema: what the full schema may not hold, since the
    /// answer is checked against it here and nothing is fetched.
    Outside,
    /// That, and a `$ref` that makes the schema recursive: what the schema the API gets may not
    /// hold (its answer must be finite).
    OutsideOrRecursive,
}

/// Refuses the `$ref`s of `schema` that `refs` names, walking it keyword by keyword (a property
/// called `default` is a schema like any other; the value of a `default` keyword is not).
pub fn check_refs(schema: &Value, refs: Refs) -> Result<(), String> {
    let mut walk = RefWalk {
        root: schema,
        refs,
        following: HashSet::new(),
        done: HashSet::new(),
        depth: 0,
    };
    walk.schema(schema, "")
}

/// How deep the walk may go, nesting and `$ref`s followed together: far beyond any schema a
/// model can answer, and well within a thread's stack (a chain of thousands of `$ref`s would
/// otherwise overflow it, which no error can catch).
const MAX_DEPTH: usize = 128;

struct RefWalk<'s> {
    root: &'s Value,
    refs: Refs,
    /// The targets being followed.
    following: HashSet<String>,
    /// Targets followed to their end without meeting themselves.
    done: HashSet<String>,
    /// Schemas entered and not yet left.
    depth: usize,
}

impl RefWalk<'_> {
    fn schema(&mut self, node: &Value, at: &str) -> Result<(), String> {
        if self.depth >= MAX_DEPTH {
            return Err(format!(
                "the schema nests too deeply at {} (more than {MAX_DEPTH} levels, $refs followed included); flatten it",
                pointer(at)
            ));
        }
        self.depth += 1;
        let walked = self.members(node, at);
        self.depth -= 1;
        walked
    }

    fn members(&mut self, node: &Value, at: &str) -> Result<(), String> {
        let Value::Object(members) = node else {
            return Ok(());
        };
        if let Some(Value::String(reference)) = members.get("$ref") {
            self.follow(reference, at)?;
        }
        for (key, value) in members {
            let here = format!("{at}/{}", escape(key));
            match value {
                Value::Object(map) if SCHEMA_MAPS.contains(&key.as_str()) => {
                    for (name, inner) in map {
                        self.schema(inner, &format!("{here}/{}", escape(name)))?;
                    }
                }
                Value::Array(list) if SCHEMA_LISTS.contains(&key.as_str()) || key == "items" => {
                    for (i, inner) in list.iter().enumerate() {
                        self.schema(inner, &format!("{here}/{i}"))?;
                    }
                }
                _ if SCHEMA_ONES.contains(&key.as_str()) => self.schema(value, &here)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn follow(&mut self, reference: &str, at: &str) -> Result<(), String> {
        // `""` is the document itself; a fragment is a JSON Pointer, percent-encoded in a URI.
        let fragment = if reference.is_empty() {
            Some("")
        } else {
            reference.strip_prefix('#')
        };
        let Some(target) = fragment.map(|f| percent_decode_str(f).decode_utf8_lossy().into_owned())
        else {
            return Err(format!(
                "$ref {reference:?} (at {}) points outside the schema; the API takes only references within it (#/$defs/…): put what it names in $defs",
                pointer(at)
            ));
        };
        if self.refs == Refs::Outside {
            return Ok(());
        }
        let target = target.as_str();
        let inside =
            at == target || (at.starts_with(target) && at[target.len()..].starts_with('/'));
        if inside || self.following.contains(target) {
            return Err(format!(
                "the schema is recursive: $ref {reference:?} (at {}) leads back to itself, and the API takes no recursive schema; unroll it to the depth you need",
                pointer(at)
            ));
        }
        if self.done.contains(target) {
            return Ok(());
        }
        let Some(node) = self.root.pointer(target) else {
            let kept = match self.refs {
                Refs::Outside => "",
                // What the API gets keeps `$defs`, but not everything else the caller wrote.
                Refs::OutsideOrRecursive => {
                    " the API gets (a oneOf is sent as anyOf; what it cannot take is described in words)"
                }
            };
            return Err(format!(
                "$ref {reference:?} (at {}) points nowhere in the schema{kept}; refer to $defs (#/$defs/…)",
                pointer(at)
            ));
        };
        self.following.insert(target.to_owned());
        self.schema(node, target)?;
        self.following.remove(target);
        self.done.insert(target.to_owned());
        Ok(())
    }
}

#[cfg(test)]
mod tests;
