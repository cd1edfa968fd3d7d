//! Sniffing: whether a text sent without a name or a content type reads
//! as source code, and whether that code is a test's.
//!
//! Why: agents read code through `cat -n`, `sed -n` and `grep`, and the
//! sanitizer then sees no file name. Code decides whether generic rules see
//! every line or only string literals (`support::code`), and a test's code
//! whether its fixtures are left alone. Each judgment reads the first 200
//! lines once, line by line, with a handful of prefix tests per line: O(n)
//! in the head only. Measured on files nobody here wrote:
//! `tools/sniff-check.py`, docs/benchmarks.md ("Session 33").

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
    "describe ",
    "Ok(",
    "Err(",
    "Some(",
    "describe(",
    "it(",
    "test(",
    "beforeEach(",
    "afterEach(",
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

/// A call first on its line: a chained one (`.then(handle)`), on a
/// dotted name (`console.log(x)`, `axios.get(url)`) or a macro's
/// (`println!(x)`), which prose does not start with.
fn call_start(t: &[u8]) -> bool {
    let name = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$');
    let rest = t.strip_prefix(b".").unwrap_or(t);
    let mut dots = usize::from(rest.len() < t.len());
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
            // Not an undotted call: `define('DB_PASSWORD', ...);`,
            // PowerShell's `param(`, CMake's `set(` would make
            // configuration code.
            Some(b'(') => return dots > 0,
            // A macro's call (`println!(`, `vec![`, `assert_eq!(`).
            Some(b'!') => return matches!(rest.get(i + 1), Some(b'(' | b'[' | b'{')),
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
            && (matches!(t.last(), Some(b':' | b'{'))
                || ruby_block_end(t)
                || (t.ends_with(b" then") && !t.ends_with(b"; then"))))
}

/// Ruby's `do` and `do |x|` at a line's end; not the shell's `; do`.
fn ruby_block_end(t: &[u8]) -> bool {
    let before_do = if t.ends_with(b" do") {
        &t[..t.len() - 3]
    } else if t.last() == Some(&b'|') {
        match t[..t.len() - 1].iter().rposition(|&c| c == b'|') {
            Some(o) if t[..o].ends_with(b" do ") => &t[..o - 4],
            _ => return false,
        }
    } else {
        return false;
    };
    !before_do.ends_with(b";")
}

/// Lines only a shell script has: its shebang, the words that close its
/// blocks, `export NAME=` and `alias`; PowerShell's cmdlets, `$env:` and
/// `param(`. A shell script is not code here
/// (`support::code`'s languages): there a secret is written unquoted.
fn shell_line(t: &[u8]) -> bool {
    // A shell's shebang: its last word after `/` or a space
    // (`#!/bin/sh`, `#!/usr/bin/env bash`).
    let shebang = t.starts_with(b"#!")
        && matches!(t.rsplit(|c| matches!(c, b'/' | b' ')).next(), Some(b"sh" | b"bash" | b"zsh" | b"ksh" | b"dash"));
    let exported = t.strip_prefix(b"export ").is_some_and(|r| {
        let n = r.iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
        n > 0 && r.get(n) == Some(&b'=')
    });
    // PowerShell's: a cmdlet first (`Write-Host`, `Set-Location`), an
    // environment variable or a parameter block.
    let cmdlet = {
        let verb = t.iter().take_while(|c| c.is_ascii_alphabetic()).count();
        let noun = t[verb..].strip_prefix(b"-").map_or(0, |r| r.iter().take_while(|c| c.is_ascii_alphabetic()).count());
        // Not a header (`Content-Type: text/plain`).
        verb >= 3
            && noun >= 2
            && t[0].is_ascii_uppercase()
            && t[verb + 1].is_ascii_uppercase()
            && t.get(verb + 1 + noun) != Some(&b':')
    };
    shebang
        || exported
        || cmdlet
        || t.starts_with(b"$env:")
        || t.starts_with(b"param(")
        || matches!(t, b"fi" | b"done" | b"esac" | b"then" | b"do" | b";;")
        || t.ends_with(b"; then")
        || t.ends_with(b"; do")
        || t.starts_with(b"alias ")
}

/// A line ending as code's do: a statement (`;`), a block (`{`, `}`, Ruby's
/// `do` and `do |x|`), an open or closed call, list or argument list
/// (`(`, `[`, `)`, `]`, `,`).
fn code_end(t: &[u8]) -> bool {
    matches!(t.last(), Some(b'{' | b'}' | b';' | b'(' | b'[' | b')' | b']' | b',')) || ruby_block_end(t)
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
/// log, a listing, a printed object or prose: at least five non-blank
/// lines; at least 20 % of them starting with a code keyword (two or more
/// of them not a brace) and 40 % shaped like code (a code
/// keyword first, or ending as a statement, block, call or list does); at
/// most 20 % shaped like log lines (a timestamp, a level, a `[tag]`, a
/// shell prompt, a stack-trace frame first: a traceback quotes code but is
/// not code, and a build log's `Compiling x (path)` lines are not calls).
/// `#` comments and Python docstrings count for neither side (a Ruby or
/// Python file opens with many); a Markdown fence or a reStructuredText
/// directive or literal block (`::`) says documentation that quotes code.
/// Erring toward text is the safe side: there generic rules see
/// everything. A wrong guess only moves generic rules into or out of
/// string literals; provider formats apply either way. Two lines only a
/// shell script has ([`shell_line`]) make the text a shell script's: not
/// code.
pub fn looks_like_code(head: &[u8]) -> bool {
    let (mut lines, mut starts, mut code, mut log, mut shell) = (0u32, 0u32, 0u32, 0u32, 0u32);
    // Starts other than a brace: a printed object (`console.log(config)`,
    // a Ruby hash) is braces and `key: value,` lines, with no statement.
    let mut statements = 0u32;
    let mut docstring: Option<&[u8]> = None;
    let end = memchr::memrchr(b'\n', head).unwrap_or(0);
    for line in crate::support::text::split_lines(&head[..end]).take(200) {
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
        if shell_line(t) {
            shell += 1;
            if shell >= 2 {
                return false;
            }
            continue;
        }
        if t[0] == b'#' && !(t.starts_with(b"#include") || t.starts_with(b"#define") || t.starts_with(b"#[")) {
            continue;
        }
        lines += 1;
        if t[0].is_ascii_digit() || t[0] == b'[' || t.starts_with(b"$ ") || t.starts_with(b"> ") || starts_with_level(t)
        {
            log += 1;
            // At most 200 lines count: past 40 log lines the share of log
            // lines is over a fifth whatever follows (a log's answer,
            // found from its first lines).
            if log > 40 {
                return false;
            }
            continue;
        }
        let start = code_start(t);
        starts += u32::from(start);
        statements += u32::from(start && !matches!(t[0], b'{' | b'}'));
        if start || code_end(t) {
            code += 1;
        }
    }
    // Two lines only a shell script has (a shebang, `fi`, `done`, `export
    // X=`) make it one, whatever else it holds.
    shell < 2
        && statements >= 2
        && lines >= 5
        && starts * 10 >= lines * 2
        && code * 10 >= lines * 4
        && log * 10 <= lines * 2
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
    let end = memchr::memrchr(b'\n', head).unwrap_or(head.len());
    let mut hits = 0;
    for line in crate::support::text::split_lines(&head[..end]).take(200) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
                           timeout: 1000,\n};\n\nexport function client(): Client {\n  return new Client(config);\n}\n";
        assert!(looks_like_code(typescript));
        // `end` and `pass` as words only.
        assert!(code_start(b"end") && code_start(b"end)") && code_start(b"pass") && !code_start(b"endpoint: x"));
        assert!(!code_start(b"passwords: 3") && code_end(b"items.each do |a, b|") && !code_end(b"a todo"));
        assert!(code_start(b".then(handle)") && code_start(b"console.log(x);") && code_start(b"a.b.c(1)"));
        assert!(!code_start(b"e.g. (see above)") && !code_start(b"log(x) is") && !code_start(b"v1.2(beta)"));
        assert!(code_start(b"describe('auth', () => {") && code_start(b"it('sends', async () => {"));
        // Configuration written as calls is not code (a review's find).
        assert!(!code_start(b"define('DB_PASSWORD', 'P4ssw0rd2023');") && !code_start(b"param("));
        assert!(code_start(b"println!(\"{x}\");") && code_start(b"vec![1, 2]") && !code_start(b"Wow! (really)"));
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
        // `console.log(config)` in Node prints data, not code: braces and
        // `key: value,` lines with no statement.
        let printed = b"{\n  host: 'db.internal',\n  port: 5432,\n  user: 'app',\n  password: 'Tr0ub4dor&3x',\n  \
                        pool: { min: 1, max: 10 },\n  ssl: false\n}\n";
        assert!(!looks_like_code(printed));
        // A shell's rc file: `if ...; then` / `fi`, `alias`, `export X=`.
        let bashrc = b"# ~/.bashrc\n# If not running interactively, don't do anything\ncase $- in\n    *i*) ;;\n      *) return;;\n\
                       esac\n\nHISTCONTROL=ignoreboth\nif [ -f ~/.bash_aliases ]; then\n    . ~/.bash_aliases\nfi\n\
                       alias ll='ls -alF'\nexport PATH=\"$HOME/bin:$PATH\"\nexport DB_PASSWORD=Tr0ub4dor&3x\n";
        assert!(!looks_like_code(bashrc));
        assert!(
            shell_line(b"#!/bin/bash") && shell_line(b"#!/usr/bin/env sh") && !shell_line(b"#!/usr/bin/env python3")
        );
        assert!(
            shell_line(b"for f in *; do") && !ruby_block_end(b"for f in *; do") && ruby_block_end(b"xs.each do |x|")
        );
        assert!(
            shell_line(b"Write-Host \"x\"")
                && shell_line(b"$env:DB_PASSWORD = \"x\"")
                && !shell_line(b"Re-run it")
                && !shell_line(b"Content-Type: text/plain")
        );
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
}
