//! What a run records of itself, as plain data that its answer, its errors and its events all
//! carry: each tool call as the developer sees it (`calls.rs`), and the tokens the run used
//! (`usage.rs`: each reply's counts and their sum).

pub mod calls;
pub mod usage;
