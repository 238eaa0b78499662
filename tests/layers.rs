//! The engine's folders are layers, and its files import downwards: counted from the source,
//! its `use` statements and the `crate::`/`super::` paths in its code, no file reaches back to
//! one that reaches it (no cycle), and at most [`MAX_UP`] imports go from a lower layer up to a
//! higher one.
//!
//! The layers, lowest first (as `src/engine/mod.rs` describes them):
//! `json/`, `report/`, `error`, `wire/`, `tools/`, `mcp/`, `output/`, `trace/`, `run/`.
//! A new folder must be placed in [`LAYERS`] to be counted.
//!
//! A folder's `mod.rs` (and the engine's own) only declares and re-exports: a path through it
//! counts as an import of the file it re-exports from.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

/// The engine's layers, lowest first: a top-level folder (or file, `error.rs`) of `src/engine`.
const LAYERS: [&str; 10] = [
    "json", "report", "error", "wire", "tools", "mcp", "output", "trace", "run", "store",
];

/// The most imports that may point from a lower layer up to a higher one.
const MAX_UP: usize = 5;

/// A module of `src/engine`, as the path below it (`["wire", "client"]`; `[]` is the engine).
type Module = Vec<String>;

fn engine_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine")
}

/// Every source file of the engine but those that are all tests, by module.
fn modules(dir: &Path, out: &mut BTreeMap<Module, PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            modules(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            let rel = path.strip_prefix(engine_dir()).unwrap().with_extension("");
            let mut module: Module = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            out.insert(module, path);
        }
    }
}

/// A file's code: its `#[cfg(test)]` part and its comments left out.
fn code_of(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    let code = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => &text,
    };
    code.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `use` statements of some code (each the text between `use` and `;`, and whether it is
/// a `pub use`), and the code without them.
fn use_statements(code: &str) -> (Vec<(bool, String)>, String) {
    let mut uses = Vec::new();
    let mut rest = String::new();
    let mut at = 0;
    while let Some(found) = code[at..].find("use ") {
        let start = at + found;
        // A statement: `use` first on its line, after its visibility if any.
        let line = code[..start].rsplit('\n').next().unwrap_or_default().trim();
        if !["", "pub", "pub(crate)", "pub(super)"].contains(&line) {
            rest.push_str(&code[at..start + 4]);
            at = start + 4;
            continue;
        }
        let Some(end) = code[start..].find(';') else {
            break;
        };
        let public = !line.is_empty();
        rest.push_str(&code[at..start]);
        uses.push((public, code[start + 4..start + end].to_owned()));
        at = start + end + 1;
    }
    rest.push_str(&code[at..]);
    (uses, rest)
}

/// The paths one `use` names, its braces expanded and its renames (`as x`) dropped.
fn expand(tree: &str) -> Vec<String> {
    let compact: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut paths = Vec::new();
    expand_into("", &compact, &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let p = p.split(" as ").next().unwrap_or_default();
            p.chars().filter(|c| !c.is_whitespace()).collect()
        })
        .collect()
}

fn expand_into(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let Some(open) = tree.find('{') else {
        out.push(format!("{prefix}{}", tree.trim()));
        return;
    };
    let close = tree.rfind('}').expect("a closing brace");
    let head = format!("{prefix}{}", tree[..open].trim());
    let (mut depth, mut item) = (0, String::new());
    for c in tree[open + 1..close].chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            expand_into(&head, &item, out);
            item.clear();
        } else {
            item.push(c);
        }
    }
    if !item.trim().is_empty() {
        expand_into(&head, &item, out);
    }
}

/// The `crate::`, `super::` and `self::` paths written in code outside its `use` statements.
fn inline_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut at = 0;
    while at < code.len() {
        let next = ["crate::", "super::", "self::"]
            .iter()
            .filter_map(|start| code[at..].find(start).map(|i| at + i))
            .min();
        let Some(start) = next else { break };
        let before = code[..start].chars().next_back();
        let end = code[start..]
            .find(|c: char| !is_word(c))
            .map_or(code.len(), |i| start + i);
        if !before.is_some_and(is_word) {
            paths.push(code[start..end].trim_end_matches(':').to_owned());
        }
        at = end.max(start + 1);
    }
    paths
}

struct Engine {
    files: BTreeMap<Module, PathBuf>,
    /// What each module re-exports (`pub use`), by the name it is known by.
    reexports: HashMap<Module, HashMap<String, String>>,
}

impl Engine {
    /// The module a path written in `from` names: the longest of its prefixes that is a file,
    /// followed through a `mod.rs`'s re-exports. `None` for a path outside the engine.
    fn resolve(&self, from: &Module, path: &str, depth: usize) -> Option<Module> {
        let segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let mut full: Vec<String> = match segments.first()? {
            &"crate" => {
                if segments.get(1) != Some(&"engine") {
                    return None;
                }
                segments[2..].iter().map(|s| s.to_string()).collect()
            }
            &"super" | &"self" => {
                let mut module = from.clone();
                let mut rest = &segments[..];
                while let Some(&first) = rest.first() {
                    match first {
                        "super" => {
                            module.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
                module.extend(rest.iter().map(|s| s.to_string()));
                module
            }
            first => {
                let mut child = from.clone();
                child.push(first.to_string());
                if !self.files.contains_key(&child) {
                    return None;
                }
                let mut module = from.clone();
                module.extend(segments.iter().map(|s| s.to_string()));
                module
            }
        };
        while !full.is_empty() && !self.files.contains_key(&full) {
            let module = full[..full.len() - 1].to_vec();
            if self.files.contains_key(&module) {
                let is_mod = module.is_empty() || self.files[&module].ends_with("mod.rs");
                let name = full.last().unwrap();
                if let Some(target) = self.reexports.get(&module).and_then(|r| r.get(name)) {
                    if is_mod && depth < 8 {
                        return self.resolve(&module, target, depth + 1);
                    }
                }
                return Some(module);
            }
            full.pop();
        }
        Some(full)
    }

    /// Each file's imports of other files of the engine.
    fn graph(&self) -> BTreeMap<Module, BTreeSet<Module>> {
        let mut graph = BTreeMap::new();
        for (module, path) in &self.files {
            let (uses, rest) = use_statements(&code_of(path));
            let mut paths: Vec<String> = uses.iter().flat_map(|(_, u)| expand(u)).collect();
            paths.extend(inline_paths(&rest));
            let targets: BTreeSet<Module> = paths
                .iter()
                .filter_map(|p| self.resolve(module, p, 0))
                .filter(|m| !m.is_empty() && m != module)
                .collect();
            graph.insert(module.clone(), targets);
        }
        graph
    }
}

fn engine() -> Engine {
    let mut files = BTreeMap::new();
    modules(&engine_dir(), &mut files);
    let mut reexports = HashMap::new();
    for (module, path) in &files {
        let (uses, _) = use_statements(&code_of(path));
        let mut names = HashMap::new();
        for (_, tree) in uses.iter().filter(|(public, _)| *public) {
            for path in expand(tree) {
                let name = path.rsplit("::").next().unwrap_or_default().to_owned();
                names.insert(name, path);
            }
        }
        reexports.insert(module.clone(), names);
    }
    Engine { files, reexports }
}

fn name(module: &Module) -> String {
    module.join("/")
}

/// A cycle of the graph, as the files it goes through, if it has one.
fn find_cycle(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &Module,
        graph: &BTreeMap<Module, BTreeSet<Module>>,
        marks: &mut HashMap<Module, Mark>,
        stack: &mut Vec<Module>,
    ) -> Option<Vec<Module>> {
        marks.insert(node.clone(), Mark::Open);
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            match marks.get(next) {
                Some(Mark::Open) => {
                    let from = stack.iter().position(|m| m == next).unwrap();
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(Mark::Done) => {}
                None => {
                    if let Some(cycle) = visit(next, graph, marks, stack) {
                        return Some(cycle);
                    }
                }
            }
        }
        stack.pop();
        marks.insert(node.clone(), Mark::Done);
        None
    }
    let mut marks = HashMap::new();
    for node in graph.keys() {
        if !marks.contains_key(node) {
            if let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new()) {
                return Some(cycle);
            }
        }
    }
    None
}

fn layer(module: &Module) -> Option<usize> {
    LAYERS
        .iter()
        .position(|l| module.first() == Some(&l.to_string()))
}

#[test]
fn the_parser_reads_what_the_engine_writes() {
    assert_eq!(
        expand("crate::engine::{a::{B, C as D}, e}"),
        [
            "crate::engine::a::B",
            "crate::engine::a::C",
            "crate::engine::e"
        ]
    );
    let (uses, rest) = use_statements("use a::b;\nfn reuse() { crate::engine::x::y(); }");
    assert_eq!(uses, [(false, "a::b".to_owned())]);
    assert_eq!(inline_paths(&rest), ["crate::engine::x::y"]);
    let engine = engine();
    let wire = vec!["wire".to_owned(), "client".to_owned()];
    assert_eq!(
        engine.resolve(&wire, "crate::engine::RunError", 0),
        Some(vec!["error".to_owned()])
    );
    assert_eq!(
        engine.resolve(&wire, "super::settings::ApiConfig", 0),
        Some(vec!["wire".to_owned(), "settings".to_owned()])
    );
}

#[test]
fn no_file_of_the_engine_imports_one_that_imports_it() {
    let graph = engine().graph();
    if let Some(cycle) = find_cycle(&graph) {
        let names: Vec<_> = cycle.iter().map(name).collect();
        panic!("a cycle among the engine's files: {}", names.join(" -> "));
    }
}

#[test]
fn the_engine_imports_downwards() {
    let engine = engine();
    let outside: Vec<_> = engine
        .files
        .keys()
        .filter(|m| !m.is_empty() && layer(m).is_none())
        .map(name)
        .collect();
    assert!(
        outside.is_empty(),
        "place these in LAYERS (tests/layers.rs) and in src/engine/mod.rs: {outside:?}"
    );
    let up: Vec<_> = engine
        .graph()
        .iter()
        .flat_map(|(from, to)| to.iter().map(move |to| (from, to)))
        .filter(|(from, to)| layer(to) > layer(from) && layer(from).is_some())
        .map(|(from, to)| format!("{} -> {}", name(from), name(to)))
        .collect();
    assert!(
        up.len() <= MAX_UP,
        "{} imports point up a layer (at most {MAX_UP}): {up:#?}",
        up.len()
    );
}
