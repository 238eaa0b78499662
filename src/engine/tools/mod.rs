//! Tools as the loop knows them: their definitions and the trait it calls them through
//! (`tool.rs`), their input schemas (`schema.rs`), approval of risky calls (`approval.rs`), and
//! the tool changes a conversation makes as it goes (`changes.rs`).

pub mod approval;
pub mod changes;
pub mod schema;
pub mod tool;
