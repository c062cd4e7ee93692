//! The crate's file-level structure, checked: no import cycle between two files, and no
//! layer reaching up (ARCHITECTURE.md, "Layers"). A cycle between files means neither can
//! be read, tested or changed without the other; a layer that reaches up (a provider
//! that knows the agent's protocol, a method that imports the evaluation) is how a rule
//! ends up in two places.
//!
//! The check reads the sources as text, the way a reader does: it follows `mod`
//! declarations from `lib.rs` (test modules left out), and every `use` declaration and
//! every `crate::` / `super::` / `self::` path in code is an arrow from its file to the
//! file that defines the item, found through re-exports (`pub use`). Re-exports
//! themselves draw no arrow: a folder's `mod.rs` naming its parts is structure, not use.
//! Inherent `impl` blocks split over files (the BM25 index's `check.rs`, `search.rs`)
//! are not imports and draw nothing.

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A folder (or top-level file) and the folders it must never import (ARCHITECTURE.md,
/// "Layers").
///
/// The lowest layers (the shared utilities, `data`, `retrieval`, `llm`) are crates of
/// their own that depend on nothing of this one, so the compiler keeps them from
/// reaching up; they appear here only as targets.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "protocol",
        &["env", "memory", "methods", "llm", "eval", "report", "study"],
    ),
    (
        "env",
        &["memory", "methods", "llm", "eval", "report", "study"],
    ),
    (
        "memory",
        &["env", "methods", "llm", "eval", "report", "study"],
    ),
    ("methods", &["eval", "report", "study"]),
    ("eval", &["report", "study"]),
    // The application layer is the top: nothing below may build a run.
    ("report", &["study"]),
];

/// The patterns the reader uses, compiled once.
struct Patterns {
    /// `mod name;` or `mod name {`.
    module: Regex,
    /// `#[path = "file.rs"] mod name`.
    path_attr: Regex,
    /// An item definition: group 1 (or 2, for a macro) is its name.
    item: Regex,
    /// A `use` declaration: group 1 is the visibility, group 2 the tree.
    use_decl: Regex,
    /// A path into this crate written in code.
    inline: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        module: Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*([;{])").unwrap(),
        path_attr: Regex::new(
            r#"#\[path\s*=\s*"([^"]+)"\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)"#,
        )
        .unwrap(),
        item: Regex::new(
            r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+|unsafe\s+|const\s+)*(?:fn|struct|enum|trait|type|const|static|union|mod)\s+(\w+)|macro_rules!\s*(\w+)",
        )
        .unwrap(),
        use_decl: Regex::new(r"(?s)(?:^|[;{}\n])\s*(pub(?:\([^)]*\))?\s+)?use\s+([^;]*);")
            .unwrap(),
        inline: Regex::new(r"\b(?:crate|super|self)(?:::\w+)+").unwrap(),
    })
}

/// One source file of the module tree.
struct File {
    /// Path below `src/`, with `/` separators.
    path: String,
    /// Comments and literals blanked out, line structure kept.
    code: String,
}

/// Where each module lives and what each file defines or re-exports.
struct Tree {
    files: Vec<File>,
    /// Module path (`methods::eir`) -> index of the file holding it.
    modules: BTreeMap<String, usize>,
    /// Per file: item names defined there.
    defined: Vec<BTreeSet<String>>,
    /// Per file: re-exported name -> the absolute path it names.
    reexports: Vec<BTreeMap<String, String>>,
    /// Per file: its module path.
    module_of: Vec<String>,
}

/// Blanks comments, string and character literals (keeping newlines), so braces and
/// paths inside them are not read as code.
fn blank(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied().unwrap_or('\0');
        if c == '/' && next == '/' {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == '*' {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(keep(b[i]));
                    i += 1;
                }
            }
        } else if c == 'r' && (next == '#' || next == '"') && !ident_before(&b, i) {
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: Vec<char> = std::iter::once('"')
                .chain("#".repeat(hashes).chars())
                .collect();
            out.push('"');
            j += 1;
            while j < b.len() && !b[j..].starts_with(&close) {
                out.push(keep(b[j]));
                j += 1;
            }
            out.push('"');
            i = j + close.len();
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < b.len() {
                    out.push(keep(b[i]));
                    i += 1;
                }
            }
            out.push('"');
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7f}'), or a lifetime ('a).
            let end = if next == '\\' {
                (i + 2..b.len()).find(|&j| b[j] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.push_str(&" ".repeat(end - i + 1));
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident_before(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// `code` without the bodies of `#[cfg(test)]` items (inline test modules).
fn without_tests(code: &str) -> String {
    let mut out = code.to_string();
    let mut from = 0;
    while let Some(at) = out[from..].find("#[cfg(test)]").map(|a| a + from) {
        let rest = &out[at..];
        let Some(semi_or_brace) = rest.find([';', '{']) else {
            break;
        };
        let end = if rest.as_bytes()[semi_or_brace] == b';' {
            at + semi_or_brace + 1
        } else {
            let mut depth = 0;
            let mut end = out.len();
            for (k, ch) in out[at + semi_or_brace..].char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = at + semi_or_brace + k + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            end
        };
        let blanked: String = out[at..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..end, &blanked);
        from = at + blanked.len();
    }
    out
}

fn parent(module: &str) -> String {
    module.rsplit_once("::").map_or("", |(p, _)| p).to_string()
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}::{b}"),
    }
}

/// Every path a `use` tree names, expanded: `a::{b, c::{d, self}}` -> `a::b`, `a::c::d`,
/// `a::c`; the last segment of each is what the name in scope refers to.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree).trim();
        let path: String = path.split_whitespace().collect();
        return vec![path.trim_end_matches("::self").to_string()];
    };
    let prefix: String = tree[..open].split_whitespace().collect();
    let prefix = prefix.trim_end_matches("::");
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
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
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| {
            expand(p).into_iter().map(move |e| match e.as_str() {
                "self" => prefix.to_string(),
                _ => join(prefix, &e),
            })
        })
        .collect()
}

impl Tree {
    fn read(src: &Path) -> Tree {
        let mut tree = Tree {
            files: Vec::new(),
            modules: BTreeMap::new(),
            defined: Vec::new(),
            reexports: Vec::new(),
            module_of: Vec::new(),
        };
        tree.add(src, &src.join("lib.rs"), String::new());
        tree.add_crate_layers();
        for i in 0..tree.files.len() {
            tree.index(i);
        }
        tree
    }

    /// The layers that are crates of their own (`pub use sleuth_llm as llm;` in
    /// `lib.rs`), each as one file without code: an arrow into `crate::llm::...` lands
    /// there, so this crate's layers are still checked against them, while the crates
    /// themselves are kept from reaching up by the compiler (they depend on nothing of
    /// this crate).
    fn add_crate_layers(&mut self) {
        let root = self.files[0].code.clone();
        for (public, tree) in uses(&root) {
            if !public {
                continue;
            }
            for path in expand(&tree) {
                if !path.starts_with("sleuth_") {
                    continue;
                }
                let name = tree_alias(&tree, &path);
                self.modules.insert(name.clone(), self.files.len());
                self.files.push(File {
                    path: name,
                    code: String::new(),
                });
            }
        }
    }

    /// Adds `file` as module `module` and, recursively, the modules it declares.
    fn add(&mut self, src: &Path, file: &Path, module: String) {
        let raw = std::fs::read_to_string(file).expect("a declared module's file");
        let code = without_tests(&blank(&raw));
        let here = self.files.len();
        let rel = file
            .strip_prefix(src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        self.modules.insert(module.clone(), here);
        self.files.push(File {
            path: rel,
            code: code.clone(),
        });
        let dir: PathBuf = match file.file_name().and_then(|n| n.to_str()) {
            Some("lib.rs" | "mod.rs") => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        let paths: BTreeMap<String, String> = patterns()
            .path_attr
            .captures_iter(&raw)
            .map(|c| (c[2].to_string(), c[1].to_string()))
            .collect();
        for c in patterns().module.captures_iter(&code) {
            let name = c[1].to_string();
            let child = join(&module, &name);
            if &c[2] == "{" {
                self.modules.insert(child, here);
                continue;
            }
            let path = match paths.get(&name) {
                Some(p) => file.parent().unwrap().join(p),
                None if dir.join(format!("{name}.rs")).exists() => dir.join(format!("{name}.rs")),
                None => dir.join(&name).join("mod.rs"),
            };
            self.add(src, &path, child);
        }
    }

    /// Records what file `i` defines and re-exports.
    fn index(&mut self, i: usize) {
        let module = self
            .modules
            .iter()
            .find(|(_, &f)| f == i)
            .map(|(m, _)| m.clone())
            .unwrap_or_default();
        let code = &self.files[i].code;
        let defined = patterns()
            .item
            .captures_iter(code)
            .filter_map(|c| c.get(1).or(c.get(2)).map(|m| m.as_str().to_string()))
            .collect();
        let mut reexports = BTreeMap::new();
        for (public, tree) in uses(code) {
            if !public {
                continue;
            }
            for path in expand(&tree) {
                if let Some(abs) = self.absolute(&module, &path) {
                    let name = tree_alias(&tree, &path);
                    reexports.insert(name, abs);
                }
            }
        }
        self.defined.push(defined);
        self.reexports.push(reexports);
        self.module_of.push(module);
    }

    /// `path` as written in `module`, made absolute; `None` for other crates.
    fn absolute(&self, module: &str, path: &str) -> Option<String> {
        let mut segs = path.split("::").filter(|s| !s.is_empty());
        let first = segs.next()?;
        let rest: Vec<&str> = segs.collect();
        let mut base = match first {
            "crate" => String::new(),
            "self" => module.to_string(),
            "super" => parent(module),
            name if self.modules.contains_key(&join(module, name)) => join(module, name),
            _ => return None,
        };
        let mut rest = rest.into_iter().peekable();
        while rest.peek() == Some(&"super") {
            rest.next();
            base = parent(&base);
        }
        Some(rest.fold(base, |acc, s| join(&acc, s)))
    }

    /// The file that defines what absolute path `path` names (following re-exports).
    fn origin(&self, path: &str, depth: usize) -> Option<usize> {
        if let Some(&f) = self.modules.get(path) {
            return Some(f);
        }
        let (module, name) = path.rsplit_once("::").unwrap_or(("", path));
        if path.is_empty() || depth > 16 {
            return None;
        }
        let Some(&file) = self.modules.get(module) else {
            // A path into an item (`Enum::Variant`, `Type::method`): its owner's file.
            return self.origin(module, depth + 1);
        };
        if self.defined[file].contains(name) {
            return Some(file);
        }
        match self.reexports[file].get(name) {
            Some(target) => self.origin(target, depth + 1).or(Some(file)),
            None => Some(file),
        }
    }

    /// Every arrow from file `i`: target file -> the names it takes there.
    fn arrows(&self, i: usize) -> BTreeMap<usize, BTreeSet<String>> {
        let module = &self.module_of[i];
        let code = &self.files[i].code;
        let mut paths: Vec<String> = Vec::new();
        for (public, tree) in uses(code) {
            if !public {
                paths.extend(expand(&tree));
            }
        }
        let outside_uses = patterns().use_decl.replace_all(code, " ");
        paths.extend(
            patterns()
                .inline
                .find_iter(&outside_uses)
                .map(|m| m.as_str().to_string()),
        );
        let mut out: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for p in paths {
            let Some(abs) = self.absolute(module, &p) else {
                continue;
            };
            if let Some(target) = self.origin(&abs, 0) {
                if target != i {
                    let name = abs.rsplit("::").next().unwrap_or(&abs).to_string();
                    out.entry(target).or_default().insert(name);
                }
            }
        }
        out
    }

    fn folder(&self, i: usize) -> &str {
        let p = self.files[i].path.as_str();
        p.split_once('/')
            .map_or(p.trim_end_matches(".rs"), |(f, _)| f)
    }
}

/// The name a re-exported path is known by (its alias, or its last segment).
fn tree_alias(tree: &str, path: &str) -> String {
    let last = path.rsplit("::").next().unwrap_or(path);
    tree.split([',', '{', '}'])
        .filter_map(|piece| piece.split_once(" as "))
        .find(|(p, _)| p.trim().ends_with(last))
        .map_or(last.to_string(), |(_, alias)| alias.trim().to_string())
}

/// The `use` declarations of a file: (whether re-exported, the tree after `use`).
fn uses(code: &str) -> Vec<(bool, String)> {
    patterns()
        .use_decl
        .captures_iter(code)
        .map(|c| (c.get(1).is_some(), c[2].to_string()))
        .collect()
}

/// Strongly connected components of more than one file (Tarjan).
fn cycles(edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct State<'e> {
        edges: &'e [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on[v] = true;
        for &w in s.edges[v].iter() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.out.push(component);
            }
        }
    }
    let n = edges.len();
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

fn tree() -> Tree {
    Tree::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn no_two_files_import_each_other_even_through_others() {
    let tree = tree();
    let arrows: Vec<_> = (0..tree.files.len()).map(|i| tree.arrows(i)).collect();
    let edges: Vec<BTreeSet<usize>> = arrows.iter().map(|a| a.keys().copied().collect()).collect();
    let mut report = String::new();
    for component in cycles(&edges) {
        report.push_str("cycle:\n");
        for &a in &component {
            for (b, names) in &arrows[a] {
                if component.contains(b) {
                    let names: Vec<_> = names.iter().map(String::as_str).collect();
                    report.push_str(&format!(
                        "  {} -> {}: {}\n",
                        tree.files[a].path,
                        tree.files[*b].path,
                        names.join(", ")
                    ));
                }
            }
        }
    }
    assert!(report.is_empty(), "import cycles between files:\n{report}");
}

#[test]
fn no_layer_imports_a_layer_above_it() {
    let tree = tree();
    let mut violations = Vec::new();
    for i in 0..tree.files.len() {
        let from = tree.folder(i);
        let Some((_, forbidden)) = LAYERS.iter().find(|(f, _)| *f == from) else {
            continue;
        };
        for (target, names) in tree.arrows(i) {
            let to = tree.folder(target);
            if !forbidden.contains(&to) {
                continue;
            }
            let path = &tree.files[i].path;
            let names: Vec<_> = names.iter().map(String::as_str).collect();
            violations.push(format!(
                "{path} imports {} ({})",
                tree.files[target].path,
                names.join(", ")
            ));
        }
    }
    assert!(
        violations.is_empty(),
        "layers reaching up:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_reader_sees_uses_reexports_and_test_modules() {
    assert_eq!(
        expand("super::json::{self, Move, lists::{A as B, C}}"),
        [
            "super::json",
            "super::json::Move",
            "super::json::lists::A",
            "super::json::lists::C"
        ]
    );
    let code = blank("let s = \"crate::x::Y {\"; let c = '{'; // crate::z\nuse a::b;");
    assert!(!code.contains("crate::x") && !code.contains("crate::z") && !code.contains('{'));
    let stripped = without_tests("fn a() {}\n#[cfg(test)]\nmod tests {\n use crate::eval::X;\n}\n");
    assert!(!stripped.contains("crate::eval"), "{stripped}");
    let tree = tree();
    let episode = tree.modules["methods::episode"];
    assert!(tree.files[episode].path.ends_with("methods/episode.rs"));
    // `crate::methods::Episode` is re-exported by methods/mod.rs from episode.rs.
    assert_eq!(tree.origin("methods::Episode", 0), Some(episode));
    // A layer that is a crate of its own is a target like any other.
    for layer in [
        "data",
        "retrieval",
        "llm",
        "atomic",
        "file_lock",
        "knob",
        "names",
    ] {
        let file = tree.origin(&format!("{layer}::Anything"), 0).unwrap();
        assert_eq!(tree.folder(file), layer);
    }
}
