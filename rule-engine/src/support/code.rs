//! Source code as a content class: which content types and file names are
//! code, and where its string literals are (sniffing code from its lines:
//! `support::sniff`).
//!
//! Why: an agent reads source through the same tools whose output is
//! sanitized, and a generic rule (`token = ...`) fires on code that names a
//! token (`token = t.next()`, `secret_key: &SecretKey`). In code, a secret
//! written by hand sits in a string literal, so generic rules look only
//! there (`stages/redact`); provider formats still apply everywhere.
//!
//! The literal finder is a one-pass lexer over lines, language-agnostic:
//! a `"`, `'` or `` ` `` opens a literal that ends at the same quote on the
//! same line (backslash escapes skipped); a quote with no partner on its
//! line opens nothing (a Rust lifetime, an apostrophe in a comment).
//! Multi-line literals are not followed. Cost: O(n), one allocation per
//! literal found.

use std::ops::Range;

/// Languages whose content types (`text/x-<name>`, `text/<name>`,
/// `application/x-<name>`, `application/<name>`) are source code. Shell,
/// YAML, TOML, INI and `.env` are not here: there an assignment outside
/// quotes is how a secret is written.
const LANGUAGES: &[&str] = &[
    "rust",
    "python",
    "script.python",
    "javascript",
    "ecmascript",
    "typescript",
    "jsx",
    "tsx",
    "go",
    "golang",
    "java",
    "java-source",
    "c",
    "csrc",
    "chdr",
    "c++",
    "c++src",
    "c++hdr",
    "csharp",
    "kotlin",
    "scala",
    "swift",
    "ruby",
    "php",
    "perl",
    "lua",
    "dart",
    "objective-c",
    "haskell",
    "elixir",
    "erlang",
    "clojure",
    "zig",
    // `text/x-source`: code in a language nobody named (a sniffed stream).
    "source",
];

/// File extensions of source code and the content type each stands for.
const EXTENSIONS: &[(&str, &str)] = &[
    ("rs", "text/x-rust"),
    ("py", "text/x-python"),
    ("pyi", "text/x-python"),
    ("js", "text/javascript"),
    ("mjs", "text/javascript"),
    ("cjs", "text/javascript"),
    ("jsx", "text/jsx"),
    ("ts", "text/x-typescript"),
    ("mts", "text/x-typescript"),
    ("cts", "text/x-typescript"),
    ("tsx", "text/tsx"),
    ("go", "text/x-go"),
    ("java", "text/x-java"),
    ("kt", "text/x-kotlin"),
    ("kts", "text/x-kotlin"),
    ("scala", "text/x-scala"),
    ("swift", "text/x-swift"),
    ("rb", "text/x-ruby"),
    ("php", "text/x-php"),
    ("c", "text/x-c"),
    ("h", "text/x-c"),
    ("cc", "text/x-c++"),
    ("cpp", "text/x-c++"),
    ("cxx", "text/x-c++"),
    ("hpp", "text/x-c++"),
    ("hh", "text/x-c++"),
    ("cs", "text/x-csharp"),
    ("pl", "text/x-perl"),
    ("lua", "text/x-lua"),
    ("dart", "text/x-dart"),
    ("hs", "text/x-haskell"),
    ("ex", "text/x-elixir"),
    ("exs", "text/x-elixir"),
    ("erl", "text/x-erlang"),
    ("clj", "text/x-clojure"),
    ("zig", "text/x-zig"),
];

/// Whether `content_type` (parameters and case ignored) names source code.
pub fn is_code_type(content_type: &str) -> bool {
    let ct = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let name = ct
        .strip_prefix("text/x-")
        .or_else(|| ct.strip_prefix("text/"))
        .or_else(|| ct.strip_prefix("application/x-"))
        .or_else(|| ct.strip_prefix("application/"));
    name.is_some_and(|n| LANGUAGES.contains(&n))
}

/// Whether `content_type` says the code is a test's (a `test` parameter:
/// `text/x-go; test`), as a sniffed stream's type does.
pub fn declares_test(content_type: &str) -> bool {
    content_type.split(';').skip(1).any(|p| p.trim().eq_ignore_ascii_case("test"))
}

/// The content type of a source file, from its name's extension; `None`
/// for anything else (a host passes what it knows, the pipeline sniffs the
/// rest).
pub fn content_type_for_path(path: &str) -> Option<&'static str> {
    let name = path.rsplit(['/', '\\']).next()?;
    let (_, ext) = name.rsplit_once('.')?;
    let ext = ext.to_ascii_lowercase();
    EXTENSIONS.iter().find(|(e, _)| *e == ext).map(|(_, t)| *t)
}

/// The inline test modules of Rust code: from a `#[cfg(test)]` line whose
/// next line opens a module (`mod tests {`) to the line that closes it,
/// a `}` at the module line's indentation (as rustfmt writes it; to the
/// end of the text when there is none). A test's fixtures live there, at
/// the foot of the file they test. One pass over the lines: O(n).
pub fn rust_test_modules(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    // (start of the region, indentation of its `mod` line)
    let mut open: Option<(usize, &str)> = None;
    let mut cfg_test: Option<usize> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let l = line.trim_end_matches(['\n', '\r']);
        let t = l.trim_start();
        let indent = &l[..l.len() - t.len()];
        if let Some((from, mod_indent)) = open {
            // `}`, `}  // mod tests`: the line that closes the module.
            let close = t.strip_prefix('}').is_some_and(|r| {
                let r = r.trim_start();
                r.is_empty() || r.starts_with("//")
            });
            if close && indent == mod_indent {
                out.push(from..at);
                open = None;
            }
            continue;
        }
        if t == "#[cfg(test)]" {
            cfg_test = Some(start);
            continue;
        }
        if let Some(from) = cfg_test.take() {
            let m = t.strip_prefix("pub ").unwrap_or(t);
            if m.starts_with("mod ") && m.ends_with('{') {
                open = Some((from, indent));
            }
        }
    }
    if let Some((from, _)) = open {
        out.push(from..text.len());
    }
    out
}

/// Whether a line that encloses others (a diff hunk header's tail: `@@
/// -912,7 +915,7 @@ mod tests {`) opens a test: a Rust test module, a
/// test function or class, a test suite's block.
pub fn opens_test(line: &str) -> bool {
    let t = line.trim_start();
    let t = t.strip_prefix("pub ").unwrap_or(t);
    // A Rust test module by its conventional names, whole.
    let module = ["mod tests", "mod test"]
        .iter()
        .any(|m| t.strip_prefix(m).is_some_and(|r| r.trim_start().starts_with('{') || r.trim().is_empty()));
    // `class TestLogin`, `class Test(`: not `class Testimonial`.
    let class = t.strip_prefix("class Test").is_some_and(|r| {
        r.chars().next().is_none_or(|c| c.is_ascii_uppercase() || matches!(c, '(' | ':' | '_' | ' ' | '<'))
    });
    module
        || class
        || [
            "fn test_",
            "async fn test_",
            "def test_",
            "async def test_",
            "func Test",
            "func Benchmark",
            "func Fuzz",
            "describe(",
            "describe \"",
            "describe '",
            "it(",
            "test(",
        ]
        .iter()
        .any(|s| t.starts_with(s))
}

/// The insides of the one-line string literals of `text`, in order (see
/// the module docs).
pub fn string_literals(text: &str) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let q = b[i];
        if !matches!(q, b'"' | b'\'' | b'`') {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        let mut closed = None;
        while j < b.len() && b[j] != b'\n' {
            match b[j] {
                b'\\' => j += 2,
                c if c == q => {
                    closed = Some(j);
                    break;
                }
                _ => j += 1,
            }
        }
        match closed {
            Some(j) => {
                out.push(i + 1..j);
                i = j + 1;
            }
            None => i += 1,
        }
    }
    out
}

/// Whether `start..end` lies inside one of `literals` (sorted, disjoint).
pub fn inside(literals: &[Range<usize>], start: usize, end: usize) -> bool {
    let i = literals.partition_point(|r| r.end < end);
    literals.get(i).is_some_and(|r| r.start <= start && end <= r.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_and_names() {
        for t in ["text/x-python", "text/x-rust; charset=utf-8", "application/javascript", "TEXT/X-GO"] {
            assert!(is_code_type(t), "{t}");
        }
        for t in ["text/plain", "application/json", "text/x-sh", "application/x-yaml", "text/x-log"] {
            assert!(!is_code_type(t), "{t}");
        }
        assert_eq!(content_type_for_path("src/lib.rs"), Some("text/x-rust"));
        assert_eq!(content_type_for_path("a/b/App.TSX"), Some("text/tsx"));
        assert_eq!(content_type_for_path(".env"), None);
        assert_eq!(content_type_for_path("config.yaml"), None);
        assert_eq!(content_type_for_path("Makefile"), None);
        // Every mapped type is a code type.
        assert!(EXTENSIONS.iter().all(|(_, t)| is_code_type(t)));
    }

    #[test]
    fn literals_on_one_line() {
        let text = "let a = \"x\\\"y\"; // it's\nfn f<'a>(s: &'a str) { `t` }\npassword = 'Xk9#mQ2'\n";
        let found: Vec<&str> = string_literals(text).into_iter().map(|r| &text[r]).collect();
        // A pair of lifetimes reads as a literal: harmless, as nothing
        // secret-shaped sits between them.
        assert_eq!(found, ["x\\\"y", "a>(s: &", "t", "Xk9#mQ2"]);
        let lits = string_literals("k = \"abcdef\" + x");
        assert!(inside(&lits, 5, 11));
        assert!(!inside(&lits, 5, 13));
        assert!(!inside(&lits, 0, 1));
    }

    #[test]
    fn rust_test_modules_run_to_their_closing_brace() {
        let src = "pub fn f() {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() {\n        let u = \"http://a:b@c\";\n    }\n}\n\nfn after() {}\n";
        let m = rust_test_modules(src);
        assert_eq!(m.len(), 1);
        assert!(src[m[0].clone()].starts_with("#[cfg(test)]") && src[m[0].clone()].ends_with("}\n"));
        assert!(!src[m[0].clone()].contains("after"));
        // Unclosed (a listing cut short): to the end. Not a module: nothing.
        // A closing brace with a comment after it closes the module.
        let commented = "#[cfg(test)]\nmod tests {\n    fn t() {}\n}  // mod tests\nfn after() {}\n";
        assert!(!commented[rust_test_modules(commented)[0].clone()].contains("after"));
        let cut = "#[cfg(test)]\npub mod tests {\n    fn t() {}\n";
        assert_eq!(rust_test_modules(cut), vec![0..cut.len()]);
        assert!(rust_test_modules("#[cfg(test)]\nuse x::y;\nmod a {\n}\n").is_empty());
    }

    #[test]
    fn test_scopes_and_declared_tests() {
        for l in [
            "mod tests {",
            "  fn test_parse() {",
            "def test_login(client):",
            "func TestToken(t *testing.T) {",
            "describe('x', () => {",
            "class TestLogin(unittest.TestCase):",
        ] {
            assert!(opens_test(l), "{l}");
        }
        for l in [
            "impl Proxy {",
            "fn parse() {",
            "def login(client):",
            "func Token() {",
            "class Token:",
            "class Testimonial(models.Model):",
            "mod tests_util {",
        ] {
            assert!(!opens_test(l), "{l}");
        }
        assert!(declares_test("text/x-go; test") && declares_test("text/x-source;charset=utf-8; TEST"));
        assert!(!declares_test("text/x-go") && !declares_test("text/x-test"));
        assert!(is_code_type("text/x-source; test"));
    }
}
