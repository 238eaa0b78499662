//! A JSON value whose objects keep their members in the order they came. The schema sent to the
//! API is rewritten member by member, and what it cannot take is described in words in the
//! order the caller wrote it; `serde_json::Value` would sort the keys.

use std::collections::HashMap;
use std::fmt;

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Number;

use crate::engine::json::canonical::write_number;

/// A JSON value, objects as their members in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object's members in order (a key given twice keeps its last value, in its first place).
    Object(Vec<(String, Json)>),
}

impl Json {
    /// Whether this is a string, a number, a boolean or null.
    pub fn is_primitive(&self) -> bool {
        !matches!(self, Json::Array(_) | Json::Object(_))
    }

    /// The value as `JSON.stringify` writes it: no spaces, numbers as JavaScript prints them.
    pub fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Number(n) => write_number(n, out),
            Json::String(s) => {
                out.push_str(&serde_json::to_string(s).expect("a string serialises"))
            }
            Json::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (key, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(key).expect("a string serialises"));
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }

    /// The value as a `serde_json::Value` (its objects' keys then sorted).
    pub fn to_value(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(n.clone()),
            Json::String(s) => Value::String(s.clone()),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }

    /// The value as JSON text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }
}

/// An object's members, taken out one by one as the rewrite uses them.
pub type Members = Vec<(String, Json)>;

/// Takes the member `key` out of `members`.
pub fn take(members: &mut Members, key: &str) -> Option<Json> {
    let at = members.iter().position(|(k, _)| k == key)?;
    Some(members.remove(at).1)
}

/// The member `key`, if there is one.
pub fn get<'m>(members: &'m Members, key: &str) -> Option<&'m Json> {
    members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Number(n.into()))
    }
    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Json, E> {
        Number::from_f64(n)
            .map(Json::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }
    fn visit_str<E>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members: Members = Vec::new();
        // Each key's place, so that a large object is read in linear time.
        let mut places: HashMap<String, usize> = HashMap::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            // As `JSON.parse`: the last value counts, in the place the key first had.
            match places.get(&key) {
                Some(&at) => members[at].1 = value,
                None => {
                    places.insert(key.clone(), members.len());
                    members.push((key, value));
                }
            }
        }
        Ok(Json::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_order_and_writes_as_javascript_does() {
        let text = r#"{"z":1,"a":[1.0,1e21,-0.5,"\u0001é"],"m":{"b":null,"a":true},"z":2}"#;
        let json: Json = serde_json::from_str(text).unwrap();
        assert_eq!(
            json.to_text(),
            r#"{"z":2,"a":[1,1e+21,-0.5,"\u0001é"],"m":{"b":null,"a":true}}"#
        );
    }
}
