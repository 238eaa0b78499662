#![no_main]
//! Fuzz target: see `anthropic_tool_calling::fuzzing::run_request`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    anthropic_tool_calling::fuzzing::run_request(data);
});
