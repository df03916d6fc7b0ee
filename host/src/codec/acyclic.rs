//! The codec's modules import one another without cycles, so that each can
//! be read, tested and replaced (a GPU stage for a CPU one) knowing only
//! the modules below it.
//!
//! The check reads every `.rs` file under `src/codec/`, collects the edges
//! `use super::x`, `super::x::...` and `crate::codec::x` (resolved to the
//! deepest module that is a file; a name that is not a module points at the
//! module that declares it, so importing from `mod.rs` counts as an edge to
//! it), and fails on a cycle. Comments and `#[cfg(test)]` modules at the
//! end of a file are left out: unit tests may reach back to what they test.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (`""` for `codec` itself, `"stages::dwt"`) to the modules it
/// imports from.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The source of a module without comments and its inline test module
/// (`#[cfg(test)] mod tests { ... }`, last in a file by convention).
fn code_of(source: &str) -> String {
    let mut cut = source.len();
    let mut from = 0;
    while let Some(at) = source[from..].find("#[cfg(test)]") {
        let at = from + at;
        let next = source[at + "#[cfg(test)]".len()..].trim_start();
        let line = next.lines().next().unwrap_or("");
        if line.starts_with("mod ") && line.contains('{') {
            cut = at;
            break;
        }
        from = at + 1;
    }
    source[..cut]
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths after each `prefix` in `code`, use-trees expanded:
/// `prefix a::{b, c::{d, E}}` gives `a::b`, `a::c::d` and `a::c::E`.
fn paths_after(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue; // part of a longer path, such as `super::super::`
        }
        tree(rest, &mut Vec::new(), &mut out);
    }
    out
}

/// Expands the use-tree at the start of `text` below `stem` into `out`.
fn tree(text: &str, stem: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut text = text.trim_start();
    let depth = stem.len();
    loop {
        if let Some(group) = text.strip_prefix('{') {
            // Items at the top level of the group.
            let (mut level, mut start) = (0, 0);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => level += 1,
                    '}' if level == 0 => {
                        tree(&group[start..i], stem, out);
                        break;
                    }
                    '}' => level -= 1,
                    ',' if level == 0 => {
                        tree(&group[start..i], stem, out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            stem.truncate(depth);
            return;
        }
        let end = text
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(text.len());
        if end > 0 {
            stem.push(text[..end].to_string());
        }
        text = &text[end..];
        match text.strip_prefix("::") {
            Some(after) => text = after,
            None => break,
        }
    }
    // `super::*` and `super::Item` name the module itself.
    out.push(stem.clone());
    stem.truncate(depth);
}

/// The deepest module of `modules` that `base` + `path` names (a name past
/// the last module is an item of it).
fn resolve(modules: &BTreeSet<String>, base: &[String], path: &[String]) -> String {
    let mut at = base.to_vec();
    for s in path {
        let mut next = at.clone();
        next.push(s.clone());
        if !modules.contains(&next.join("::")) {
            break;
        }
        at = next;
    }
    at.join("::")
}

/// The import graph of the modules `files` (module path, source) form.
fn graph(files: &[(String, String)]) -> Graph {
    let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut g = Graph::new();
    for (module, source) in files {
        let code = code_of(source);
        let here: Vec<String> = match module.as_str() {
            "" => Vec::new(),
            m => m.split("::").map(str::to_string).collect(),
        };
        let edges = g.entry(module.clone()).or_default();
        let mut add = |base: &[String], path: &[String]| {
            let to = resolve(&modules, base, path);
            if to != *module {
                edges.insert(to);
            }
        };
        // `super::` from `a::b` is `a`; `super::super::` its parent.
        for (prefix, up) in [("super::super::", 2), ("super::", 1)] {
            if here.len() >= up {
                let base = &here[..here.len() - up];
                for p in paths_after(&code, prefix) {
                    add(base, &p);
                }
            }
        }
        for p in paths_after(&code, "crate::codec::") {
            add(&[], &p);
        }
        // Paths from a module to its own children (`pub use decode::...`
        // in mod.rs): `use x::` where `x` is a child module.
        for p in paths_after(&code, "use ") {
            let mut child = here.clone();
            child.extend(p.first().cloned());
            if p.len() > 1 && modules.contains(&child.join("::")) {
                add(&here, &p);
            }
        }
    }
    g
}

/// A cycle of `g` (its modules in order, the first repeated at the end),
/// if there is one.
fn find_cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(
        g: &Graph,
        m: &str,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(m.to_string(), 1);
        stack.push(m.to_string());
        for to in g.get(m).into_iter().flatten() {
            match state.get(to).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|s| s == to).unwrap_or(0);
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(to.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(g, to, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in g.keys() {
        if !state.contains_key(m) {
            if let Some(c) = visit(g, m, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// Every `.rs` file under `dir` as (module path, source).
fn read_modules(dir: &Path, prefix: &[String], out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("the codec's sources are readable")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            let mut sub = prefix.to_vec();
            sub.push(name);
            read_modules(&path, &sub, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let mut module = prefix.to_vec();
            if name != "mod" {
                module.push(name);
            }
            let source = std::fs::read_to_string(&path).expect("a readable source file");
            out.push((module.join("::"), source));
        }
    }
}

#[test]
fn the_codec_modules_import_each_other_without_cycles() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/codec");
    let mut files = Vec::new();
    read_modules(&dir, &[], &mut files);
    let g = graph(&files);
    // The pipeline's top and a stage are there with their imports, so the
    // scan sees the tree.
    assert!(g["encode"].contains("stages::entropy"), "{g:?}");
    assert!(g["stages::dwt"].contains("planes"), "{g:?}");
    assert!(g[""].contains("encode"), "{g:?}");
    if let Some(cycle) = find_cycle(&g) {
        panic!("import cycle in host/src/codec: {}", cycle.join(" -> "));
    }
}

#[test]
fn cycles_are_found_through_groups_nested_modules_and_the_root() {
    let file = |m: &str, s: &str| (m.to_string(), s.to_string());
    let acyclic = [
        file(
            "",
            "pub use encode::encode;\nmod encode;\nmod header;\nmod stages;",
        ),
        file("encode", "use super::{header::Header, stages::dwt};"),
        file("header", "use super::presets;"),
        file(
            "presets",
            "// use super::encode; (a comment)\nconst A: u8 = 0;",
        ),
        file("stages", "pub(crate) mod dwt;"),
        file("stages::dwt", "use crate::codec::header::Header;"),
    ];
    let g = graph(&acyclic);
    assert_eq!(find_cycle(&g), None, "{g:?}");
    assert!(g["encode"].contains("stages::dwt") && g["encode"].contains("header"));

    let mut through_root = acyclic.to_vec();
    through_root[3] = file("presets", "use super::Image;");
    through_root[0].1 += "\npub use presets::A;";
    // A child importing from mod.rs, which re-exports a child.
    through_root[2] = file("header", "use super::{presets, CodecError};");
    let c = find_cycle(&graph(&through_root)).expect("a cycle through mod.rs");
    assert!(c.contains(&String::new()), "{c:?}");

    // A stage reaching up two levels to the pipeline that calls it.
    let mut nested = acyclic.to_vec();
    nested[5] = file("stages::dwt", "use super::super::{encode, header};");
    let c = find_cycle(&graph(&nested)).expect("a cycle through a nested module");
    assert!(c.contains(&"stages::dwt".to_string()), "{c:?}");

    // An inline path in code, not in a `use`.
    let mut inline = acyclic.to_vec();
    inline[3] = file("presets", "fn f() { super::encode::encode() }");
    let c = find_cycle(&graph(&inline)).expect("a cycle through an inline path");
    assert!(c.contains(&"presets".to_string()), "{c:?}");
}
