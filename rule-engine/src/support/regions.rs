//! Regions of a text that carry their own file name, judged as that file
//! (issue #37).
//!
//! Agents read code through commands that interleave many files: `grep -rn`,
//! `rg` and `git grep -n` lines (`path:12:text`, context lines
//! `path-12-text`, `--` separators, `HEAD:path:12:text`), unified diffs
//! (`git log -p`, `git show`, `git diff`: a section per file from
//! `diff --git` / `+++ b/...`, hunk lines with their `+`/`-`/space prefix,
//! counted from the `@@` header), `cat -n` / `nl` listings (no name: their
//! lines, numbers taken off, are sniffed), compiler diagnostics quoting
//! code (` --> path:12:5` then `12 |` gutter lines) and Python tracebacks
//! (`  File "path", line 12` then the quoted line). Each such line gets the
//! content class its file name gives, and redaction judges it so: in a
//! [`RegionClass::Code`] line generic rules look only inside string
//! literals, as in a source file read by name (`stages/redact`); in a
//! [`RegionClass::Test`] line (a test's code or data) they do not run at
//! all, as in lenient mode: fixtures are written there on purpose, and a
//! provider's token there is still found by its own rule.
//!
//! Cost: [`detect`] first looks at the first lines only ([`GATE_LINES`]);
//! a text none of whose first lines has one of these shapes (a log, a JSON
//! document, prose) costs that and nothing more. A shaped text is parsed
//! once, line by line: O(n), one entry per run of lines of one class.

use std::ops::Range;

use crate::support::text::str_lines;

/// How many non-blank lines [`detect`] reads before it gives up.
const GATE_LINES: usize = 24;
/// A path longer than this is not a file name.
const MAX_PATH: usize = 400;

/// The content class a region's file name gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RegionClass {
    /// Source code (the extensions of [`super::code`]).
    Code,
    /// Configuration: YAML, TOML, INI, properties, XML, `.netrc`, ...
    Config,
    /// A `.env` file.
    Env,
    /// JSON.
    Json,
    /// Anything else with a name (Markdown, text, a lock file, ...): read
    /// as plain text.
    Text,
    /// A test's code or data (`*_test.go`, `test_*.py`, `*.spec.ts`,
    /// anything under `tests/`, `spec/`, `testdata/`, `fixtures/`, ...;
    /// a `.env` file stays [`Self::Env`]): generic rules are off there.
    Test,
}

impl RegionClass {
    /// The name the record and a report give it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::Config => "config",
            Self::Env => "env",
            Self::Json => "json",
            Self::Text => "text",
            Self::Test => "test",
        }
    }

    /// The class of a file, from its name.
    pub fn of_path(path: &str) -> Self {
        let name = path.rsplit(['/', '\\', ':']).next().unwrap_or(path).to_ascii_lowercase();
        let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
        // A template for a `.env` (`.env.example`, `.env.sample`) holds
        // placeholders (`SESSION_SECRET=sessionsecret`): plain text, where a
        // value made of words is not taken for a password.
        if matches!(ext, "example" | "sample" | "template" | "dist" | "tmpl" | "tpl") && name.starts_with(".env") {
            return Self::Text;
        }
        if name == ".env" || name.starts_with(".env.") || ext == "env" {
            return Self::Env;
        }
        if test_path(path, &name) {
            return Self::Test;
        }
        // Templates mix code into markup (`<%= url(token: @token) %>`):
        // judged as code.
        const TEMPLATES: &[&str] =
            &["erb", "markerb", "haml", "slim", "ejs", "hbs", "mustache", "jinja", "j2", "twig", "liquid"];
        if super::code::content_type_for_path(path).is_some() || TEMPLATES.contains(&ext) {
            return Self::Code;
        }
        if matches!(
            name.as_str(),
            ".netrc" | "_netrc" | ".npmrc" | ".pypirc" | ".yarnrc" | ".gitconfig" | "dockerfile" | "credentials"
        ) || matches!(
            ext,
            "yaml" | "yml" | "toml" | "ini" | "cfg" | "conf" | "properties" | "xml" | "tf" | "tfvars" | "hcl" | "plist"
        ) {
            return Self::Config;
        }
        if matches!(ext, "json" | "jsonc" | "json5" | "geojson" | "ipynb") {
            return Self::Json;
        }
        Self::Text
    }
}

/// Directories that hold tests and their data.
const TEST_DIRS: &[&str] =
    &["test", "tests", "spec", "specs", "__tests__", "testdata", "test_data", "fixtures", "__fixtures__", "__mocks__"];

/// Whether `path` (whose lower-case file name is `name`) is a test's code
/// or data, by the naming conventions of the common test runners.
fn test_path(path: &str, name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name);
    stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_spec")
        || stem.ends_with("_tests")
        || name.contains(".test.")
        || name.contains(".spec.")
        || (stem.len() > 4 && stem.ends_with("test") && path.ends_with(".java"))
        || path.split(['/', '\\']).rev().skip(1).any(|d| {
            let d = d.rsplit(':').next().unwrap_or(d);
            TEST_DIRS.iter().any(|t| d.eq_ignore_ascii_case(t))
        })
}

/// The regions of one text: byte ranges (whole lines) in order, disjoint,
/// each with its class. Lines that are in none (a commit message, a
/// separator, a log line) are plain text.
#[derive(Debug, Default, PartialEq)]
pub struct Regions {
    pub ranges: Vec<(Range<usize>, RegionClass)>,
    /// Regions as the record counts them: one per file section (a grep
    /// hit's file, a diff's file, a listing, a quoted frame), by class.
    pub counts: Vec<(RegionClass, u32)>,
}

impl Regions {
    /// The class of the region holding byte `at`, if any.
    pub fn class_at(&self, at: usize) -> Option<RegionClass> {
        let i = self.ranges.partition_point(|(r, _)| r.end <= at);
        self.ranges.get(i).filter(|(r, _)| r.start <= at).map(|(_, c)| *c)
    }

    fn push(&mut self, line: Range<usize>, class: RegionClass) {
        match self.ranges.last_mut() {
            Some((r, c)) if *c == class && r.end == line.start => r.end = line.end,
            _ => self.ranges.push((line, class)),
        }
    }

    fn count(&mut self, class: RegionClass) {
        match self.counts.iter_mut().find(|(c, _)| *c == class) {
            Some((_, n)) => *n += 1,
            None => {
                self.counts.push((class, 1));
                self.counts.sort();
            }
        }
    }
}

/// The regions of `text`, or `None` when its first lines have none of the
/// shapes above (see the module docs).
pub fn detect(text: &str) -> Option<Regions> {
    detect_gated(text, shape(text))
}

/// What the first lines of a text say it is ([`shape`]): read once for
/// the several looks a scan takes ([`detect_gated`], [`listing_view_gated`]).
#[derive(Clone, Copy)]
pub struct Gated(Option<Shape>);

/// The shape of `text`'s first lines, for [`detect_gated`] and
/// [`listing_view_gated`].
pub fn shape(text: &str) -> Gated {
    Gated(gate(text))
}

/// [`detect`] of a text whose shape is `gated`.
pub fn detect_gated(text: &str, gated: Gated) -> Option<Regions> {
    let shape = gated.0?;
    let mut out = Regions::default();
    match shape {
        Shape::Listing => listing(text, &mut out),
        Shape::Lines => lines(text, &mut out),
    }
    (!out.ranges.is_empty()).then_some(out)
}

/// Whether the first lines of `text` name the files they quote (grep
/// hits, a diff, diagnostics, a traceback): such text is not one file's
/// code, however much of it is code (a diff's context lines).
pub fn names_files(text: &str) -> bool {
    matches!(gate(text), Some(Shape::Lines))
}

#[derive(Clone, Copy)]
enum Shape {
    /// `cat -n` / `nl`: every line numbered, no name.
    Listing,
    /// grep hits, diffs, diagnostics, tracebacks: named lines.
    Lines,
}

fn gate(text: &str) -> Option<Shape> {
    let (mut numbered, mut seen) = (0, 0);
    for line in str_lines(text).filter(|l| !l.trim().is_empty()).take(GATE_LINES) {
        seen += 1;
        if numbered_line(line).is_some() {
            numbered += 1;
            continue;
        }
        let named = line.starts_with("diff --git ")
            || line.starts_with("+++ ")
            || line.starts_with("@@ -")
            || commit_line(line)
            || grep_line(line).is_some()
            || line.trim_start().starts_with("--> ")
            || line.starts_with("  File \"");
        if named {
            return Some(Shape::Lines);
        }
    }
    (seen >= 3 && numbered == seen).then_some(Shape::Listing)
}

fn commit_line(line: &str) -> bool {
    line.strip_prefix("commit ").is_some_and(|r| r.len() >= 40 && r.as_bytes()[..40].iter().all(u8::is_ascii_hexdigit))
}

/// `cat -n` (`     12\t...`) or `nl` (`    12\t...`, blank lines bare):
/// the text after the number.
fn numbered_line(line: &str) -> Option<usize> {
    let t = line.trim_start_matches(' ');
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0 && t.as_bytes().get(digits) == Some(&b'\t')).then(|| line.len() - t.len() + digits + 1)
}

/// A `cat -n` listing has no name: its lines, numbers taken off, are
/// sniffed as a whole file is.
fn listing(text: &str, out: &mut Regions) {
    let mut head = String::new();
    for line in text.lines().take(200) {
        if let Some(at) = numbered_line(line) {
            head.push_str(&line[at..]);
        }
        head.push('\n');
    }
    let class = match super::sniff::looks_like_code(head.as_bytes()) {
        true if super::sniff::looks_like_test(head.as_bytes()) => RegionClass::Test,
        true => RegionClass::Code,
        false => RegionClass::Text,
    };
    out.push(0..text.len(), class);
    out.count(class);
}

/// A `cat -n` / `nl` listing (a text whose shape is `gated`) without its
/// line numbers, for each byte of that view (and its end) the offset in
/// `text`, and the class of the listed file as sniffed (code, a test, or
/// text); `None` for any other text.
pub fn listing_view_gated(text: &str, gated: Gated) -> Option<(String, Vec<usize>, RegionClass)> {
    if !matches!(gated.0?, Shape::Listing) {
        return None;
    }
    let mut view = String::with_capacity(text.len());
    let mut back = Vec::with_capacity(text.len() + 1);
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let skip = numbered_line(line.trim_end_matches(['\n', '\r'])).unwrap_or(0);
        view.push_str(&line[skip..]);
        back.extend(start + skip..start + line.len());
        start += line.len();
    }
    back.push(text.len());
    let mut regions = Regions::default();
    listing(text, &mut regions);
    Some((view, back, regions.ranges.first().map_or(RegionClass::Text, |(_, c)| *c)))
}

/// A grep, ripgrep or git grep hit: `path:12:text` (`sep` `:`) or a
/// context line `path-12-text` (`-`), a git grep's `REV:path:12:text`
/// included. Returns the path and the separator.
fn grep_line(line: &str) -> Option<(&str, u8)> {
    // A hit (`:`) first: a context separator can hide in a path (`a-12-b.txt:3:`).
    grep_sep(line, b':').or_else(|| grep_sep(line, b'-'))
}

fn grep_sep(line: &str, sep: u8) -> Option<(&str, u8)> {
    let b = line.as_bytes();
    let end = b.len().min(MAX_PATH);
    let mut i = 1;
    while i < end {
        // To the next space, tab or separator (the gate reads every line
        // of a text's start twice this way: memchr, not a byte loop).
        i += memchr::memchr3(b' ', b'\t', sep, &b[i..end])?;
        if b[i] != sep {
            return None;
        }
        let d = b[i + 1..].iter().take_while(|x| x.is_ascii_digit()).count();
        if d > 0 && b.get(i + 1 + d) == Some(&sep) {
            let path = &line[..i];
            // A file name: a dot or a slash, not a time (`12:30:00`).
            let file = memchr::memchr2(b'.', b'/', path.as_bytes()).is_some()
                && !path.bytes().all(|x| x.is_ascii_digit() || x == b':');
            return file.then_some((path, sep));
        }
        i += 1;
    }
    None
}

/// The part of a grep line `l` (at `range`) after its `path:12:` prefix.
fn content(range: Range<usize>, l: &str, path: &str) -> Range<usize> {
    let digits = l.as_bytes()[path.len() + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
    (range.start + path.len() + digits + 2).min(range.end)..range.end
}

/// The file name part of a grep hit's path (`HEAD:src/a.rs` → `src/a.rs`).
fn grep_path(path: &str) -> &str {
    path.rsplit_once(':').map_or(path, |(_, p)| p)
}

struct Hunk {
    old: u32,
    new: u32,
    /// The class its lines get: the file's, or [`RegionClass::Test`] in a
    /// code file when the enclosing line opens a test (`@@ ... @@ mod tests {`).
    class: Option<RegionClass>,
}

fn hunk_header(line: &str) -> Option<Hunk> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let count = |r: &str| -> Option<u32> {
        match r.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => r.parse::<u32>().ok().map(|_| 1),
        }
    };
    Some(Hunk { old: count(old)?, new: count(new)?, class: None })
}

/// Named lines: grep hits, diff sections, diagnostics, tracebacks.
fn lines(text: &str, out: &mut Regions) {
    // Per line: (range, the path it names or continues, class to give).
    let mut file: Option<RegionClass> = None;
    let mut hunk: Option<Hunk> = None;
    // Whether the current diff section's class was counted.
    let mut counted = false;
    // grep: the last hit's path, and the context lines waiting for the next hit.
    let mut grep_last: Option<&str> = None;
    let mut pending: Vec<(Range<usize>, &str)> = Vec::new();
    // A diagnostic's ` --> path`, then its gutter lines; a traceback's frame.
    let mut gutter: Option<RegionClass> = None;
    let mut frame: Option<RegionClass> = None;
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let range = start..start + line.len();
        start = range.end;
        let l = line.trim_end_matches(['\n', '\r']);
        if let Some(h) = hunk.as_mut() {
            let first = l.as_bytes().first().copied();
            let (o, n) = match first {
                Some(b'+') => (0, 1),
                Some(b'-') => (1, 0),
                Some(b' ') | None => (1, 1),
                Some(b'\\') => (0, 0),
                _ => (u32::MAX, u32::MAX),
            };
            if o != u32::MAX && (h.old >= o && h.new >= n) {
                h.old -= o;
                h.new -= n;
                if let Some(c) = h.class {
                    out.push(range, c);
                }
                if h.old == 0 && h.new == 0 {
                    hunk = None;
                }
                continue;
            }
            hunk = None;
        }
        if let Some(rest) = l.strip_prefix("diff --git ") {
            file = rest.rsplit_once(" b/").map(|(_, p)| RegionClass::of_path(p));
            counted = false;
            continue;
        }
        if let Some(p) = l.strip_prefix("+++ ") {
            let p = p.strip_prefix("b/").unwrap_or(p);
            if p != "/dev/null" {
                file = Some(RegionClass::of_path(p));
            }
            continue;
        }
        if let Some(mut h) = hunk_header(l) {
            let tail = l.split_once(" @@").map_or("", |x| x.1);
            h.class = file.map(|c| match c {
                RegionClass::Code if super::code::opens_test(tail) => RegionClass::Test,
                c => c,
            });
            if let Some(c) = file {
                if !counted {
                    out.count(c);
                    counted = true;
                }
                // Its tail is the enclosing line of the file (`@@ ... @@ fn f(`).
                out.push(range, c);
            }
            hunk = Some(h);
            continue;
        }
        if let Some(c) = frame.take() {
            // The line a traceback frame quotes, indented under it.
            if l.starts_with("    ") {
                out.push(range, c);
                continue;
            }
        }
        if let Some(rest) = l.strip_prefix("  File \"") {
            if let Some((p, _)) = rest.split_once("\", line ") {
                let c = RegionClass::of_path(p);
                out.count(c);
                frame = Some(c);
                continue;
            }
        }
        if let Some(rest) = l.trim_start().strip_prefix("--> ") {
            let p = rest.split(':').next().unwrap_or(rest);
            let c = RegionClass::of_path(p);
            out.count(c);
            gutter = Some(c);
            continue;
        }
        if let Some(c) = gutter {
            // `12 |     code`, `   |`, `   = note: ...`, `...`
            let t = l.trim_start();
            let num = t.bytes().take_while(u8::is_ascii_digit).count();
            if num > 0 && t[num..].trim_start().starts_with('|') {
                out.push(range, c);
                continue;
            }
            if t.starts_with('|') || t.starts_with('=') || t == "..." {
                continue;
            }
            gutter = None;
        }
        if let Some((p, sep)) = grep_line(l) {
            if sep == b':' {
                let class = RegionClass::of_path(grep_path(p));
                // The `path:12:` prefix is the tool's (an absolute path
                // names the user running it): only the quoted text is the file's.
                let range = content(range, l, p);
                if grep_last != Some(p) {
                    out.count(class);
                }
                for (r, q) in pending.drain(..) {
                    if q == p {
                        let r = content(r.clone(), &text[r], q);
                        out.push(r, class);
                    }
                }
                grep_last = Some(p);
                out.push(range, class);
                continue;
            }
            // A context line: its path is the last hit's or the next one's.
            if grep_last == Some(p) {
                out.push(content(range, l, p), RegionClass::of_path(grep_path(p)));
            } else {
                pending.push((range, p));
            }
            continue;
        }
        if l == "--" {
            pending.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(text: &str) -> Vec<(String, Option<&'static str>)> {
        let r = detect(text);
        let mut start = 0;
        text.split_inclusive('\n')
            .map(|l| {
                let at = start;
                start += l.len();
                // The class of the line's last byte: a grep line's prefix is the tool's.
                let last = at + l.trim_end().len().saturating_sub(1);
                (l.trim_end().to_string(), r.as_ref().and_then(|r| r.class_at(last)).map(RegionClass::name))
            })
            .collect()
    }

    #[test]
    fn file_names_give_classes() {
        for (p, c) in [
            ("src/url.go", RegionClass::Code),
            ("HEAD:lib/a.rb", RegionClass::Code),
            (".env", RegionClass::Env),
            ("deploy/.env.production", RegionClass::Env),
            (".env.example", RegionClass::Text),
            ("HEAD:app/.env.sample", RegionClass::Text),
            ("config/app.yml", RegionClass::Config),
            ("home/.netrc", RegionClass::Config),
            ("package.json", RegionClass::Json),
            ("HISTORY.md", RegionClass::Text),
            ("Makefile", RegionClass::Text),
            ("token_test.go", RegionClass::Test),
            ("HEAD:tests/test_basic.py", RegionClass::Test),
            ("src/app.spec.ts", RegionClass::Test),
            ("spec/dummy/config/database.yml", RegionClass::Test),
            ("internal/testdata/key.json", RegionClass::Test),
            ("src/test/java/a/TokenTest.java", RegionClass::Test),
            ("tests/.env", RegionClass::Env),
            ("src/contest.rs", RegionClass::Code),
            ("src/latest.go", RegionClass::Code),
            ("lib/attestation.rb", RegionClass::Code),
            ("app/views/mailer/unlock.html.erb", RegionClass::Code),
        ] {
            assert_eq!(RegionClass::of_path(p), c, "{p}");
        }
    }

    #[test]
    fn grep_and_git_grep_lines() {
        let text = "net/url/url.go:359:\ts := escape(u.username, encodeUserPassword)\n\
                    net/url/url.go-360-\tif u.passwordSet {\n\
                    --\n\
                    config/app.yml-11-  # the token\n\
                    config/app.yml:12:  token: abc\n\
                    HEAD:docs/HISTORY.md:457:- no longer outputs the password\n\
                    Binary file x.bin matches\n";
        let got = classes(text);
        let want = [Some("code"), Some("code"), None, Some("config"), Some("config"), Some("text"), None];
        assert_eq!(got.iter().map(|g| g.1).collect::<Vec<_>>(), want);
        // The `path:line:` prefix is the tool's, not the file's.
        assert_eq!(detect(text).unwrap().class_at(0), None);
        assert_eq!(
            detect(text).unwrap().counts,
            [(RegionClass::Code, 1), (RegionClass::Config, 1), (RegionClass::Text, 1)]
        );
    }

    #[test]
    fn diffs_by_file_and_hunk() {
        let text = "commit 0123456789abcdef0123456789abcdef01234567\n\
                    Author: A <a@b.c>\n\
                    \n\
                    \x20   rotate the token\n\
                    \n\
                    diff --git a/auth.py b/auth.py\n\
                    index 1..2 100644\n\
                    --- a/auth.py\n\
                    +++ b/auth.py\n\
                    @@ -1,2 +1,2 @@\n\
                    \x20import os\n\
                    -token = os.environ[\"T\"]\n\
                    +token = get_token()\n\
                    diff --git a/.env b/.env\n\
                    --- /dev/null\n\
                    +++ b/.env\n\
                    @@ -0,0 +1 @@\n\
                    +API_TOKEN=abc\n\
                    commit 1123456789abcdef0123456789abcdef01234567\n";
        let got = classes(text);
        let code: Vec<&str> = got.iter().filter(|g| g.1 == Some("code")).map(|g| g.0.as_str()).collect();
        assert_eq!(code, ["@@ -1,2 +1,2 @@", " import os", "-token = os.environ[\"T\"]", "+token = get_token()"]);
        let env: Vec<&str> = got.iter().filter(|g| g.1 == Some("env")).map(|g| g.0.as_str()).collect();
        assert_eq!(env, ["@@ -0,0 +1 @@", "+API_TOKEN=abc"]);
        // The commit message and headers are plain text.
        assert!(got.iter().any(|g| g.0.contains("rotate the token") && g.1.is_none()));
    }

    #[test]
    fn a_hunk_inside_a_test_is_a_test() {
        let text = "diff --git a/src/proxy.rs b/src/proxy.rs\n\
                    --- a/src/proxy.rs\n\
                    +++ b/src/proxy.rs\n\
                    @@ -452,1 +453,1 @@ impl Proxy {\n\
                    -        let a = 1;\n\
                    +        let a = 2;\n\
                    @@ -912,1 +915,1 @@ mod tests {\n\
                    -        let m = Proxy::all(\"https://letme:in@yo.local\")\n\
                    +        let m = Proxy::all(\"http://letme:in@yo.local\")\n";
        let got = classes(text);
        let of = |want: &str| -> Vec<&str> { got.iter().filter(|g| g.1 == Some(want)).map(|g| g.0.as_str()).collect() };
        assert_eq!(
            of("code"),
            [
                "@@ -452,1 +453,1 @@ impl Proxy {",
                "-        let a = 1;",
                "+        let a = 2;",
                "@@ -912,1 +915,1 @@ mod tests {"
            ]
        );
        assert_eq!(of("test").len(), 2);
        // The file is counted once, as code.
        assert_eq!(detect(text).unwrap().counts, [(RegionClass::Code, 1)]);
    }

    #[test]
    fn listings_diagnostics_tracebacks() {
        let listing = "     1\tuse std::io;\n     2\t\n     3\tpub fn main() {\n     4\t    let token = t.next();\n     5\t}\n     6\timpl X {\n     7\t}\n";
        assert!(classes(listing).iter().all(|g| g.1 == Some("code")));
        let netrc = "     1\tmachine api.example.com\n     2\tlogin me\n     3\tpassword hunter2\n";
        assert!(classes(netrc).iter().all(|g| g.1 == Some("text")));
        let (view, back, class) = listing_view_gated(netrc, shape(netrc)).unwrap();
        assert_eq!(view, "machine api.example.com\nlogin me\npassword hunter2\n");
        assert_eq!(class, RegionClass::Text);
        let at = view.find("hunter2").unwrap();
        assert_eq!(&netrc[back[at]..back[at + 7]], "hunter2");
        assert_eq!(back[view.len()], netrc.len());
        assert_eq!(listing_view_gated("a\nb\nc\n", shape("a\nb\nc\n")), None);
        let rustc = "error[E0432]: unresolved import `x`\n --> src/lib.rs:3:5\n  |\n3 | use x::token;\n  |     ^ no `x`\n\nerror: aborting\n";
        let got = classes(rustc);
        assert_eq!(got[3], ("3 | use x::token;".into(), Some("code")));
        assert_eq!(got[6].1, None);
        let tb = "Traceback (most recent call last):\n  File \"app/main.py\", line 4, in <module>\n    client.login(password)\nNameError: x\n";
        let got = classes(tb);
        assert_eq!(got[2].1, Some("code"));
        assert_eq!(got[3].1, None);
    }

    #[test]
    fn plain_text_is_not_read_past_the_gate() {
        let log = "2026-01-01T00:00:00Z INFO start\nINFO token=abc\n".repeat(20);
        assert_eq!(detect(&log), None);
        assert_eq!(detect("12:30:45 up 3 days\n"), None);
    }
}
