//! Canonical JSON text (object keys sorted at every depth, numbers written as JavaScript writes
//! them), so two inputs that differ only in key order or in how a number is spelled count as the
//! same call. The numbers matter for approvals: a paused history goes through `JSON.parse` and
//! `JSON.stringify` on its way to the browser and back, which turns the model's `10.0` into `10`
//! and `1e3` into `1000`, and an approval issued for the one must verify against the other.

use serde_json::Value;

/// Writes `value` with every object's keys in sorted order.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(v, out);
            }
            out.push(']');
        }
        Value::Number(n) => write_number(n, out),
        other => out.push_str(&other.to_string()),
    }
}

/// Writes `n` as JavaScript holds and prints it: a double, in its shortest round-trip form.
pub fn write_number(n: &serde_json::Number, out: &mut String) {
    match n.as_f64() {
        Some(f) => out.push_str(ryu_js::Buffer::new().format(f)),
        None => out.push_str(&n.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_does_not_matter() {
        let a: Value =
            serde_json::from_str(r#"{"b":1,"a":{"y":[1,{"q":2,"p":1}],"x":null}}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"a":{"x":null,"y":[1,{"p":1,"q":2}]},"b":1}"#).unwrap();
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":null,"y":[1,{"p":1,"q":2}]},"b":1}"#
        );
        let c: Value =
            serde_json::from_str(r#"{"a":{"x":null,"y":[{"p":1,"q":2},1]},"b":1}"#).unwrap();
        assert_ne!(canonical_json(&a), canonical_json(&c));
    }

    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        for (model, after_js) in [
            ("10.0", "10"),
            ("1e3", "1000"),
            ("-0.0", "0"),
            ("0.1", "0.1"),
            ("1.5e-7", "1.5e-7"),
            ("12345678901234567890", "12345678901234567000"),
        ] {
            let a: Value = serde_json::from_str(model).unwrap();
            let b: Value = serde_json::from_str(after_js).unwrap();
            assert_eq!(
                canonical_json(&a),
                canonical_json(&b),
                "{model} vs {after_js}"
            );
            assert_eq!(canonical_json(&b), after_js);
        }
        let one: Value = serde_json::from_str("1").unwrap();
        let other: Value = serde_json::from_str("1.0000001").unwrap();
        assert_ne!(canonical_json(&one), canonical_json(&other));
    }
}
