//! What a run tells an observer while it goes on: its events (`events.rs`: steps, deltas,
//! tool calls and their results), and for a traced run each request it sends (`request.rs`,
//! the record; `pending.rs`, the request on its way, told when it ends).

pub mod events;
pub mod pending;
pub mod request;
