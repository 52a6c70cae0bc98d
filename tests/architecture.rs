//! The shape of the crate, checked: the top-level modules of `src/` form a tree (no
//! module imports another that imports it back, directly or in a cycle), and the
//! concepts that must exist once do (the "each query once" set and the NaN policy live
//! in `intake.rs`).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comments and without its `#[cfg(test)]` module.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a source file");
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Top-level module of each file (`src/trec/run.rs` -> `trec`) and its code.
fn modules() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).expect("under src/");
            let first = rel.iter().next().expect("a name").to_string_lossy();
            (first.trim_end_matches(".rs").to_string(), code(f))
        })
        .collect()
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in modules() {
        let deps = g.entry(module.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let name: String = code[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() && name != module {
                deps.insert(name);
            }
        }
    }
    g
}

#[test]
fn top_level_modules_form_no_cycle() {
    let g = graph();
    assert!(g.len() >= 15, "found only {} modules", g.len());
    for start in g.keys() {
        // depth-first from start: reaching start again is a cycle
        let mut stack: Vec<Vec<String>> = vec![vec![start.clone()]];
        let mut seen = BTreeSet::new();
        while let Some(path) = stack.pop() {
            let last = path.last().expect("non-empty");
            for next in g.get(last).into_iter().flatten() {
                assert!(
                    next != start,
                    "import cycle: {} -> {next}",
                    path.join(" -> ")
                );
                if seen.insert(next.clone()) {
                    let mut p = path.clone();
                    p.push(next.clone());
                    stack.push(p);
                }
            }
        }
    }
    // the graph is read correctly: known edges are present
    assert!(g["trec"].contains("intake") && g["evaluate"].contains("metrics"));
    assert!(!g["results"].contains("evaluate") && !g["qrels"].contains("trec"));
}

#[test]
fn the_seen_set_and_the_nan_policy_exist_once() {
    let mods = modules();
    let with = |needle: &str| -> BTreeSet<String> {
        mods.iter()
            .filter(|(_, c)| c.contains(needle))
            .map(|(m, _)| m.clone())
            .collect()
    };
    let intake: BTreeSet<String> = ["intake".to_string()].into();
    assert_eq!(with("HashSet<Box<[u8]>>"), intake, "each-query-once sets");
    // the score policy's message, in one place (other modules print or aggregate NaN)
    assert_eq!(
        with("a ranking needs comparable scores"),
        intake,
        "score policy"
    );
}
