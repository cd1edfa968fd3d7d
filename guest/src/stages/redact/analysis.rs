//! Regex analysis: where a rule's matches can start ([`Anchor`]), its
//! anchored form, and how an anchored try finds the secret group.

/// Most literal prefixes [`leading_literals`] expands a regex into.
pub(super) const MAX_PREFIXES: usize = 64;

/// Literal prefixes that every match of `s` starts with, or `None` when
/// some branch starts with something that is not a literal.
///
/// The regex's leading items are expanded into a set of strings: literal
/// characters, escaped punctuation, small classes (`[sb]`, `[_\-]`),
/// optional items (`x?`) and groups of alternatives, each alternative
/// expanded the same way. Expansion stops at the first item of another
/// kind (a large class, a repetition, an assertion) or past
/// [`MAX_PREFIXES`] strings; a string that stopped is still a prefix of
/// every match of its branch, which is all the caller needs.
pub(super) fn leading_literals(s: &str) -> Option<Vec<String>> {
    // As one group, so that top-level alternatives are split too.
    let (prefixes, _) = expand_item(format!("(?:{s})").as_bytes())?;
    let out: Vec<String> = prefixes.into_iter().map(|(p, _)| p).collect();
    (!out.is_empty() && out.iter().all(|p| !p.is_empty())).then_some(out)
}

/// One parsed item: its expansions and how many bytes it took, or `None`
/// when it is not an expandable item.
pub(super) fn expand_item(b: &[u8]) -> Option<(Vec<(String, bool)>, usize)> {
    let lit = |c: u8| c.is_ascii_alphanumeric() || b"_-:/@#%&=!,'\"~ <>".contains(&c);
    match *b.first()? {
        b'\\' => {
            let e = *b.get(1)?;
            b".-$/_~:@#%&=!,'\"()[]{}?*+|^\\ <>".contains(&e).then(|| (vec![((e as char).to_string(), true)], 2))
        }
        b'[' => {
            // A small class of single characters and escaped punctuation.
            let mut i = 1;
            let mut members = Vec::new();
            while i < b.len() && b[i] != b']' {
                let c = if b[i] == b'\\' {
                    i += 1;
                    *b.get(i).filter(|c| c.is_ascii_punctuation())?
                } else if b.get(i + 1) == Some(&b'-') && b.get(i + 2).is_some_and(|&c| c != b']') {
                    return None; // a range
                } else if b[i] == b'^' && i == 1 {
                    return None; // negated
                } else {
                    b[i]
                };
                members.push(((c as char).to_string(), true));
                i += 1;
            }
            (i < b.len() && !members.is_empty() && members.len() <= 8).then_some((members, i + 1))
        }
        b'(' => {
            let body = if b.starts_with(b"(?:") {
                3
            } else if b.get(1) == Some(&b'?') {
                return None; // flags, look-around
            } else {
                1
            };
            let (alts, close) = split_alternatives(&b[body..]);
            let close = body + close?;
            let mut out = Vec::new();
            for a in alts {
                let (p, _) = expand_seq(a)?;
                out.extend(p);
            }
            (out.len() <= MAX_PREFIXES).then_some((out, close + 1))
        }
        c if lit(c) => Some((vec![((c as char).to_string(), true)], 1)),
        _ => None,
    }
}

/// Expands a sequence of items; each string says whether it reached the
/// end of `b` (and may be continued by what follows the sequence).
pub(super) fn expand_seq(b: &[u8]) -> Option<(Vec<(String, bool)>, usize)> {
    let mut set: Vec<(String, bool)> = vec![(String::new(), true)];
    let mut i = 0;
    while i < b.len() {
        let Some((mut items, used)) = expand_item(&b[i..]) else { break };
        let q = b.get(i + used).copied();
        if matches!(q, Some(b'*' | b'+' | b'{')) {
            break; // repeated: not a fixed prefix
        }
        let mut used = used;
        if q == Some(b'?') {
            items.push((String::new(), true));
            used += 1;
        }
        let grown = set.iter().filter(|(_, open)| *open).count() * items.len();
        if grown > MAX_PREFIXES {
            break;
        }
        let mut next = Vec::with_capacity(grown);
        for (p, open) in set {
            if !open {
                next.push((p, false));
                continue;
            }
            for (e, e_open) in &items {
                next.push((format!("{p}{e}"), *e_open));
            }
        }
        set = next;
        i += used;
    }
    let complete = i == b.len();
    Some((set.into_iter().map(|(p, open)| (p, open && complete)).collect(), i))
}

/// `src` without its leading flag group (`(?im)`), and that group.
pub(super) fn split_flags(src: &str) -> (&str, &str) {
    match src.strip_prefix("(?") {
        Some(r) if r.find(')').is_some_and(|i| r[..i].chars().all(|c| c.is_ascii_alphabetic())) => {
            let i = r.find(')').expect("checked");
            (&src[..i + 3], &r[i + 1..])
        }
        _ => ("", src),
    }
}

/// The sources of the [`Split`] of an anchored form `{flags}\A(?:{body})`
/// whose group `secret_group` is the last item of `body`: `None` for a
/// whole-match secret, `Some((P, G))` otherwise.
pub(super) fn secret_split(anchored: &str, secret_group: usize) -> Option<Option<(String, String)>> {
    if secret_group == 0 {
        return Some(None);
    }
    let (flags, rest) = split_flags(anchored);
    let body = rest.strip_prefix("\\A(?:")?.strip_suffix(')')?;
    // The last group at the top level of `body`.
    let (mut depth, mut open, mut last) = (0usize, 0, None);
    for (i, t) in outside_classes(body.as_bytes()) {
        match t {
            Tok::Plain(b'(') => {
                if depth == 0 {
                    open = i;
                }
                depth += 1;
            }
            Tok::Plain(b')') if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    last = Some((open, i));
                }
            }
            _ => {}
        }
    }
    let (open, close) = last?;
    let (p, g, mut tail) = (&body[..open], &body[open + 1..close], &body[close + 1..]);
    while let Some(t) = ["\\b", "\\B", "\\z", "$"].iter().find_map(|a| tail.strip_prefix(a)) {
        tail = t;
    }
    // A capturing group, after no group that changes flags or numbering
    // (its number is checked against the compiled P, see `regexes`), and
    // with no assertion inside: G runs anchored on the text after P, where
    // an assertion at its start would not see what precedes it.
    let plain = |s: &str| s.match_indices("(?").all(|(i, _)| s[i..].starts_with("(?:"));
    if !tail.is_empty() || g.starts_with('?') || !plain(p) || has_assertion(g) {
        return None;
    }
    let tail = &body[close + 1..];
    Some((!p.is_empty()).then(|| (format!("{flags}\\A(?:{p})"), format!("{flags}\\A(?:{g}){tail}"))))
}

/// Whether `s` has an assertion (`^ $ \b \B \A \z \< \>`) outside a class.
pub(super) fn has_assertion(s: &str) -> bool {
    outside_classes(s.as_bytes())
        .any(|(_, t)| matches!(t, Tok::Escaped(b'b' | b'B' | b'A' | b'z' | b'<' | b'>') | Tok::Plain(b'^' | b'$')))
}

/// A byte of a regex source outside its character classes.
#[derive(Clone, Copy)]
pub(super) enum Tok {
    /// The byte after a `\`.
    Escaped(u8),
    Plain(u8),
}

/// The bytes of a regex source outside character classes (the brackets
/// included), with their indices; a `\` itself is not yielded. The one
/// lexer behind [`split_alternatives`], [`secret_split`] and
/// [`has_assertion`].
pub(super) fn outside_classes(b: &[u8]) -> impl Iterator<Item = (usize, Tok)> + '_ {
    let (mut class, mut esc) = (false, false);
    b.iter().enumerate().filter_map(move |(i, &c)| {
        if esc {
            esc = false;
            return (!class).then_some((i, Tok::Escaped(c)));
        }
        match c {
            b'\\' => esc = true,
            b'[' if !class => class = true,
            b']' if class => class = false,
            _ if !class => return Some((i, Tok::Plain(c))),
            _ => {}
        }
        None
    })
}

/// Whether `s` has a `|` outside any group or class.
pub(super) fn top_level_bar(s: &str) -> bool {
    split_alternatives(s.as_bytes()).0.len() > 1
}

/// The alternatives of `b` split at its top-level `|`, up to the `)` that
/// closes the group `b` is the inside of (its index) or to the end.
pub(super) fn split_alternatives(b: &[u8]) -> (Vec<&[u8]>, Option<usize>) {
    let mut depth = 0usize;
    let mut alts = Vec::new();
    let mut last = 0;
    for (i, t) in outside_classes(b) {
        match t {
            Tok::Plain(b'(') => depth += 1,
            Tok::Plain(b')') if depth > 0 => depth -= 1,
            Tok::Plain(b')') => {
                alts.push(&b[last..i]);
                return (alts, Some(i));
            }
            Tok::Plain(b'|') if depth == 0 => {
                alts.push(&b[last..i]);
                last = i + 1;
            }
            _ => {}
        }
    }
    alts.push(&b[last..]);
    (alts, None)
}

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

/// The anchor of a rule and the source of its anchored form (`\A`, so
/// that the regex engine stops as soon as no thread is left).
pub(super) fn anchored_form(src: &str, keywords: &[String]) -> (Anchor, Option<String>) {
    let (flags, rest) = split_flags(src);
    if flags.contains('x') || top_level_bar(rest) {
        return (Anchor::Window, None);
    }
    if flags.contains('m') && rest.starts_with('^') {
        return (Anchor::LineStart, Some(format!("{flags}\\A(?:{rest})")));
    }
    let (wb, rest) = match rest.strip_prefix("\\b") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let Some(lits) = leading_literals(rest) else { return (Anchor::Window, None) };
    let ok = lits.iter().all(|l| {
        let l = l.to_ascii_lowercase();
        keywords.iter().any(|k| l.starts_with(&k.to_ascii_lowercase()))
    });
    if ok {
        (Anchor::Keyword(wb), Some(format!("{flags}\\A(?:{rest})")))
    } else {
        (Anchor::Window, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchored_forms() {
        let kw = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let anchor = |re: &str, k: &[&str]| anchored_form(re, &kw(k)).0;
        assert_eq!(
            anchored_form(r"\b(ghp_[A-Za-z0-9]{36})\b", &kw(&["ghp_"])),
            (Anchor::Keyword(true), Some(r"\A(?:(ghp_[A-Za-z0-9]{36})\b)".into()))
        );
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
        assert_eq!(anchor(r"(?i)[A-Z_]*password=(\S+)", &["password"]), Anchor::Window);
        assert_eq!(anchor(r"\b(sk\.eyJ[A-Za-z0-9_\-]{50,})", &["sk.eyj"]), Anchor::Keyword(true));
        assert_eq!(anchor(r"\b(x+yz)", &["x"]), Anchor::Window);
        assert_eq!(anchor(r"\b(xox[abp]-[0-9]{10})", &["xoxa-", "xoxb-", "xoxp-"]), Anchor::Keyword(true));
        assert_eq!(anchor(r"\b(xox[a-p]-[0-9]{10})", &["xoxa-", "xoxb-"]), Anchor::Window, "ranges are not expanded");
        assert_eq!(anchor(r"(?i)api[_\-]?key=(\S+)", &["api_key", "api-key", "apikey"]), Anchor::Keyword(false));
        assert_eq!(anchor(r"(?i)api[_\-]?key=(\S+)", &["api_key", "api-key"]), Anchor::Window, "apikey is no keyword");
        assert_eq!(anchor(r"(?:/home|/Users)/(\w+)", &["/home/", "/users/"]), Anchor::Keyword(false));
        assert_eq!(anchor(r"abc|xyz", &["abc"]), Anchor::Window, "a top-level alternative without a keyword");
        assert_eq!(anchor(r"\babc|xyz", &["abc", "xyz"]), Anchor::Window, "\\b belongs to the first alternative only");
        assert_eq!(anchor(r"(?m)^\s*token:\s*(\S+)", &["token:"]), Anchor::LineStart);
        assert_eq!(anchor(r"(?m)^a|b", &["a", "b"]), Anchor::Window);
        assert_eq!(anchor(r"^\s*token:\s*(\S+)", &["token:"]), Anchor::Window, "^ without (?m) is the text start");
    }

    #[test]
    fn secret_splits() {
        let split = |a: &str, g| secret_split(a, g);
        let parts = |p: &str, g: &str| Some(Some((p.to_string(), g.to_string())));
        assert_eq!(split(r"\A(?:(ghp_[A-Za-z0-9]{36})\b)", 1), Some(None), "the group is the whole match");
        assert_eq!(split(r"\A(?:ghp_[a-z]+)", 0), Some(None));
        assert_eq!(
            split(r"(?i)\A(?:token\s*=\s*([^\s]{6,}))", 1),
            parts(r"(?i)\A(?:token\s*=\s*)", r"(?i)\A(?:[^\s]{6,})")
        );
        assert_eq!(split(r"\A(?:k(a)=(b)\b$)", 2), parts(r"\A(?:k(a)=)", r"\A(?:b)\b$"));
        assert_eq!(
            split(r"\A(?:k=[(](b))", 1),
            parts(r"\A(?:k=[(])", r"\A(?:b)"),
            "a parenthesis in a class is no group"
        );
        assert_eq!(split(r"\A(?:k=(\bb))", 1), None, "an assertion inside the group");
        assert_eq!(split(r"\A(?:k=([^$]b))", 1), parts(r"\A(?:k=)", r"\A(?:[^$]b)"), "no assertion in a class");
        assert_eq!(split(r"\A(?:k=(b)+)", 1), None, "a repeated group");
        assert_eq!(split(r"\A(?:k=(b)c)", 1), None, "the group is not last");
        assert_eq!(split(r"\A(?:(?i)k=(b))", 1), None, "flags inside");
        assert_eq!(split(r"\A(?:k=(?P<v>b))", 1), None, "not a plain group");
    }
}
