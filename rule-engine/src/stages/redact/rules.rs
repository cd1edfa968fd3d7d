//! Compiling a rule set: the rules, their regexes compiled on first use
//! for the engine a text runs on, the keyword automaton.

use std::ops::Range;
use std::sync::{Mutex, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::bytes::{Regex, RegexBuilder};

use super::analysis::{self, Plan};
use super::keywords::Keywords;
use crate::pack_api::RuleSet;

/// Default window after a keyword hit.
pub const DEFAULT_WINDOW: usize = 256;
/// ASCII texts at least this long run on the `regex` crate's engines (and
/// shorter ASCII texts too, for the rules a long one compiled there);
/// others on regex-lite's. On ASCII text the two give the same matches
/// (see the module docs), so which one ran never shows in the output. The
/// `regex` crate is several times faster on text dense with secrets, but an
/// instance that uses it holds ~0.1 MiB more (docs/benchmarks.md), which a
/// thousand tenants' instances, each redacting small outputs, cannot
/// afford.
pub const FAST_MIN_TEXT: usize = 64 << 10;

pub(super) struct CompiledRule {
    pub(super) id: String,
    /// Path rules' matches are not propagated (a user name can be a word).
    pub(super) propagate: bool,
    /// A path rule (`kind = "path"`): off in source code.
    pub(super) path: bool,
    pub(super) strict_only: bool,
    /// A rule of the tenant's pack (not the platform's): the tenant's
    /// lenient tools apply to it.
    pub(super) tenant: bool,
    /// A scrubbing rule: only in error results ([`super::Mode::scrub`]).
    pub(super) errors_only: bool,
    /// A personal-data rule (`kind = "pii"`): with PII on and in error
    /// results ([`super::Mode::pii`]); the global allowlist and stopwords
    /// do not apply to it.
    pub(super) pii: bool,
    /// Source of the regex; compiled on the rule's first keyword hit (most
    /// rules never hit in a given call, and a pack has hundreds).
    pub(super) src: String,
    /// Lower-case keywords.
    pub(super) keywords: Vec<String>,
    /// Where matches can start (see [`super::analysis::Anchor`]) and the source of the
    /// `\A`-anchored form; worked out on the rule's first keyword hit.
    /// (Boxed, as the compiled forms below are: most rules never hit in an
    /// instance, and a pointer is all they hold of these.)
    pub(super) plan: OnceLock<Box<Plan>>,
    /// The regex (or its anchored form), compiled on first use: for the
    /// `regex` crate, and for regex-lite.
    pub(super) compiled: OnceLock<Option<Box<Compiled>>>,
    pub(super) lite: OnceLock<Option<Box<regex_lite::Regex>>>,
    pub(super) secret_group: usize,
    pub(super) entropy: Option<f32>,
    pub(super) window: usize,
    /// Allowlist regexes, compiled on the rule's first candidate.
    pub(super) allow: Lazy,
    pub(super) stopwords: Vec<String>,
}

/// Regexes compiled on first use: most rules never produce a candidate
/// in a given instance, and compiling a pack's allowlists up front cost
/// about a third of a fresh instance's start (docs/benchmarks.md).
pub(super) struct Lazy {
    pub(super) src: Vec<String>,
    pub(super) compiled: OnceLock<Box<Result<Vec<Regex>, String>>>,
    pub(super) lite: OnceLock<Box<Result<Vec<regex_lite::Regex>, String>>>,
}

impl Lazy {
    pub(super) fn new(src: Vec<String>) -> Self {
        Self { src, compiled: OnceLock::new(), lite: OnceLock::new() }
    }

    /// Whether any regex of the list matches `s`, on the engine of the scan.
    /// An error starts with `allowlist:`; the caller names whose list it is
    /// (see [`Whose`]: a name kept per rule would cost each instance a
    /// string per rule).
    pub(super) fn matches(&self, s: &str, fast: bool) -> Result<bool, String> {
        if fast {
            return self.get().map(|l| l.iter().any(|a| a.is_match(s.as_bytes())));
        }
        let lite = self.lite.get_or_init(|| Box::new(self.src.iter().map(|a| lite_regex(ALLOWLIST, a)).collect()));
        lite.as_deref().map(|l| l.iter().any(|a| a.is_match(s))).map_err(Clone::clone)
    }

    /// The list as one regex where it can be (`(?:a)|(?:b)|…` in byte
    /// mode: one compiled regex costs less memory per instance than
    /// several), else one regex each (see [`compile_regex`]).
    pub(super) fn get(&self) -> Result<&[Regex], String> {
        self.compiled
            .get_or_init(|| {
                if self.src.len() > 1 {
                    let one: Vec<String> = self.src.iter().map(|a| format!("(?:{a})")).collect();
                    if let Ok(re) = byte_regex(&one.join("|"), false) {
                        return Box::new(Ok(vec![re]));
                    }
                }
                Box::new(self.src.iter().map(|a| compile_regex(ALLOWLIST, a)).collect())
            })
            .as_ref()
            .as_deref()
            .map_err(Clone::clone)
    }
}

/// What a [`Lazy`]'s errors start with.
const ALLOWLIST: &str = "allowlist";

/// Whose allowlist a [`Lazy`] is, for its errors.
#[derive(Clone, Copy)]
pub(super) enum Whose<'r> {
    Rule(&'r str),
    Global,
    Generic,
}

impl Whose<'_> {
    /// A [`Lazy`]'s error `e` (it starts with [`ALLOWLIST`]), naming the list.
    pub(super) fn error(self, e: String) -> String {
        match self {
            Whose::Rule(id) => format!("rule `{id}` {e}"),
            Whose::Global => format!("global {e}"),
            Whose::Generic => format!("generic {e}"),
        }
    }
}

/// A pack's rules, compiled.
pub struct Ruleset {
    pub(super) rules: Vec<CompiledRule>,
    /// The keywords, and the error words of
    /// [`crate::support::error_words`].
    pub(super) keywords: Keywords,
    /// keyword pattern index → rule indices
    pub(super) keyword_rules: Vec<Vec<usize>>,
    /// keyword pattern index → whether it is an error word
    pub(super) error_word: Vec<bool>,
    /// rules that run everywhere
    pub(super) unanchored: Vec<usize>,
    pub(super) global_allow: Lazy,
    /// Shapes of code, references and placeholders, for generic rules'
    /// candidates (the rule set's `generic.allow-regexes`).
    pub(super) generic_allow: Lazy,
    /// What a generic rule's value in source code must be.
    pub(super) code_shape: crate::pack_api::GenericValues,
    /// Built on the first candidate (see [`Self::stopwords`]).
    pub(super) global_stop: OnceLock<Option<AhoCorasick>>,
    pub(super) stopwords: Vec<String>,
    pub(super) roots: Option<AhoCorasick>,
    pub(super) error: Mutex<Option<String>>,
    /// What a rule's match becomes when not `[REDACTED:<id>]`, by id (the
    /// first rule of an id decides).
    pub(super) replacements: Vec<(String, String)>,
}

/// Compiles a rule's regex (regex-lite syntax) for the `regex` crate's
/// engines, over bytes, with Unicode off: `\d \s \w \b` and `(?i)` are
/// ASCII, as in regex-lite, and a class or `.` matches one byte, so the
/// automata stay small (a Unicode `[^\s]{1,256}` is thousands of NFA
/// states). It runs on ASCII text only ([`FAST_MIN_TEXT`]), where that is
/// regex-lite's matching. A regex with a non-ASCII character in a class
/// cannot be built that way and is compiled with Unicode on instead (on
/// ASCII text, the same matches).
pub(super) fn compile_regex(what: &str, src: &str) -> Result<Regex, String> {
    byte_regex(src, false)
        .or_else(|_| byte_regex(src, true))
        .map_err(|e| format!("{what}: regex does not compile: {e}"))
}

/// `src` compiled over bytes, within this module's limits.
pub(super) fn byte_regex(src: &str, unicode: bool) -> Result<Regex, regex::Error> {
    RegexBuilder::new(src).unicode(unicode).size_limit(REGEX_SIZE_LIMIT).dfa_size_limit(REGEX_DFA_LIMIT).build()
}

/// `src` for regex-lite. Refuses a regex outside regex-lite's syntax
/// (`\p{..}`, class set operations), which the `regex` crate would accept.
pub(super) fn lite_regex(what: &str, src: &str) -> Result<regex_lite::Regex, String> {
    regex_lite::Regex::new(src).map_err(|e| format!("{what}: not regex-lite syntax: {e}"))
}

/// Most heap a compiled regex may take (its NFAs), and most its lazy DFA
/// may cache per search direction: a rule that needs more fails to
/// compile, and a pack with such a rule is refused. Rules are small; the
/// lazy DFA of one is a few KB in practice.
pub(super) const REGEX_SIZE_LIMIT: usize = 1 << 20;
pub(super) const REGEX_DFA_LIMIT: usize = 1 << 18;

/// A rule's regex as it runs.
pub(super) struct Compiled {
    /// The `\A`-anchored form for an anchored [`super::analysis::Anchor`], else the regex.
    pub(super) regex: Regex,
    pub(super) anchored: bool,
    /// How an anchored try finds the secret without capture groups.
    pub(super) split: Option<Split>,
}

/// The engine a window search runs on (see [`FAST_MIN_TEXT`]).
pub(super) enum Engine<'r> {
    Fast(&'r Regex),
    Lite(&'r regex_lite::Regex),
}

impl Engine<'_> {
    /// The first match at or after `pos` in `text[..end]`, and its group
    /// `group`.
    pub(super) fn captures_at(
        &self,
        text: &str,
        end: usize,
        pos: usize,
        group: usize,
    ) -> Option<(Range<usize>, Option<Range<usize>>)> {
        match self {
            Engine::Fast(re) => re
                .captures_at(&text.as_bytes()[..end], pos)
                .map(|c| (c.get(0).expect("group 0").range(), c.get(group).map(|g| g.range()))),
            Engine::Lite(re) => re
                .captures_at(&text[..end], pos)
                .map(|c| (c.get(0).expect("group 0").range(), c.get(group).map(|g| g.range()))),
        }
    }
}

/// How the secret of an anchored try is found without capture groups,
/// whose engine (a backtracker) costs several times the lazy DFA that finds
/// the match.
pub(super) enum Split {
    /// The secret is the whole match: group 0, or a group that spans the
    /// regex (`\b(ghp_[A-Za-z0-9]{36})\b`).
    Whole,
    /// The regex is `P(G)T`, the secret group G its last item and T only
    /// zero-width assertions: `\A(?:P)` and `\A(?:G)T`, compiled. Where P's
    /// own preferred match is followed by a match of G ending where the
    /// whole match ends, that is the secret (leftmost-first semantics try
    /// P's choices first, in P's order); elsewhere the capture engine runs.
    Parts(Regex, Regex),
}

/// The keyword automata of `rules` and the error words, with each
/// keyword's rules and whether it is an error word, by the automata's ids.
/// Keywords are numbered in the order first met, the rules' before the
/// error words. The index borrows the rules' own keywords rather than
/// copying each: compiling runs in every new instance, whose heap's peak
/// stays resident.
fn index_keywords(rules: &[CompiledRule]) -> Result<Indexed, String> {
    // FxHash: SipHash over a thousand keywords was a visible part of a
    // start-up. A pack's colliding keywords cost only its own call's fuel.
    let mut index: rustc_hash::FxHashMap<&str, usize> = rustc_hash::FxHashMap::default();
    index.reserve(rules.len() + crate::support::error_words::WORDS.len());
    let mut patterns: Vec<&str> = Vec::new();
    fn id_of<'a>(k: &'a str, index: &mut rustc_hash::FxHashMap<&'a str, usize>, patterns: &mut Vec<&'a str>) -> usize {
        *index.entry(k).or_insert_with(|| {
            patterns.push(k);
            patterns.len() - 1
        })
    }
    let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        for k in &r.keywords {
            let idx = id_of(k, &mut index, &mut patterns);
            if idx == keyword_rules.len() {
                keyword_rules.push(Vec::new());
            }
            keyword_rules[idx].push(i);
        }
    }
    // The error words ride along in the same pass: a drain reads its
    // error lines from it instead of a second pass over the middle.
    let mut error_word = vec![false; keyword_rules.len()];
    for w in crate::support::error_words::WORDS {
        let idx = id_of(w, &mut index, &mut patterns);
        if idx == keyword_rules.len() {
            keyword_rules.push(Vec::new());
            error_word.push(false);
        }
        error_word[idx] = true;
    }
    // Hits carry the automata's ids: the rules and error words move to them.
    let mapped = Keywords::build(&patterns, &index).map_err(|e| format!("keywords: {e}"))?;
    let (keyword_rules, error_word) = (mapped.remap(keyword_rules), mapped.remap(error_word));
    Ok(Indexed { keywords: mapped.keywords, keyword_rules, error_word })
}

/// What [`index_keywords`] makes: fields of [`Ruleset`].
struct Indexed {
    keywords: Keywords,
    keyword_rules: Vec<Vec<usize>>,
    error_word: Vec<bool>,
}

impl Ruleset {
    /// Compiles a rule set; errors name the rule. The rules move out of
    /// `set` (its set-wide fields stay): an instance holds each rule's text
    /// once, in its compiled form, not also in the set it came from (with a
    /// thousand tenants, each instance's heap counts).
    pub fn compile(set: &mut RuleSet) -> Result<Self, String> {
        let given = std::mem::take(&mut set.rules);
        let mut rules: Vec<CompiledRule> = Vec::with_capacity(given.len());
        let mut unanchored = Vec::new();
        // The first rule of an id decides what its spans become: a
        // platform rule comes before any tenant rule of its id, so a tenant
        // cannot relabel the platform's redactions.
        let mut replacements: Vec<(String, String)> = Vec::new();
        for (i, r) in given.into_iter().enumerate() {
            if !crate::valid_rule_id(&r.id) {
                // The id is not quoted: it is what is wrong, and may hold anything.
                return Err(format!("rule {}: {}", i + 1, crate::RULE_ID_FORM));
            }
            if let Some(with) = &r.replacement {
                // It stands where a secret was, outside the defanging, so
                // it can carry no markup and no line end.
                if !r.errors_only || !crate::valid_replacement(with) {
                    return Err(format!("rule `{}`: {}", r.id, crate::REPLACEMENT_FORM));
                }
            }
            if let Some(with) = r.replacement {
                if !rules.iter().any(|c: &CompiledRule| c.id == r.id) {
                    replacements.push((r.id.clone(), with));
                }
            }
            let allow = Lazy::new(r.allow_regexes);
            if r.keywords.is_empty() {
                unanchored.push(i);
            }
            let mut keywords = r.keywords;
            keywords.iter_mut().for_each(|k| k.make_ascii_lowercase());
            if keywords.iter().any(String::is_empty) {
                return Err(format!("rule `{}`: empty keyword", r.id));
            }
            let mut stopwords = r.stopwords;
            stopwords.iter_mut().for_each(|s| s.make_ascii_lowercase());
            rules.push(CompiledRule {
                src: r.regex,
                keywords,
                plan: OnceLock::new(),
                compiled: OnceLock::new(),
                lite: OnceLock::new(),
                id: r.id,
                // A scrubbed literal (`99812`) is no secret to seek elsewhere.
                propagate: r.kind == crate::pack_api::RuleKind::Secret && !r.errors_only,
                path: r.kind == crate::pack_api::RuleKind::Path,
                strict_only: r.strict_only,
                tenant: false,
                errors_only: r.errors_only,
                pii: r.kind == crate::pack_api::RuleKind::Pii,
                secret_group: r.secret_group as usize,
                entropy: r.entropy,
                window: if r.window == 0 { DEFAULT_WINDOW } else { r.window as usize },
                allow,
                stopwords,
            });
        }
        let Indexed { keywords, keyword_rules, error_word } = index_keywords(&rules)?;
        let global_allow = Lazy::new(set.allow_regexes.clone());
        let generic_allow = Lazy::new(set.generic.allow_regexes.clone());
        let code_shape = crate::pack_api::GenericValues { allow_regexes: Vec::new(), ..set.generic.clone() };
        // Roots are read once over the text: the smaller NFA.
        let roots = literal_automaton(
            &set.path_roots,
            false,
            MatchKind::LeftmostLongest,
            AhoCorasickKind::ContiguousNFA,
            "path roots",
        )?;
        let stopwords = set.stopwords.clone();
        Ok(Self {
            rules,
            keywords,
            keyword_rules,
            error_word,
            unanchored,
            global_allow,
            generic_allow,
            code_shape,
            global_stop: OnceLock::new(),
            stopwords,
            roots,
            error: Mutex::new(None),
            replacements,
        })
    }

    /// What a span of rule `id` becomes: its replacement, or
    /// `[REDACTED:<id>]`.
    pub fn replacement(&self, id: &str) -> String {
        match self.replacements.iter().find(|(r, _)| r == id) {
            Some((_, with)) => with.clone(),
            None => crate::markup::redacted(id),
        }
    }

    /// How many rules it holds.
    pub fn rule_count(&self) -> usize {
        self.rules.len()
    }

    /// Marks the rules from index `from` on as the tenant's.
    pub fn mark_tenant_from(&mut self, from: usize) {
        self.rules.iter_mut().skip(from).for_each(|r| r.tenant = true);
    }

    /// Compiles every rule's regex now (pack builds and checks); the
    /// pipeline otherwise compiles each on first use. Also checks that each
    /// regex is regex-lite syntax, the rule format's dialect (see the
    /// module docs).
    pub fn compile_all(&self) -> Result<(), String> {
        for (i, l) in self.allowlists() {
            l.get().map_err(|e| i.error(e))?;
        }
        self.stopwords();
        for r in &self.rules {
            self.regexes(r);
        }
        if let Some(e) = self.error() {
            return Err(e);
        }
        for (i, l) in self.allowlists() {
            l.matches("", false).map_err(|e| i.error(e))?;
        }
        for r in &self.rules {
            lite_regex(&format!("rule `{}`", r.id), &r.src)?;
            self.lite(r);
        }
        self.error().map_or(Ok(()), Err)
    }

    /// Every allowlist, and whose it is: a rule's (`Some`), or the global
    /// and the generic list (`None`).
    fn allowlists(&self) -> impl Iterator<Item = (Whose<'_>, &Lazy)> {
        let rules = self.rules.iter().map(|r| (Whose::Rule(&r.id), &r.allow));
        rules.chain([(Whose::Global, &self.global_allow), (Whose::Generic, &self.generic_allow)])
    }

    /// The first rule that failed to compile on use, if any: the pack is
    /// unusable and the pipeline reports it as such.
    pub fn error(&self) -> Option<String> {
        self.error.lock().map(|e| e.clone()).unwrap_or(None)
    }

    /// Keeps the first compile error met on use (see [`Self::error`]).
    pub(super) fn record_error(&self, e: String) {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(e);
        }
    }

    pub(super) fn plan<'r>(&self, rule: &'r CompiledRule) -> &'r Plan {
        rule.plan.get_or_init(|| Box::new(analysis::plan(&rule.src, &rule.keywords, rule.secret_group)))
    }

    /// [`Self::regexes`] if they are already made, without making them:
    /// a short text runs them only if a long one made them.
    pub(super) fn compiled<'r>(&self, rule: &'r CompiledRule) -> Option<&'r Compiled> {
        rule.compiled.get().and_then(Option::as_deref)
    }

    pub(super) fn regexes<'r>(&self, rule: &'r CompiledRule) -> Option<&'r Compiled> {
        rule.compiled
            .get_or_init(|| {
                let what = format!("rule `{}`", rule.id);
                // An anchored rule needs only its anchored form (`\A(?:…)`
                // adds no group); a searched one only the regex.
                let plan = self.plan(rule);
                let built = match plan.anchored.as_deref() {
                    Some(a) => compile_regex(&what, a).map(|re| {
                        let split = plan.split.as_ref().and_then(|parts| match parts {
                            None => Some(Split::Whole),
                            // P holds exactly the groups before the secret's.
                            Some((p, g)) => match (compile_regex(&what, p), compile_regex(&what, g)) {
                                (Ok(p), Ok(g)) if p.captures_len() == rule.secret_group => Some(Split::Parts(p, g)),
                                _ => None,
                            },
                        });
                        Compiled { regex: re, anchored: true, split }
                    }),
                    None => {
                        compile_regex(&what, &rule.src).map(|re| Compiled { regex: re, anchored: false, split: None })
                    }
                };
                let checked = built.and_then(|c| {
                    if rule.secret_group >= c.regex.captures_len() {
                        return Err(format!("{what}: secret-group {} does not exist", rule.secret_group));
                    }
                    Ok(c)
                });
                checked.map(Box::new).map_err(|e| self.record_error(e)).ok()
            })
            .as_deref()
    }

    /// The rule's regex (or its anchored form) for regex-lite.
    pub(super) fn lite<'r>(&self, rule: &'r CompiledRule) -> Option<&'r regex_lite::Regex> {
        rule.lite
            .get_or_init(|| {
                let src = self.plan(rule).anchored.as_deref().unwrap_or(&rule.src);
                lite_regex(&format!("rule `{}`", rule.id), src).map(Box::new).map_err(|e| self.record_error(e)).ok()
            })
            .as_deref()
    }
}

/// An automaton over the non-empty `words`, or `None` when there are none.
pub(super) fn literal_automaton(
    words: &[String],
    nocase: bool,
    semantics: MatchKind,
    kind: AhoCorasickKind,
    what: &str,
) -> Result<Option<AhoCorasick>, String> {
    let words: Vec<&str> = words.iter().map(String::as_str).filter(|w| !w.is_empty()).collect();
    if words.is_empty() {
        return Ok(None);
    }
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(nocase)
        .match_kind(semantics)
        .kind(Some(kind))
        .build(words)
        .map(Some)
        .map_err(|e| format!("{what}: {e}"))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::pack_api::{Rule, RuleKind};
    use crate::stages::redact::scan::tests::both_engines;

    pub fn rule(id: &str, regex: &str, kw: &[&str], group: u32) -> Rule {
        Rule {
            id: id.into(),
            description: String::new(),
            kind: RuleKind::Secret,
            regex: regex.into(),
            keywords: kw.iter().map(|s| s.to_string()).collect(),
            secret_group: group,
            entropy: None,
            window: 0,
            allow_regexes: vec![],
            stopwords: vec![],
            strict_only: false,
            errors_only: false,
            replacement: None,
        }
    }

    pub fn set(rules: Vec<Rule>) -> RuleSet {
        RuleSet { rules, path_roots: vec!["/srv/acme".into()], ..crate::pack::empty_rule_set() }
    }

    #[test]
    fn engines_agree_on_ascii_text() {
        let rs = Ruleset::compile(&mut set(vec![
            rule("gh", r"\b(ghp_[A-Za-z0-9]{8})\b", &["ghp_"], 1),
            rule("env", r#"(?i)(?:password|token)["']?\s*[:=]\s*["']?([^\s"',;]{6,20})"#, &["password", "token"], 1),
            rule("ini", r"(?im)^\s*[a-z_]*secret\s*=\s*(\S{6,})\s*$", &["secret"], 1),
            rule("url", r"[a-z]+://[^\s:/@]+:([^\s/@]+)@", &["://"], 1),
            rule("ctx", r"(?i)\[api\][\s\S]{0,60}?key\s*=\s*([A-Za-z0-9]{8})\b", &["[api]"], 1),
        ]))
        .unwrap();
        let texts = [
            "TOKEN=ghp_abcd1234 and ghp_abcd1234 again",
            "x password: 'hunter2hunter' y; token=ab",
            "[db]\n  MY_SECRET = s3cr3tvalue\nsecret=short\n",
            "db at postgres://app:pa55word@db:5432/x and https://u:p@h",
            "[api]\nname = x\nKEY = qkVwZmRt\n",
            "password=ghp_abcd1234,token=\"zqzkzwzr\"",
        ];
        for text in texts {
            let (lite, fast) = both_engines(&rs, text);
            assert!(!lite.is_empty(), "{text:?}");
            assert_eq!(fast, lite, "{text:?}");
        }
        // Each engine's regexes compiled, so both ran.
        assert!(rs.rules.iter().all(|r| r.lite.get().is_some() && r.compiled.get().is_some()));
    }

    #[test]
    fn short_ascii_text_after_a_long_one_finds_what_regex_lite_finds() {
        // A short ASCII text runs the rules a long text compiled for the
        // `regex` crate on them (a decoded candidate in a stream, say):
        // what it finds must not depend on which texts came before.
        let s = set(vec![
            rule("gh", r"\b(ghp_[A-Za-z0-9]{8})\b", &["ghp_"], 1),
            rule("env", r#"(?i)(?:password|token)["']?\s*[:=]\s*["']?([^\s"',;]{6,20})"#, &["password", "token"], 1),
            rule("url", r"[a-z]+://[^\s:/@]+:([^\s/@]+)@", &["://"], 1),
            rule("ctx", r"(?i)\[api\][\s\S]{0,60}?key\s*=\s*([A-Za-z0-9]{8})\b", &["[api]"], 1),
        ]);
        let texts = [
            "TOKEN=ghp_abcd1234 and ghp_abcd1234 again",
            "db at postgres://app:pa55word@db:5432/x and https://u:p@h",
            "https://registry.npmjs.org/@scope/name and https://h/x",
            "[api]\nname = x\nKEY = qkVwZmRt\n",
            "password=ghp_abcd1234,token=\"zqzkzwzr\"",
            "token: caf\u{e9}-not-ascii password=hunter2hunter",
        ];
        let bounds = |rs: &Ruleset, t: &str| rs.scan(t, &[]).iter().map(|s| (s.start, s.end)).collect::<Vec<_>>();
        let rs = Ruleset::compile(&mut s.clone()).unwrap();
        let before: Vec<_> = texts.iter().map(|t| bounds(&rs, t)).collect();
        assert!(rs.rules.iter().all(|r| r.compiled.get().is_none()), "short texts ran on regex-lite");
        // The non-ASCII text first: a multi-line rule's match could reach
        // any byte after its hit, so one after them keeps them on regex-lite.
        let mut in_long = texts.to_vec();
        in_long.rotate_right(1);
        let long = format!("{}\n{}", in_long.join("\n"), ".".repeat(FAST_MIN_TEXT));
        assert!(!bounds(&rs, &long).is_empty());
        assert!(rs.rules.iter().all(|r| r.compiled.get().is_some_and(Option::is_some)), "the long text compiled them");
        // All but the URLs without a password hold a secret.
        assert_eq!(before.iter().filter(|b| !b.is_empty()).count(), texts.len() - 1);
        for (t, want) in texts.iter().zip(&before) {
            assert_eq!(&bounds(&rs, t), want, "{t:?}");
        }
    }

    #[test]
    fn engines_agree_on_text_with_non_ascii_lines() {
        // Long text with some non-ASCII lines runs the `regex` crate on its
        // ASCII lines and regex-lite where a match could reach a non-ASCII
        // byte: the same spans as regex-lite alone.
        let rs = Ruleset::compile(&mut set(vec![
            rule("gh", r"\b(ghp_[A-Za-z0-9]{8})\b", &["ghp_"], 1),
            rule(
                "env",
                r#"(?i)(?:password|token)["']?[ \t]*[:=][ \t]*["']?([^\s"',;]{6,20})"#,
                &["password", "token"],
                1,
            ),
            rule("any", r"pw=(\S{1,8})", &["pw="], 1),
            rule("ml", r"(?s)BEGIN(.{4,40}?)END", &["begin"], 1),
        ]))
        .unwrap();
        let texts = [
            "✅ ok TOKEN=ghp_abcd1234 done\nplain password=hunter2hunter\n",
            "pw=éééééééééé and pw=qkvwzmrtpx\n│ box │ token: 'zqzkzwzré'\n",
            "password=ascii-only-1\n🚀 password=with-émoji\nBEGIN ab 漢字 cd END\nBEGIN plain END\n",
        ];
        for text in texts {
            let (lite, fast) = both_engines(&rs, text);
            assert!(!lite.is_empty(), "{text:?}");
            assert_eq!(fast, lite, "{text:?}");
        }
        // The ASCII lines did run on the `regex` crate.
        assert!(rs.rules[1].compiled.get().is_some_and(Option::is_some));
    }

    #[test]
    fn non_ascii_text_runs_on_regex_lite() {
        // Counts are characters, long text or not: the `regex` crate runs
        // only on ASCII text, where bytes are characters.
        let rs = Ruleset::compile(&mut set(vec![rule("pw", r"pw=([^\s]{1,3})", &["pw="], 1)])).unwrap();
        let text = "pw=éééé end";
        let long = format!("{text}\n{}", ".".repeat(FAST_MIN_TEXT));
        for t in [text, long.as_str()] {
            let spans = rs.scan(t, &[]);
            assert_eq!(spans.iter().map(|s| &t[s.start..s.end]).collect::<Vec<_>>(), ["ééé"]);
        }
        assert!(rs.rules[0].compiled.get().is_none(), "the regex crate never ran");
        // A non-ASCII character in a class, for the `regex` crate: compiled
        // with Unicode on.
        assert!(compile_regex("x", r"pw=([^é\s]+)").is_ok());
        assert!(byte_regex(r"pw=([^é\s]+)", false).is_err());
    }

    #[test]
    fn bad_regex_names_the_rule() {
        let err =
            Ruleset::compile(&mut set(vec![rule("broken", "(", &["x"], 0)])).unwrap().compile_all().err().unwrap();
        assert!(err.contains("broken"), "{err}");
        // The `regex` crate takes `\p{L}`; the rule format does not.
        let err = Ruleset::compile(&mut set(vec![rule("unicode", r"x(\p{L}+)", &["x"], 1)]))
            .unwrap()
            .compile_all()
            .err()
            .unwrap();
        assert!(err.contains("unicode") && err.contains("not regex-lite syntax"), "{err}");
    }

    #[test]
    fn bad_allowlist_names_its_list() {
        let mut bad = rule("listed", r"k=(\w+)", &["k="], 1);
        bad.allow_regexes = vec!["(".into()];
        let err = Ruleset::compile(&mut set(vec![bad.clone()])).unwrap().compile_all().err().unwrap();
        assert!(err.starts_with("rule `listed` allowlist: "), "{err}");
        // Met on use, in a scan: the pack reports it as unusable.
        let rs = Ruleset::compile(&mut set(vec![bad])).unwrap();
        rs.scan("k=abcdef", &[]);
        assert!(rs.error().is_some_and(|e| e.starts_with("rule `listed` allowlist: ")), "{:?}", rs.error());
        let mut global = set(vec![]);
        global.allow_regexes = vec!["(".into()];
        let err = Ruleset::compile(&mut global).unwrap().compile_all().err().unwrap();
        assert!(err.starts_with("global allowlist: "), "{err}");
        let mut generic = set(vec![]);
        generic.generic.allow_regexes = vec!["[".into()];
        let err = Ruleset::compile(&mut generic).unwrap().compile_all().err().unwrap();
        assert!(err.starts_with("generic allowlist: "), "{err}");
    }
}
