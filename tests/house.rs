//! The house rules a reader relies on, checked so they keep holding: an error gets its code in
//! `engine/error*` only (no other code even names the `ErrorCode` type), and no source file
//! outgrows one sitting (a file of tests aside: a module's tests longer than that go to its
//! `tests.rs`). How the engine's files import one another is `tests/layers.rs`.

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

/// A source file whole, none of a file that is all tests.
fn text_of(path: &Path) -> String {
    if path.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    fs::read_to_string(path).unwrap()
}

/// Whether code names the type `ErrorCode` as a word. Another crate's type of that name
/// (`rmcp`'s JSON-RPC code) is imported under a name of its own, and its `use` is not counted.
fn names_error_code(code: &str) -> bool {
    code.lines()
        .filter(|line| !line.trim_start().starts_with("use rmcp::"))
        .any(|line| {
            line.match_indices("ErrorCode").any(|(at, _)| {
                let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
                let before = line[..at].chars().next_back();
                let after = line[at + "ErrorCode".len()..].chars().next();
                !before.is_some_and(word) && !after.is_some_and(word)
            })
        })
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
        // The engine's public names: the type is re-exported for the crate's users.
        .filter(|p| *p != &root().join("src/engine/mod.rs"))
        .filter(|p| names_error_code(&code_of(p)))
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
        .map(|p| (p, text_of(p).lines().count()))
        .filter(|(_, n)| *n > MAX_LINES)
        .collect();
    assert!(long.is_empty(), "split these by what they do: {long:?}");
}

/// Phrases the failure texts a model or a developer reads are made of: the tool named as the
/// subject (`The tool {name} ...`, an MCP block's `[The tool returned ...]`), and the reasons a JS
/// tool's call failed, and a declined call's. Written anywhere but the one home, they are a second
/// voice.
const FAILURE_WORDS: [&str; 12] = [
    "was not run",
    "The tool {",
    "[The tool returned",
    "cannot be turned into JSON (",
    "the tool wrapper failed",
    "its reply never came",
    "calling it failed",
    "it was not started",
    "while its input was checked",
    "in its own words",
    "Do not retry it",
    "Declined by the user",
];

/// Files that read a declined call's sentence back (its words are the engine's): the thread view
/// finds the reason in a stored result, to show the call as the person declined it.
const NOT_YET_HOME: [&str; 1] = ["lib/thread-ui.js"];

/// Whether a line is a comment (Rust `//`, `///`, `//!`; JS `//`, `/*`, ` * `).
fn is_comment(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("//") || line.starts_with("/*") || line.starts_with('*')
}

#[test]
fn failure_words_are_written_in_one_home() {
    let mut sources = Vec::new();
    for dir in ["src/engine", "src/binding"] {
        files(&root().join(dir), &["rs"], &mut sources);
    }
    files(&root().join("lib"), &["js", "mjs"], &mut sources);
    let home = root().join("src/engine/run/feedback");
    let offenders: Vec<String> = sources
        .iter()
        .filter(|p| !p.starts_with(&home) && *p != &home.with_extension("rs"))
        .filter(|p| !NOT_YET_HOME.iter().any(|f| *p == &root().join(f)))
        .flat_map(|p| {
            let code = if p.extension().is_some_and(|e| e == "rs") {
                code_of(p)
            } else {
                text_of(p)
            };
            code.lines()
                .enumerate()
                .filter(|(_, line)| !is_comment(line))
                .filter(|(_, line)| FAILURE_WORDS.iter().any(|w| line.contains(w)))
                .map(|(i, line)| format!("{}:{}: {}", p.display(), i + 1, line.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "what the model or the developer reads after a tool fails is written in \
         src/engine/run/feedback.rs (or feedback/): add a constant or a small function there that \
         takes the facts (the tool's name, the error's text), and call it; JS settles a call with a \
         kind and a raw detail, never a sentence. Written elsewhere:\n{}",
        offenders.join("\n")
    );
}
