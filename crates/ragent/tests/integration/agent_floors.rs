//! The floors of `crates/ragent/src/agent/`: each file stands on a floor,
//! and imports only from its own floor or the ones below, with no circle.
//! A new capability finds its floor here; a file not listed fails, so the
//! choice is made when the file is added.
//!
//! Imports between the files are written `use crate::agent::...` (never
//! `super::`), and `mod.rs` may name its child modules directly; both are
//! read here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Bottom to top: what each floor is, and its files (paths under `agent/`,
/// without `.rs`; `mod` is `agent/mod.rs`).
const FLOORS: &[(&str, &[&str])] = &[
    (
        "ground: shared state and plain views",
        &[
            "context",
            "events",
            "views",
            "ending",
            "sign_ins",
            "held_inputs",
            "call_schemas",
            "inner",
            "elicitation/mod",
        ],
    ),
    ("the tool listing", &["tools"]),
    (
        "judging, with no store and no server",
        &["judge", "elicitation/judge", "start"],
    ),
    (
        "the batch: stored calls, previews and the card",
        &[
            "batch",
            "checkout_preview",
            "preview",
            "mandates",
            "card",
            "rejudge",
            "elicitation/stored",
        ],
    ),
    (
        "execution, with the live input watch, and recovery",
        &[
            "execute",
            "elicitation/live",
            "recheck",
            "reads_first",
            "recovery",
        ],
    ),
    (
        "entry points: a message, a reply, an answer, a retry, a transcript",
        &[
            "message",
            "respond",
            "elicitation/route",
            "retry",
            "transcript",
        ],
    ),
    ("the run loop", &["run"]),
    (
        "the API the shell calls",
        &[
            "mod",
            "inspect",
            "definitions",
            "sign_in",
            "mcp_config",
            "merchants",
        ],
    ),
];

fn agent_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/agent")
}

/// Every file of `agent/`, as a name of [`FLOORS`].
fn files(dir: &Path, prefix: &str, found: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("the agent folder is readable")
        .map(|entry| entry.expect("a readable entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            files(&path, &format!("{prefix}{name}/"), found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            let text = std::fs::read_to_string(&path).expect("a readable file");
            found.insert(format!("{prefix}{name}"), text);
        }
    }
}

/// The text before the file's tests: what the tests import is no floor's.
fn without_tests(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |at| &text[..at])
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`.
fn expand(path: &str) -> Vec<String> {
    let path: String = path.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = path.find('{') else {
        return vec![path];
    };
    let (head, rest) = path.split_at(open);
    let inner = &rest[1..rest.len() - 1];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|part| !part.is_empty())
        .flat_map(|part| expand(&format!("{head}{part}")))
        .collect()
}

/// The `agent/` files a file imports.
fn imports(file: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let code = without_tests(text);
    let mut paths = Vec::new();
    // `use crate::agent::...;` statements, braces and all.
    let mut rest = code;
    while let Some(at) = rest.find("crate::agent::") {
        let tail = &rest[at + "crate::agent::".len()..];
        let mut depth = 0;
        let end = tail
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                depth < 0 || (depth == 0 && (c == ';' || c == '(' || c == ')' || c == ' '))
            })
            .map_or(tail.len(), |(i, _)| i);
        paths.extend(expand(&tail[..end]));
        rest = &tail[end..];
    }
    // `mod.rs` names its children directly (`run::drive`).
    if file == "mod" {
        for name in known.iter().filter(|name| !name.contains('/')) {
            let named = code.match_indices(&format!("{name}::")).any(|(at, _)| {
                // A path of its own, not the tail of another (`mcp::sign_in::`).
                !code[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
            });
            if named {
                paths.push(format!("{name}::"));
            }
        }
    }
    paths
        .iter()
        .filter_map(|path| {
            let segments: Vec<&str> = path.split("::").collect();
            // The longest prefix of the path that names a file.
            (1..=segments.len())
                .rev()
                .map(|n| segments[..n].join("/"))
                .find(|candidate| known.contains(candidate))
                // A name `agent/mod.rs` defines or hands on.
                .or_else(|| Some("mod".to_string()))
        })
        .filter(|target| target != file)
        .collect()
}

fn floor_of() -> BTreeMap<&'static str, usize> {
    FLOORS
        .iter()
        .enumerate()
        .flat_map(|(floor, (_, names))| names.iter().map(move |name| (*name, floor)))
        .collect()
}

/// A circle among the imports, if there is one, as the files around it.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn every_file_of_the_agent_imports_only_from_its_floor_or_below_and_none_in_a_circle() {
    let mut found = BTreeMap::new();
    files(&agent_dir(), "", &mut found);
    let floors = floor_of();
    let known: BTreeSet<String> = found.keys().cloned().collect();

    let unlisted: Vec<&String> = known
        .iter()
        .filter(|name| !floors.contains_key(name.as_str()))
        .collect();
    assert!(
        unlisted.is_empty(),
        "files of agent/ on no floor (add each to FLOORS in this test): {unlisted:?}"
    );
    let missing: Vec<&&str> = floors
        .keys()
        .filter(|name| !known.contains(**name))
        .collect();
    assert!(
        missing.is_empty(),
        "FLOORS names files that are gone: {missing:?}"
    );

    let mut graph = BTreeMap::new();
    let mut upward = Vec::new();
    let mut relative = Vec::new();
    for (file, text) in &found {
        if without_tests(text).contains("super::") {
            relative.push(file.clone());
        }
        let targets = imports(file, text, &known);
        for target in &targets {
            let (from, to) = (floors[file.as_str()], floors[target.as_str()]);
            if to > from {
                upward.push(format!(
                    "{file} (floor {from}: {}) imports {target} (floor {to}: {})",
                    FLOORS[from].0, FLOORS[to].0
                ));
            }
        }
        graph.insert(file.clone(), targets);
    }
    assert!(
        relative.is_empty(),
        "these files import with `super::`; write `crate::agent::...`: {relative:?}"
    );
    assert!(
        upward.is_empty(),
        "imports that run up a floor:\n{}",
        upward.join("\n")
    );
    assert_eq!(
        circle(&graph),
        None,
        "files of agent/ that import each other in a circle"
    );
}

#[test]
fn the_floor_check_reads_grouped_and_nested_imports() {
    let known: BTreeSet<String> = ["batch", "judge", "elicitation/stored", "run", "mod"]
        .into_iter()
        .map(String::from)
        .collect();
    let text = "use crate::agent::{batch::{self, record}, judge::Verdict};\n\
                use crate::agent::elicitation::stored::park;\n\
                use crate::agent::Agent;\n\
                #[cfg(test)]\nmod tests { use crate::agent::run::drive; }";
    let found = imports("respond", text, &known);
    let expected: BTreeSet<String> = ["batch", "judge", "elicitation/stored", "mod"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(found, expected);
    assert_eq!(
        imports("mod", "fn go() { run::drive(); }", &known),
        BTreeSet::from(["run".to_string()])
    );
}

#[test]
fn a_circle_among_the_imports_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        circle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
