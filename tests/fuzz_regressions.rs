//! Replays every fuzz seed and every input a fuzzer once found (`fuzz/seeds`, `fuzz/regressions`)
//! through the fuzz entry points, so a fixed crash stays fixed without running a fuzzer.

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a readable directory entry").path();
            if path.file_name().is_some_and(|n| n == ".gitkeep") {
                continue;
            }
            let data = std::fs::read(&path).expect("a readable fuzz input");
            run(&data);
            count += 1;
        }
    }
    count
}

#[test]
fn api_response_inputs_never_panic() {
    assert!(
        replay(
            "api_response",
            anthropic_tool_calling::fuzzing::api_response
        ) >= 3
    );
}

#[test]
fn schema_and_input_inputs_never_panic() {
    assert!(
        replay(
            "schema_and_input",
            anthropic_tool_calling::fuzzing::schema_and_input
        ) >= 2
    );
}

#[test]
fn run_request_inputs_never_panic() {
    assert!(replay("run_request", anthropic_tool_calling::fuzzing::run_request) >= 2);
}
