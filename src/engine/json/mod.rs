//! JSON text helpers, below everything else: canonical text (`canonical.rs`, so two inputs that
//! differ only in key order count as the same call) and JSON kept in the order it came (an
//! object's members, `ordered_fields.rs`; a whole value, `ordered_value.rs`).

pub mod canonical;
pub mod ordered_fields;
pub mod ordered_value;
