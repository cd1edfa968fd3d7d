//! Regex analysis on `regex-syntax`: where a rule's matches can start
//! ([`Anchor`]), its anchored form, whether it can match a line end, and
//! how an anchored try finds the secret group without capture groups.
//!
//! A rule's regex is parsed once, on its first keyword hit, to an AST
//! (whose spans cut the source into the anchored form and the parts of a
//! split) and translated to an `Hir`, which the decisions read: prefix
//! literals from `hir::literal::Extractor`, line ends from the classes
//! and literals, assertions from the look-around sets.

use regex_syntax::ast::{self, AssertionKind, Ast, GroupKind};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::translate::TranslatorBuilder;
use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// How a rule's regex is run (decided once, from its source and keywords).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Anchor {
    /// Every match starts at a keyword hit: tried there, anchored. The bool
    /// says the regex starts with `\b`, checked by hand.
    Keyword(bool),
    /// Every match starts at a line start (`(?m)^...`): tried, anchored,
    /// at the line starts inside the windows around keyword hits.
    LineStart,
    /// Searched inside the windows around keyword hits.
    Window,
}

/// What the analysis of one rule's regex decides.
#[derive(Debug, PartialEq)]
pub(super) struct Plan {
    pub(super) anchor: Anchor,
    /// The `\A`-anchored form for an anchored [`Anchor`] (`{flags}\A(?:…)`,
    /// without a leading `\b`), so that the engine stops as soon as no
    /// thread is left. regex-lite has no anchored search, hence a source.
    pub(super) anchored: Option<String>,
    /// The regex can match a line end (a literal `\n`, a class holding it
    /// such as `\s`, `[^"]` or `(?s).`, or a `(?m)` line assertion); other
    /// rules only look at the line of their keyword hit.
    pub(super) multiline: bool,
    /// For an anchored form: `Some(None)` when the secret is the whole
    /// match, `Some(Some((P, G)))` for a regex `P(G)T` with the secret
    /// group G last and T only assertions (see `rules::Split`).
    pub(super) split: Option<Option<(String, String)>>,
}

/// Most prefix literals the extractor keeps (its default is 250): a
/// keyword must be a prefix of each literal, so they must not be cut short.
const LIMIT_TOTAL: usize = 1 << 10;

/// The regex as an AST and an `Hir` (ASCII classes, as the engines run it;
/// with Unicode on for a regex the ASCII translation refuses).
///
/// The `Hir` is translated with `(?i)` left out: keywords match in any
/// case, so prefix literals are compared in lower case, and `(?i)` would
/// only multiply them (two per letter) past the extractor's limits.
fn parse(src: &str) -> Option<(Ast, Hir)> {
    let ast = ast::parse::Parser::new().parse(src).ok()?;
    let mut cased = ast.clone();
    without_case_flag(&mut cased);
    let translate =
        |unicode: bool| TranslatorBuilder::new().unicode(unicode).utf8(unicode).build().translate(src, &cased);
    let hir = translate(false).or_else(|_| translate(true)).ok()?;
    Some((ast, hir))
}

/// `ast` without its `i` flags.
fn without_case_flag(ast: &mut Ast) {
    let strip = |f: &mut ast::Flags| f.items.retain(|i| i.kind != ast::FlagsItemKind::Flag(ast::Flag::CaseInsensitive));
    match ast {
        Ast::Flags(f) => strip(&mut f.flags),
        Ast::Group(g) => {
            if let GroupKind::NonCapturing(f) = &mut g.kind {
                strip(f);
            }
            without_case_flag(&mut g.ast);
        }
        Ast::Repetition(r) => without_case_flag(&mut r.ast),
        Ast::Alternation(a) => a.asts.iter_mut().for_each(without_case_flag),
        Ast::Concat(c) => c.asts.iter_mut().for_each(without_case_flag),
        _ => {}
    }
}

/// The analysis of `src`, a rule's regex with lower-case `keywords` and
/// secret group `secret_group`.
pub(super) fn plan(src: &str, keywords: &[String], secret_group: usize) -> Plan {
    let window = |multiline| Plan { anchor: Anchor::Window, anchored: None, multiline, split: None };
    let Some((ast, hir)) = parse(src) else { return window(true) };
    let multiline = line_end(&hir);
    let (anchor, rest) = anchor(&ast, &hir, keywords);
    let Some(rest) = rest else { return window(multiline) };
    let flags = &src[..rest.0];
    let body = &src[rest.0 + rest.1..];
    let items = top_items(&ast);
    let skip =
        items.iter().take_while(|a| matches!(a, Ast::Flags(_))).count() + usize::from(anchor == Anchor::Keyword(true));
    let split = secret_split(src, flags, &items[skip..], body.len(), secret_group);
    Plan { anchor, anchored: Some(format!("{flags}\\A(?:{body})")), multiline, split }
}

/// The items of the regex's top-level concatenation.
fn top_items(ast: &Ast) -> Vec<&Ast> {
    match ast {
        Ast::Concat(c) => c.asts.iter().collect(),
        a => vec![a],
    }
}

/// The anchor, and for an anchored one where its body starts: the length
/// of the leading flags (`(?i)`) and of the `\b` after them.
fn anchor(ast: &Ast, hir: &Hir, keywords: &[String]) -> (Anchor, Option<(usize, usize)>) {
    let hirs: &[Hir] = match hir.kind() {
        HirKind::Alternation(_) => return (Anchor::Window, None),
        HirKind::Concat(c) => c,
        _ => std::slice::from_ref(hir),
    };
    let items = top_items(ast);
    let flags = items.iter().take_while(|a| matches!(a, Ast::Flags(_))).count();
    let flags_end = items[..flags].last().map_or(0, |a| a.span().end.offset);
    let first = items.get(flags).copied();
    let look = |h: &Hir| match h.kind() {
        HirKind::Look(l) => Some(*l),
        _ => None,
    };
    if matches!(hirs.first().and_then(look), Some(Look::StartLF | Look::StartCRLF)) {
        return (Anchor::LineStart, Some((flags_end, 0)));
    }
    let wb = matches!(first, Some(Ast::Assertion(a)) if a.kind == AssertionKind::WordBoundary)
        && matches!(hirs.first().and_then(look), Some(Look::WordAscii | Look::WordUnicode));
    let rest = Hir::concat(hirs[usize::from(wb)..].to_vec());
    // An assertion where the anchored try starts would see the start of the
    // slice, not the text before it.
    if !rest.properties().look_set_prefix_any().is_empty() {
        return (Anchor::Window, None);
    }
    let seq = Extractor::new().kind(ExtractKind::Prefix).limit_total(LIMIT_TOTAL).extract(&rest);
    let Some(lits) = seq.literals() else { return (Anchor::Window, None) };
    let ok = !lits.is_empty()
        && lits.iter().all(|l| {
            let l = l.as_bytes().to_ascii_lowercase();
            !l.is_empty() && keywords.iter().any(|k| l.starts_with(k.to_ascii_lowercase().as_bytes()))
        });
    let wb_len = if wb { first.map_or(0, |a| a.span().end.offset - flags_end) } else { 0 };
    if ok {
        (Anchor::Keyword(wb), Some((flags_end, wb_len)))
    } else {
        (Anchor::Window, None)
    }
}

/// Whether the regex can match a line end.
fn line_end(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Empty => false,
        HirKind::Literal(l) => l.0.contains(&b'\n'),
        HirKind::Class(Class::Unicode(c)) => c.ranges().iter().any(|r| r.start() <= '\n' && '\n' <= r.end()),
        HirKind::Class(Class::Bytes(c)) => c.ranges().iter().any(|r| r.start() <= b'\n' && b'\n' <= r.end()),
        HirKind::Look(l) => matches!(l, Look::StartLF | Look::EndLF | Look::StartCRLF | Look::EndCRLF),
        HirKind::Repetition(r) => line_end(&r.sub),
        HirKind::Capture(c) => line_end(&c.sub),
        HirKind::Concat(hs) | HirKind::Alternation(hs) => hs.iter().any(line_end),
    }
}

/// Whether `ast` or any item inside it satisfies `f`.
fn any(ast: &Ast, f: &dyn Fn(&Ast) -> bool) -> bool {
    f(ast)
        || match ast {
            Ast::Repetition(r) => any(&r.ast, f),
            Ast::Group(g) => any(&g.ast, f),
            Ast::Alternation(a) => a.asts.iter().any(|x| any(x, f)),
            Ast::Concat(c) => c.asts.iter().any(|x| any(x, f)),
            _ => false,
        }
}

/// The [`Plan::split`] of an anchored body made of `items` (the top-level
/// items of `src` after its flags and `\b`), `body_len` bytes long.
fn secret_split(
    src: &str,
    flags: &str,
    items: &[&Ast],
    body_len: usize,
    secret_group: usize,
) -> Option<Option<(String, String)>> {
    if secret_group == 0 {
        return Some(None);
    }
    let body_start = src.len() - body_len;
    let j = items.iter().rposition(|a| matches!(a, Ast::Group(_)))?;
    let Ast::Group(g) = items[j] else { return None };
    let tail_ok = items[j + 1..].iter().all(|a| {
        matches!(a, Ast::Assertion(x) if matches!(x.kind, AssertionKind::WordBoundary | AssertionKind::NotWordBoundary | AssertionKind::EndText | AssertionKind::EndLine))
    });
    // A capturing group, after no group that changes flags or numbering
    // (its number is checked against the compiled P, see `rules`), and
    // with no assertion inside: G runs anchored on the text after P, where
    // an assertion at its start would not see what precedes it.
    let plain = |a: &Ast| match a {
        Ast::Flags(_) => true,
        Ast::Group(g) => match &g.kind {
            GroupKind::CaptureName { .. } => true,
            GroupKind::NonCapturing(f) => !f.items.is_empty(),
            GroupKind::CaptureIndex(_) => false,
        },
        _ => false,
    };
    let odd_p = items[..j].iter().any(|a| any(a, &plain));
    let assertion = any(&g.ast, &|a| matches!(a, Ast::Assertion(_)));
    if !tail_ok || !matches!(g.kind, GroupKind::CaptureIndex(_)) || odd_p || assertion {
        return None;
    }
    let (open, close) = (g.span.start.offset, g.span.end.offset);
    let p = &src[body_start..open];
    let inner = &src[open + 1..close - 1];
    let tail = &src[close..];
    Some((!p.is_empty()).then(|| (format!("{flags}\\A(?:{p})"), format!("{flags}\\A(?:{inner}){tail}"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn anchored_forms() {
        let anchor = |re: &str, k: &[&str]| plan(re, &kw(k), 0).anchor;
        let p = plan(r"\b(ghp_[A-Za-z0-9]{36})\b", &kw(&["ghp_"]), 1);
        assert_eq!((p.anchor, p.anchored.as_deref()), (Anchor::Keyword(true), Some(r"\A(?:(ghp_[A-Za-z0-9]{36})\b)")));
        assert_eq!(
            anchor(r"\b((?:ghp|gho)_[A-Za-z0-9]{36})\b", &["ghp_", "gho_"]),
            Anchor::Keyword(true),
            "expanded to ghp_ and gho_"
        );
        assert_eq!(anchor(r"\b((?:ghp|gho)_[A-Za-z0-9]{36})\b", &["ghp_"]), Anchor::Window, "gho_ is no keyword");
        assert_eq!(
            anchor(r"\b(NRAK-[A-Z]{3}|[a-f0-9]{36}NRAL)\b", &["nrak-", "nral"]),
            Anchor::Window,
            "one alternative has no literal"
        );
        assert_eq!(anchor(r"\b(NRAK-[A-Z]{3}|NRJS-[a-f]{3})\b", &["nrak-", "nrjs-"]), Anchor::Keyword(true));
        assert_eq!(anchor(r"(?i)password=(\S+)", &["password"]), Anchor::Keyword(false));
        assert_eq!(anchor(r"(?i)SharedAccessSignature=(\S+)", &["sharedaccesssignature="]), Anchor::Keyword(false));
        assert_eq!(anchor(r"(?i)[A-Z_]*password=(\S+)", &["password"]), Anchor::Window);
        assert_eq!(anchor(r"\b(sk\.eyJ[A-Za-z0-9_\-]{50,})", &["sk.eyj"]), Anchor::Keyword(true));
        assert_eq!(anchor(r"\b(xox[abp]-[0-9]{10})", &["xoxa-", "xoxb-", "xoxp-"]), Anchor::Keyword(true));
        assert_eq!(anchor(r"\b(xox[a-p]-[0-9]{10})", &["xoxa-", "xoxb-"]), Anchor::Window, "xoxc- is no keyword");
        assert_eq!(anchor(r"(?i)api[_\-]?key=(\S+)", &["api_key", "api-key", "apikey"]), Anchor::Keyword(false));
        assert_eq!(anchor(r"(?i)api[_\-]?key=(\S+)", &["api_key", "api-key"]), Anchor::Window, "apikey is no keyword");
        assert_eq!(anchor(r"(?:/home|/Users)/(\w+)", &["/home/", "/users/"]), Anchor::Keyword(false));
        assert_eq!(anchor(r"abc|xyz", &["abc"]), Anchor::Window, "a top-level alternative without a keyword");
        assert_eq!(anchor(r"\babc|xyz", &["abc", "xyz"]), Anchor::Window, "\\b belongs to the first alternative only");
        assert_eq!(anchor(r"(?:^|x)abc", &["abc", "xabc"]), Anchor::Window, "an assertion where the try starts");
        assert_eq!(anchor(r"(?m)^\s*token:\s*(\S+)", &["token:"]), Anchor::LineStart);
        assert_eq!(anchor(r"(?m)^a|b", &["a", "b"]), Anchor::Window);
        assert_eq!(anchor(r"^\s*token:\s*(\S+)", &["token:"]), Anchor::Window, "^ without (?m) is the text start");
    }

    #[test]
    fn line_ends() {
        let ml = |re: &str| plan(re, &[], 0).multiline;
        for re in [r"a\sb", r#"k="([^"]+)""#, r"(?s)a.b", r"a\nb", r"a[\s\S]b", r"(?m)^a", r"(?m)a$", r"a(?:x|\s)"] {
            assert!(ml(re), "{re}");
        }
        for re in [r"a.b", r"a\Sb", r"(?s)ab", r"a[^\s]b", r"a\x20b", r"a$"] {
            assert!(!ml(re), "{re}");
        }
    }

    #[test]
    fn secret_splits() {
        let split = |re: &str, k: &str, g| plan(re, &kw(&[k]), g).split;
        let parts = |p: &str, g: &str| Some(Some((p.to_string(), g.to_string())));
        assert_eq!(split(r"\b(ghp_[A-Za-z0-9]{36})\b", "ghp_", 1), Some(None), "the group is the whole match");
        assert_eq!(split(r"ghp_[a-z]+", "ghp_", 0), Some(None));
        assert_eq!(
            split(r"(?i)token\s*=\s*([^\s]{6,})", "token", 1),
            parts(r"(?i)\A(?:token\s*=\s*)", r"(?i)\A(?:[^\s]{6,})")
        );
        assert_eq!(split(r"k(a)=(b)\b$", "k", 2), parts(r"\A(?:k(a)=)", r"\A(?:b)\b$"));
        assert_eq!(
            split(r"k=[(](b)", "k", 1),
            parts(r"\A(?:k=[(])", r"\A(?:b)"),
            "a parenthesis in a class is no group"
        );
        assert_eq!(split(r"k=(\bb)", "k", 1), None, "an assertion inside the group");
        assert_eq!(split(r"k=([^$]b)", "k", 1), parts(r"\A(?:k=)", r"\A(?:[^$]b)"), "no assertion in a class");
        assert_eq!(split(r"k=(b)+", "k", 1), None, "a repeated group");
        assert_eq!(split(r"k=(b)c", "k", 1), None, "the group is not last");
        assert_eq!(split(r"k(?i)=(b)", "k", 1), None, "flags inside");
        assert_eq!(split(r"k=(?P<v>b)", "k", 1), None, "not a plain group");
    }
}
