use super::*;
use serde_json::json;

/// The form sent for `schema`, checked as `OutputFormat::new` checks it.
fn form(schema: &str) -> Result<String, String> {
    let ordered: Json = serde_json::from_str(schema).unwrap();
    check_refs(&ordered.to_value(), Refs::Outside)?;
    let sent = api_form(&ordered)?;
    check_refs(&sent.to_value(), Refs::OutsideOrRecursive)?;
    Ok(sent.to_text())
}

#[test]
fn closes_objects_and_describes_what_the_api_does_not_take() {
    let sent = form(
        r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
            "properties":{"id":{"type":"string","minLength":1,"maxLength":9,"description":"The id"},
                          "n":{"type":"integer","minimum":-9007199254740991,"maximum":9007199254740991},
                          "tags":{"type":"array","items":{"type":"string","format":"email"},"minItems":2},
                          "at":{"type":"string","format":"date"},
                          "pat":{"type":"string","format":"regex"}},
            "required":["id"],"additionalProperties":{}}"#,
    )
    .unwrap();
    assert_eq!(
        sent,
        r#"{"type":"object","properties":{"id":{"type":"string","description":"The id\n\n{minLength: 1, maxLength: 9}"},"n":{"type":"integer","description":"{minimum: -9007199254740991, maximum: 9007199254740991}"},"tags":{"type":"array","items":{"type":"string","format":"email"},"description":"{minItems: 2}"},"at":{"type":"string","format":"date"},"pat":{"type":"string","description":"{format: \"regex\"}"}},"additionalProperties":false,"required":["id"]}"#
    );
}

#[test]
fn literals_drop_the_type_and_one_of_becomes_any_of() {
    let sent = form(
        r#"{"type":"object","properties":{
            "s":{"type":"string","enum":["a","b"]},
            "c":{"type":"string","const":"x"},
            "e":{"enum":[{"a":1}],"type":"object"},
            "u":{"oneOf":[{"type":"string"},{"type":"null"}],"type":"string"},
            "a":{"allOf":[{"type":"object","properties":{}}]}}}"#,
    )
    .unwrap();
    let v: Value = serde_json::from_str(&sent).unwrap();
    assert_eq!(v["properties"]["s"], json!({"enum":["a","b"]}));
    assert_eq!(v["properties"]["c"], json!({"const":"x"}));
    // An enum of objects is no literal the API takes: described, and the object closed.
    assert_eq!(
        v["properties"]["e"],
        json!({"type":"object","properties":{},"additionalProperties":false,"description":"{enum: [{\"a\":1}]}"})
    );
    assert_eq!(
        v["properties"]["u"],
        json!({"anyOf":[{"type":"string"},{"type":"null"}]})
    );
    assert_eq!(
        v["properties"]["a"],
        json!({"allOf":[{"type":"object","properties":{},"additionalProperties":false}]})
    );
}

#[test]
fn definitions_are_kept_and_a_ref_keeps_nothing_else() {
    let sent = form(
        r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/A","description":"dropped"}},
            "$defs":{"A":{"type":"object","properties":{"x":{"type":"number","multipleOf":2}}}}}"##,
    )
    .unwrap();
    let v: Value = serde_json::from_str(&sent).unwrap();
    assert_eq!(v["properties"]["a"], json!({"$ref":"#/$defs/A"}));
    assert_eq!(
        v["$defs"]["A"],
        json!({"type":"object","properties":{"x":{"type":"number","description":"{multipleOf: 2}"}},"additionalProperties":false})
    );
    assert!(sent.starts_with(r#"{"$defs":"#), "{sent}");
}

#[test]
fn refuses_what_no_rewrite_makes_acceptable() {
    let recursive = form(
        r##"{"type":"object","properties":{"root":{"$ref":"#/$defs/Node"}},
            "$defs":{"Node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}}}}}"##,
    )
    .unwrap_err();
    assert!(recursive.contains("recursive"), "{recursive}");
    let mutual = form(
        r##"{"type":"object","$defs":{"A":{"type":"object","properties":{"b":{"$ref":"#/$defs/B"}}},
            "B":{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}}}}}"##,
    )
    .unwrap_err();
    assert!(mutual.contains("recursive"), "{mutual}");
    let to_root = form(r##"{"type":"object","properties":{"me":{"$ref":"#"}}}"##).unwrap_err();
    assert!(to_root.contains("recursive"), "{to_root}");
    let external =
        form(r#"{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}"#)
            .unwrap_err();
    assert!(external.contains("points outside the schema"), "{external}");
    assert!(external.contains("/properties/x"), "{external}");
    let untyped = form(r#"{"type":"object","properties":{"any":{}}}"#).unwrap_err();
    assert_eq!(
        untyped,
        "the schema at /properties/any has no type (nor anyOf, oneOf, allOf, enum or const); the API needs one: give it a type"
    );
    let boolean = form(r#"{"type":"object","properties":{"b":true}}"#).unwrap_err();
    assert!(
        boolean.contains("is a boolean, not a schema object"),
        "{boolean}"
    );
    // A definition used twice is no recursion.
    assert!(form(
        r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/T"},"b":{"$ref":"#/$defs/T"},"c":{"$ref":"#/$defs/AB"}},
            "$defs":{"T":{"type":"string"},"AB":{"type":"object","properties":{"t":{"$ref":"#/$defs/T"}}}}}"##
    )
    .is_ok());
}

#[test]
fn refs_are_walked_keyword_by_keyword_in_what_is_sent() {
    // Properties named like data keywords are schemas all the same.
    for schema in [
        r##"{"type":"object","properties":{"default":{"$ref":"#"}}}"##,
        r##"{"type":"object","properties":{"examples":{"$ref":"#/properties/examples"}}}"##,
        r##"{"type":"object","properties":{"const":{"$defs":{"A":{"$ref":"#/properties/const/$defs/B"},"B":{"$ref":"#/properties/const/$defs/A"}},"$ref":"#/properties/const/$defs/A"}}}"##,
    ] {
        let err = form(schema).unwrap_err();
        assert!(err.contains("recursive"), "{schema}: {err}");
    }
    // A recursion only in what the API is not sent (closed away, or described in words) is
    // no recursion of the schema it gets; the full one is still what the answer is checked
    // against.
    for schema in [
        r##"{"type":"object","properties":{"name":{"type":"string"}},"additionalProperties":{"$ref":"#"}}"##,
        r##"{"type":"object","patternProperties":{"^x":{"$ref":"#"}}}"##,
        r##"{"type":"object","x-note":{"$ref":"#"}}"##,
        r##"{"type":"object","properties":{"d":{"type":"string","default":{"$ref":"#"}}}}"##,
    ] {
        assert!(form(schema).is_ok(), "{schema}: {:?}", form(schema));
    }
    // A $ref outside is refused wherever a schema is.
    let err = form(r#"{"type":"object","additionalProperties":{"$ref":"https://example.com/s"}}"#)
        .unwrap_err();
    assert!(err.contains("points outside the schema"), "{err}");
}

#[test]
fn definitions_are_kept_under_their_own_name() {
    // The official SDK knows only $defs (it would describe `definitions` in words and leave the
    // $ref dangling); the API takes both.
    let sent = form(
        r##"{"type":"object","properties":{"a":{"$ref":"#/definitions/A"}},"definitions":{"A":{"type":"string","minLength":1}}}"##,
    )
    .unwrap();
    assert_eq!(
        sent,
        r##"{"definitions":{"A":{"type":"string","description":"{minLength: 1}"}},"type":"object","properties":{"a":{"$ref":"#/definitions/A"}},"additionalProperties":false}"##
    );
}

#[test]
fn a_long_ref_chain_is_refused_not_a_stack_overflow_and_deep_nesting_is_fine() {
    let links = 7000;
    let mut defs = String::new();
    for i in 0..links {
        defs.push_str(&format!(r##""A{i}":{{"$ref":"#/$defs/A{}"}},"##, i + 1));
    }
    defs.push_str(&format!(r#""A{links}":{{"type":"string"}}"#));
    let schema = format!(
        r##"{{"type":"object","properties":{{"a":{{"$ref":"#/$defs/A0"}}}},"$defs":{{{defs}}}}}"##
    );
    // On a runtime worker's stack (2 MiB), which the walk used to overflow.
    let err = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || form(&schema))
        .unwrap()
        .join()
        .unwrap()
        .unwrap_err();
    assert!(err.contains("nests too deeply"), "{err}");
    // 62 levels of objects: the rewrite adds `properties` to the innermost, one level deeper
    // than serde reads text; the check does not go through text.
    let mut nested = r#"{"type":"object"}"#.to_owned();
    for _ in 0..62 {
        nested = format!(r#"{{"type":"object","properties":{{"a":{nested}}}}}"#);
    }
    assert!(form(&nested).is_ok(), "{:?}", form(&nested));
    let mut items = r#"{"type":"object"}"#.to_owned();
    for _ in 0..125 {
        items = format!(r#"{{"type":"array","items":{items}}}"#);
    }
    let deep = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || form(&items))
        .unwrap()
        .join()
        .unwrap();
    assert!(deep.is_ok(), "{deep:?}");
}

#[test]
fn a_percent_encoded_ref_is_followed() {
    let sent = form(
        r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/a%20b"},"b":{"$ref":"#/%24defs/c"}},"$defs":{"a b":{"type":"string"},"c":{"type":"number"}}}"##,
    );
    assert!(sent.is_ok(), "{sent:?}");
    let err = form(r#"{"type":"object","properties":{"me":{"$ref":""}}}"#).unwrap_err();
    assert!(err.contains("recursive"), "{err}");
}
