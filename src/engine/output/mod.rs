//! What a run hands back (`run_output.rs`), and the shape its answer is checked against when
//! the run asks for one (`answer_format.rs`; the form of that schema the API takes,
//! `compatible.rs`).

pub mod answer_format;
pub mod compatible;
pub mod run_output;
