//! A JSON object kept as its members in the order they came, each value as written: what a
//! streamed content block is built on (so that the assembled reply has the same bytes as the
//! non-streamed one), and how `extraBody` is read (its fields go into the body as given).

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::{to_raw_value, RawValue};

/// A JSON object as its members in order, each value kept as written.
pub struct Fields(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Fields;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push(member);
                }
                Ok(Fields(members))
            }
        }
        deserializer.deserialize_map(Members)
    }
}

impl Fields {
    /// The members in order, a key given twice counted once: its last value, in its last place.
    pub fn last_wins(mut self) -> Vec<(String, Box<RawValue>)> {
        let mut kept: Vec<(String, Box<RawValue>)> = Vec::with_capacity(self.0.len());
        for (key, value) in self.0.drain(..) {
            kept.retain(|(k, _)| *k != key);
            kept.push((key, value));
        }
        kept
    }

    /// A member's value, as written.
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| &**v)
    }

    /// Replaces a member in place, or appends it (a new key goes last, as in the SDK).
    pub fn set(&mut self, key: &str, value: Box<RawValue>) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.0.push((key.to_owned(), value)),
        }
    }

    /// Takes a member out.
    pub fn remove(&mut self, key: &str) {
        self.0.retain(|(k, _)| k != key);
    }

    /// A member that is a JSON string, decoded.
    pub fn string(&self, key: &str) -> Option<String> {
        self.get(key)
            .and_then(|v| serde_json::from_str(v.get()).ok())
    }

    /// Writes the object, its members in order, to `out`.
    pub fn write(&self, out: &mut String) {
        out.push('{');
        for (i, (key, value)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(key).expect("a string serialises"));
            out.push(':');
            out.push_str(value.get());
        }
        out.push('}');
    }
}

/// A value as raw JSON (for a member that [`Fields::set`] writes).
pub fn raw<T: serde::Serialize + ?Sized>(value: &T) -> Box<RawValue> {
    to_raw_value(value).expect("strings and raw JSON always serialise")
}
