//! The house rules a reader relies on, checked so they keep holding: an error gets its code in
//! `engine/error*` only, and no source file outgrows one sitting (tests aside).

use std::fs;
use std::path::{Path, PathBuf};

/// The longest a source file may be, its tests left out.
const MAX_LINES: usize = 400;

/// The files under `dir` with one of the extensions `ext`, none of what is not the project's own
/// source: installed packages (`node_modules`) and hidden directories, such as the bench's
/// checkouts of other commits (`bench/.against/<sha>`, with their own build).
fn files(dir: &Path, ext: &[&str], out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            if name != "node_modules" && !name.starts_with('.') {
                files(&path, ext, out);
            }
        } else if ext
            .iter()
            .any(|e| path.extension().is_some_and(|x| x == *e))
        {
            out.push(path);
        }
    }
}

/// A Rust file without its `#[cfg(test)]` module, and none of a file that is all tests.
fn code_of(path: &Path) -> String {
    if path.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let text = fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn only_the_error_module_names_an_error_code() {
    let mut rust = Vec::new();
    files(&root().join("src"), &["rs"], &mut rust);
    let error_home = root().join("src/engine/error");
    let offenders: Vec<_> = rust
        .iter()
        .filter(|p| !p.starts_with(&error_home) && *p != &root().join("src/engine/error.rs"))
        .filter(|p| code_of(p).contains("ErrorCode::"))
        .collect();
    assert!(
        offenders.is_empty(),
        "name a RunError constructor instead: {offenders:?}"
    );
}

#[test]
fn no_source_file_is_longer_than_a_sitting() {
    let mut sources = Vec::new();
    files(&root().join("src"), &["rs"], &mut sources);
    for dir in ["lib", "stand-in", "bench", "scripts"] {
        files(&root().join(dir), &["js", "mjs"], &mut sources);
    }
    sources.push(root().join("index.js"));
    let long: Vec<_> = sources
        .iter()
        .filter(|p| !p.components().any(|c| c.as_os_str() == "node_modules"))
        .map(|p| (p, code_of(p).lines().count()))
        .filter(|(_, n)| *n > MAX_LINES)
        .collect();
    assert!(long.is_empty(), "split these by what they do: {long:?}");
}
