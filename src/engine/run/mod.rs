//! The loop: a run's settings (`config.rs`), the loop itself (`main_loop.rs`), the
//! conversation it is told in (`conversation.rs`, `conversation/`), the model's reply read
//! (`model_reply.rs`) and what its `stop_reason` means (`stop.rs`), one round of tool calls
//! (`round.rs`: each call checked, `check_call.rs`; run, `execute_call.rs`; what it came to,
//! `call_outcome.rs`; settled, `settle_round.rs`), what the run remembers of its calls
//! (`call_records.rs`, every call for the developer; `call_counts.rs`, counts by exact call),
//! resuming after approval (`resume.rs`), what a posted history may not do
//! (`posted_history.rs`), the token budget (`budget.rs`), a streamed reply's deltas
//! (`deltas.rs`) and the words the model and the developer are told (`feedback.rs`).
//!
//! A store of conversations would sit below this folder, called from the loop.

pub mod budget;
pub mod call_counts;
pub mod call_outcome;
pub mod call_record;
pub mod call_records;
pub mod check_call;
pub mod config;
pub mod conversation;
pub mod deltas;
pub mod execute_call;
pub mod feedback;
pub mod main_loop;
pub mod model_reply;
pub mod posted_history;
pub mod resume;
pub mod round;
pub mod settle_round;
pub mod stop;
