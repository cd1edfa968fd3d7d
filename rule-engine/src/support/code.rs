//! Source code as a content class: which content types and file names are
//! code, sniffing code from its lines, and where its string literals are.
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

/// Line starts that only code has (after indentation).
const CODE_STARTS: &[&str] = &[
    "fn ",
    "pub ",
    "use ",
    "impl ",
    "let ",
    "mod ",
    "struct ",
    "enum ",
    "trait ",
    "match ",
    "def ",
    "class ",
    "import ",
    "from ",
    "return",
    "elif ",
    "else",
    "except",
    "try:",
    "with ",
    "raise ",
    "yield ",
    "async ",
    "await ",
    "self.",
    "this.",
    "const ",
    "var ",
    "function",
    "export ",
    "module.",
    "require(",
    "package ",
    "func ",
    "type ",
    "interface ",
    "public ",
    "private ",
    "protected ",
    "static ",
    "#include",
    "#define",
    "#[",
    "//",
    "/*",
    "* ",
    "*/",
    "}",
    "{",
    "if (",
    "if let ",
    "for (",
    "while (",
    "switch ",
    "case ",
    "@",
    // Ruby, whose lines end in neither `;` nor braces.
    "require ",
    "require_relative ",
    "module ",
    "attr_reader ",
    "attr_accessor ",
    "attr_writer ",
    "include ",
    "extend ",
    "unless ",
    "elsif ",
    "alias ",
    "describe ",
    "context ",
    "it \"",
    "it '",
    "test \"",
    "test '",
    "assert",
    // Python's and JavaScript's other statements.
    "del ",
    "throw ",
    "new ",
    "print(",
];

/// Statements of one word (`end`, `end)`, `pass`), a start only where the
/// word ends: `endpoint` and `passwords` are not code.
const CODE_WORDS: &[&str] = &["end", "begin", "rescue", "ensure", "pass", "break", "continue", "catch", "private"];

/// Statements that prose starts too (`if the build fails,`): a start only
/// where the line opens a block (`if x:`, `for (...) {`, `while x do`,
/// `when 1 then`).
const BLOCK_STARTS: &[&str] = &["if ", "for ", "while ", "when "];

/// A call first on its line: a chained one (`.then(handle)`), or on a
/// dotted name (`console.log(x)`, `axios.get(url)`), which prose does not
/// start with.
fn call_start(t: &[u8]) -> bool {
    let name = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$');
    let (dotted, rest) = match t.strip_prefix(b".") {
        Some(r) => (true, r),
        None => (false, t),
    };
    let mut dots = usize::from(dotted);
    let mut i = 0;
    while i < rest.len() {
        let n = rest[i..].iter().take_while(|b| name(b)).count();
        if n == 0 || rest[i].is_ascii_digit() {
            return false;
        }
        i += n;
        match rest.get(i) {
            Some(b'.') => {
                dots += 1;
                i += 1;
            }
            Some(b'(') => return dots > 0,
            _ => return false,
        }
    }
    false
}

fn code_start(t: &[u8]) -> bool {
    call_start(t)
        || CODE_STARTS.iter().any(|s| t.starts_with(s.as_bytes()))
        || CODE_WORDS.iter().any(|w| {
            t.starts_with(w.as_bytes()) && t.get(w.len()).is_none_or(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))
        })
        || (BLOCK_STARTS.iter().any(|s| t.starts_with(s.as_bytes()))
            && (matches!(t.last(), Some(b':' | b'{')) || t.ends_with(b" do") || t.ends_with(b" then")))
}

/// A line ending as code's do: a statement (`;`), a block (`{`, `}`, Ruby's
/// `do` and `do |x|`), an open or closed call, list or argument list
/// (`(`, `[`, `)`, `]`, `,`).
fn code_end(t: &[u8]) -> bool {
    if matches!(t.last(), Some(b'{' | b'}' | b';' | b'(' | b'[' | b')' | b']' | b',')) {
        return true;
    }
    if t.ends_with(b" do") {
        return true;
    }
    // ` do |a, b|`
    t.last() == Some(&b'|')
        && t[..t.len() - 1].iter().rposition(|&c| c == b'|').is_some_and(|o| t[..o].ends_with(b" do "))
}

/// A Python docstring's opening quotes (`"""`, `r"""`, `'''`), if the line
/// starts one.
fn docstring_quote(t: &[u8]) -> Option<&'static [u8]> {
    let t = t.strip_prefix(b"r").unwrap_or(t);
    if t.starts_with(b"\"\"\"") {
        Some(b"\"\"\"")
    } else if t.starts_with(b"'''") {
        Some(b"'''")
    } else {
        None
    }
}

/// Whether the first lines of `head` read as source code rather than a
/// log, a listing or prose: at least five non-blank lines; at least 20 %
/// of them starting with a code keyword and 40 % shaped like code (a code
/// keyword first, or ending as a statement, block, call or list does); at
/// most 20 % shaped like log lines (a timestamp, a level, a `[tag]`, a
/// shell prompt, a stack-trace frame first: a traceback quotes code but is
/// not code, and a build log's `Compiling x (path)` lines are not calls).
/// `#` comments and Python docstrings count for neither side (a Ruby or
/// Python file opens with many); a Markdown fence or a reStructuredText
/// directive or literal block (`::`) says documentation that quotes code.
/// Erring toward text is the safe side: there generic rules see
/// everything. A wrong guess only moves generic rules into or out of
/// string literals; provider formats apply either way.
///
/// Measured on files nobody here wrote (docs/benchmarks.md, "Code
/// sniffing").
pub fn looks_like_code(head: &[u8]) -> bool {
    let (mut lines, mut starts, mut code, mut log) = (0u32, 0u32, 0u32, 0u32);
    let mut docstring: Option<&[u8]> = None;
    let end = memchr::memrchr(b'\n', head).unwrap_or(0);
    for line in head[..end].split(|&b| b == b'\n').take(200) {
        let t = trim(line);
        if t.is_empty() {
            continue;
        }
        if let Some(q) = docstring {
            if memchr::memmem::find(t, q).is_some() {
                docstring = None;
            }
            continue;
        }
        if let Some(q) = docstring_quote(t) {
            let open = t.len() - t.strip_prefix(b"r").unwrap_or(t).len() + q.len();
            if memchr::memmem::find(&t[open..], q).is_none() {
                docstring = Some(q);
            }
            continue;
        }
        if t.starts_with(b"```") || t.starts_with(b"~~~") || t.starts_with(b".. ") || t.ends_with(b"::") {
            return false;
        }
        if t[0] == b'#' && !(t.starts_with(b"#include") || t.starts_with(b"#define") || t.starts_with(b"#[")) {
            continue;
        }
        lines += 1;
        if t[0].is_ascii_digit() || t[0] == b'[' || t.starts_with(b"$ ") || t.starts_with(b"> ") || starts_with_level(t)
        {
            log += 1;
            continue;
        }
        let start = code_start(t);
        starts += u32::from(start);
        if start || code_end(t) {
            code += 1;
        }
    }
    lines >= 5 && starts * 10 >= lines * 2 && code * 10 >= lines * 4 && log * 10 <= lines * 2
}

/// Line starts (after indentation) that only tests have, in the common
/// test frameworks: Go's `testing`, pytest and unittest, Minitest and
/// RSpec, Jest / Mocha / Vitest, JUnit, xUnit and NUnit, Rust's test
/// attributes.
const TEST_STARTS: &[&str] = &[
    "import \"testing\"",
    "\"testing\"",
    "func Test",
    "func Benchmark",
    "func Fuzz",
    "import pytest",
    "import unittest",
    "from unittest",
    "def test_",
    "async def test_",
    "@pytest.",
    "require \"test_helper\"",
    "require 'test_helper'",
    "require \"spec_helper\"",
    "require 'spec_helper'",
    "require \"rails_helper\"",
    "require 'rails_helper'",
    "RSpec.describe",
    "test \"",
    "test '",
    "describe(",
    "describe \"",
    "describe '",
    "it(",
    "it \"",
    "it '",
    "test(",
    "expect(",
    "beforeEach(",
    "import org.junit",
    "import static org.junit",
    "import org.testng",
    "@Test",
    "using Xunit;",
    "using NUnit",
    "[Fact]",
    "[TestMethod]",
    "#[test]",
    "#[tokio::test",
];

/// Whether the first lines of `head` (already judged to be code) are a
/// test's: two or more lines that only tests have ([`TEST_STARTS`], or a
/// Minitest / PHPUnit class). Fixtures are written in tests on purpose,
/// so generic rules are off there, as in lenient mode; a provider's
/// format is still found. One stray match (an `expect(` in a library)
/// is not enough.
pub fn looks_like_test(head: &[u8]) -> bool {
    let end = memchr::memrchr(b'\n', head).map_or(head.len(), |e| e);
    let mut hits = 0;
    for line in head[..end].split(|&b| b == b'\n').take(200) {
        let t = trim(line);
        let test_class = t.starts_with(b"class ")
            && [&b"< ActiveSupport::TestCase"[..], b"< Minitest::Test", b"extends TestCase", b"(unittest.TestCase)"]
                .iter()
                .any(|m| memchr::memmem::find(t, m).is_some());
        if test_class || TEST_STARTS.iter().any(|s| t.starts_with(s.as_bytes())) {
            hits += 1;
            if hits >= 2 {
                return true;
            }
        }
    }
    false
}

fn trim(line: &[u8]) -> &[u8] {
    let s = line.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(line.len());
    let e = line.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(s, |p| p + 1);
    &line[s..e.max(s)]
}

fn starts_with_level(t: &[u8]) -> bool {
    // Log levels, compiler diagnostics, stack-trace frames.
    [
        "INFO",
        "WARN",
        "ERROR",
        "DEBUG",
        "TRACE",
        "FATAL",
        "error:",
        "warning:",
        "note:",
        "Traceback",
        "File \"",
        "at ",
        "--> ",
        "= note",
    ]
    .iter()
    .any(|l| t.starts_with(l.as_bytes()))
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
    fn sniffing() {
        let rust = b"use std::io;\n\npub fn main() {\n    let token = t.next();\n    println!(\"{}\", token);\n}\nimpl X {\n}\n";
        assert!(looks_like_code(rust));
        let python = b"import os\n\ndef f(x):\n    token = os.environ[\"T\"]\n    return token\n\nclass A:\n    pass\n";
        assert!(looks_like_code(python));
        let log = b"2026-01-01T00:00:00Z INFO start\n2026-01-01T00:00:01Z INFO token=abc\n[db] connected\nERROR failed\nWARN x\nINFO done\n";
        assert!(!looks_like_code(log));
        let build = b"$ export DB_PASSWORD=Xk9mQ2vLp7\n   Compiling serde v1.0.0\n   Compiling libc v0.2.1 (registry)\n   Compiling app v0.1.0 (/src/app)\n    Finished dev [unoptimized] target(s) in 3.2s\n     Running `target/debug/app`\n";
        assert!(!looks_like_code(build));
        let env = b"DB_HOST=localhost\nDB_PASSWORD=Xk9mQ2vLp7\nAPI_KEY=abc\nDEBUG=1\nPORT=8080\n";
        assert!(!looks_like_code(env));
        let traceback = b"Traceback (most recent call last):\n  File \"bot.py\", line 9, in <module>\n    bot.run(x)\n  File \"client.py\", line 3, in run\n    self.start()\nRuntimeError: boom\n";
        assert!(!looks_like_code(traceback));
    }

    /// Languages whose lines end in neither `;` nor braces, and files that
    /// open with comments: before session 33 the sniff took 3 % of Ruby
    /// files and 20–50 % of Python files for text (docs/benchmarks.md).
    #[test]
    fn ruby_python_and_commented_code_are_code() {
        let ruby = b"# frozen_string_literal: true\n\nrequire \"test_helper\"\n\nclass LoginTest < ActiveSupport::TestCase\n  \
                     PROFILE = {\n    \"name\" => 'Ana',\n    \"token\" => 'wordlikevalue'\n  }\n\n  setup do\n    \
                     @user = create_user\n  end\n\n  test \"signs in\" do\n    post \"/login\", params: PROFILE\n    \
                     assert_response :success\n  end\nend\n";
        assert!(looks_like_code(ruby));
        let ruby_block = b"module Auth\n  class Store\n    attr_reader :users\n\n    def initialize\n      @users = []\n    \
                           end\n\n    def each_user\n      users.each do |u|\n        yield u\n      end\n    end\n  end\nend\n";
        assert!(looks_like_code(ruby_block));
        let python = b"#!/usr/bin/env python3\n# Copyright notice\n# spanning lines\n\"\"\"A module docstring.\n\nIt \
                       explains, in prose, what the module is for,\nover several lines of words.\n\"\"\"\n\nimport os\n\n\
                       def load(path):\n    \"\"\"Reads the file.\"\"\"\n    if not path:\n        raise ValueError(path)\n    \
                       for line in open(path):\n        yield line\n\n\nclass Loader:\n    pass\n";
        assert!(looks_like_code(python));
        let typescript = b"import {\n  Client,\n  Options,\n  Headers,\n} from 'lib';\n\nconst config: Options = {\n  \
                           url: '/user',\n  auth: {\n    username: 'someone',\n    password: 'wordlike1'\n  },\n  \
                           timeout: 1000,\n};\n";
        assert!(looks_like_code(typescript));
        // `end` and `pass` as words only.
        assert!(code_start(b"end") && code_start(b"end)") && code_start(b"pass") && !code_start(b"endpoint: x"));
        assert!(!code_start(b"passwords: 3") && code_end(b"items.each do |a, b|") && !code_end(b"a todo"));
        assert!(code_start(b".then(handle)") && code_start(b"console.log(x);") && code_start(b"a.b.c(1)"));
        assert!(!code_start(b"e.g. (see above)") && !code_start(b"log(x)") && !code_start(b"v1.2(beta)"));
    }

    /// Documentation that quotes code, configuration and shell scripts stay
    /// text: there generic rules see every line.
    #[test]
    fn documents_configuration_and_scripts_are_not_code() {
        let markdown = b"# Client\n\nInstall it and call it:\n\n```js\nconst c = require('lib');\nc.get('/x', {\n  \
                         timeout: 10,\n});\n```\n\nThen read the result.\n";
        assert!(!looks_like_code(markdown));
        let rst = b"Views\n=====\n\nA view is a function.\n\n.. code-block:: python\n\n    def index():\n        \
                    return render()\n\n    class Page(View):\n        pass\n";
        assert!(!looks_like_code(rst));
        let yaml =
            b"# settings\n# for the service\nserver:\n  port: 8080\n  host: example.org\ndatabase:\n  user: app\n  \
                     password: hunter2hunter\n  pool: 5\n";
        assert!(!looks_like_code(yaml));
        let shell =
            b"#!/bin/sh\n# deploy\nset -e\nexport API_TOKEN=abc123def456\ncd /srv/app\ngit pull\nmake install\n\
                      systemctl restart app\n";
        assert!(!looks_like_code(shell));
        let prose =
            b"# Notes\n\nThe release went out on Monday, after the review.\nIf the build fails, run it again,\n\
                      for the cache may be cold.\nWhile it runs, read the log.\nThat is all.\n";
        assert!(!looks_like_code(prose));
    }

    #[test]
    fn tests_are_told_from_code() {
        let go = b"package oauth2\n\nimport (\n\t\"net/http\"\n\t\"testing\"\n)\n\nfunc TestToken(t *testing.T) {\n}\n";
        assert!(looks_like_test(go));
        let py = b"import pytest\n\nfrom app import login\n\n\ndef test_login(client):\n    assert login(client)\n";
        assert!(looks_like_test(py));
        let rb = b"require \"test_helper\"\n\nclass LoginTest < ActiveSupport::TestCase\n  test \"x\" do\n  end\nend\n";
        assert!(looks_like_test(rb));
        let js = b"const axios = require('axios');\ndescribe('auth', () => {\n  it('sends', () => {\n    expect(x).toBe(1);\n  });\n});\n";
        assert!(looks_like_test(js));
        // A library with one `expect(`, and code that merely names tests.
        let lib = b"package oauth2\n\nimport \"net/http\"\n\nfunc Token() {\n\texpect(x)\n}\n// see TestToken\n";
        assert!(!looks_like_test(lib));
        let rust = b"use std::io;\n\npub fn main() {\n    let token = t.next();\n}\n";
        assert!(!looks_like_test(rust));
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
