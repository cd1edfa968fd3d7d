//! The rules file: parsing and validating one TOML file or several joined
//! (step 1 of the crate's design), with `file:line` for each problem.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::OnceLock;

use anyhow::{anyhow, Result};
use serde::Deserialize;
use toml::Spanned;

use result_sanitizer_rule_engine::pack_api as g;
use result_sanitizer_rule_engine::CompiledPack;

use crate::rule_entry::RuleEntry;
use crate::DEFAULT_RULE_FILES;

/// The `[pack]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackMeta {
    /// Pack name.
    pub name: Option<String>,
    /// Pack version.
    pub version: Option<String>,
    /// Tenant scope (`*` = any).
    pub tenant: Option<String>,
    /// One line.
    pub description: Option<String>,
}

/// The `[allowlist]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allowlist {
    /// Regexes; a candidate secret matching one is kept.
    #[serde(default)]
    pub regexes: Vec<String>,
    /// Lower-case substrings; a candidate containing one is kept.
    #[serde(default)]
    pub stopwords: Vec<String>,
}

/// A whole rules file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesFile {
    /// Pack identity (the CLI may override it).
    #[serde(default)]
    pub pack: PackMeta,
    /// Global allowlist.
    #[serde(default)]
    pub allowlist: Allowlist,
    /// Literal tenant path roots.
    #[serde(default)]
    pub path_roots: Vec<String>,
    /// Per-tool budgets, as the WIT's `budget-override`.
    #[serde(default)]
    pub budgets: Vec<g::BudgetOverride>,
    /// Tools redacted in lenient (documentation) mode.
    #[serde(default)]
    pub lenient_tools: Vec<String>,
    /// How generic rules judge values, as the WIT's `generic-values`.
    #[serde(default)]
    pub generic: g::GenericValues,
    /// Tools whose successful results are scrubbed as error results are
    /// (`errors_only` rules); `*` for every tool.
    #[serde(default)]
    pub scrub_tools: Vec<String>,
    /// Absolute path prefixes that scrubbing leaves readable (a workspace).
    #[serde(default)]
    pub readable_roots: Vec<String>,
    /// Personal data is redacted in every result of this tenant (`pii`
    /// rules and the pipeline's detectors): `pii_tools = ["*"]`.
    #[serde(default)]
    pub pii: bool,
    /// Tools whose results have personal data redacted; `*` for every tool.
    #[serde(default)]
    pub pii_tools: Vec<String>,
    /// This tenant's internal host names, as `*.int.example.com` (any host
    /// under it) or `db.example.com` (that host): they become one scrubbing
    /// rule, `internal-domain`.
    #[serde(default)]
    pub internal_domains: Vec<String>,
    /// Platform rules this pack asks to turn off for its tenant; only ids
    /// that its platform-signed manifest grants (`pack sign --may-relax`)
    /// take effect.
    #[serde(default)]
    pub relax: Vec<String>,
    /// Rules (the WIT's `rule`, plus examples), with their position in the
    /// file.
    #[serde(default)]
    pub rules: Vec<Spanned<RuleEntry>>,
    /// Where each of `rules` was written: `file:line` (parallel to `rules`;
    /// a rule's span is a position in its own file).
    #[serde(skip)]
    origins: Vec<String>,
}

/// Problems found in a rules file, each with its `file:line`.
#[derive(Debug)]
pub struct RulesError {
    /// `file:line: message`, one per problem.
    pub problems: Vec<String>,
}

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.problems.join("\n"))
    }
}

impl std::error::Error for RulesError {}

fn line_of(text: &str, byte: usize) -> usize {
    text.as_bytes()[..byte.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// Identity of a pack being built.
#[derive(Debug, Clone)]
pub struct PackIdentity {
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Tenant scope.
    pub tenant: String,
    /// Description.
    pub description: String,
}

impl RulesFile {
    /// Parses `text` (named `file` in errors) and validates every rule.
    pub fn parse(file: &str, text: &str) -> Result<Self, RulesError> {
        Self::parse_files(&[(file, text)])
    }

    /// The default rules ([`DEFAULT_RULE_FILES`]), parsed and validated.
    pub fn defaults() -> Result<Self, RulesError> {
        Self::parse_files(DEFAULT_RULE_FILES)
    }

    /// Parses several files (name, text) as one rules file: their rules in
    /// the order given, file after file, and their lists (allowlist, roots,
    /// budgets, tools, `[generic]` shapes) joined. `[pack]` and the
    /// `[generic]` code thresholds may be set by one file only. Every
    /// problem names its file and line.
    pub fn parse_files(files: &[(&str, &str)]) -> Result<Self, RulesError> {
        let mut problems = Vec::new();
        let mut parts = Vec::new();
        for &(file, text) in files {
            match toml::from_str::<RulesFile>(text) {
                Ok(part) => parts.push((file, text, part)),
                Err(e) => {
                    let at = e.span().map(|s| s.start);
                    let line = at.map_or(0, |a| line_of(text, a));
                    let rule =
                        at.and_then(|a| rule_id_at(text, a)).map(|id| format!("rule `{id}`: ")).unwrap_or_default();
                    problems.push(format!("{file}:{line}: {rule}{}", e.message()));
                }
            }
        }
        if !problems.is_empty() {
            return Err(RulesError { problems });
        }
        let mut parsed = RulesFile::empty();
        let mut set_by: [Option<&str>; 2] = [None, None]; // [pack], [generic] code_min_*
        for (file, text, part) in parts {
            problems.extend(part.file_problems(file));
            let PackMeta { name, version, tenant, description } = &part.pack;
            let g = &part.generic;
            let sets = [
                name.is_some() || version.is_some() || tenant.is_some() || description.is_some(),
                g.code_min_length != 0 || g.code_min_entropy != 0.0 || g.code_min_classes != 0,
            ];
            for (i, what) in ["[pack]", "[generic] code_min_*"].into_iter().enumerate() {
                if sets[i] {
                    match set_by[i] {
                        Some(first) => problems.push(format!("{file}: {what} is already set in {first}")),
                        None => set_by[i] = Some(file),
                    }
                }
            }
            parsed.origins.extend(part.rules.iter().map(|r| format!("{file}:{}", line_of(text, r.span().start))));
            parsed.absorb(part);
        }
        let mut ids = BTreeMap::new();
        for (r, origin) in parsed.rules.iter().zip(&parsed.origins) {
            let at = |m: String| format!("{origin}: rule `{}`: {m}", r.get_ref().rule.id);
            for p in parsed.check_rule(r.get_ref()) {
                problems.push(at(p));
            }
            match ids.entry(&r.get_ref().rule.id) {
                Entry::Occupied(first) => problems.push(at(format!("duplicate id (first at {})", first.get()))),
                Entry::Vacant(v) => {
                    v.insert(origin);
                }
            }
        }
        if problems.is_empty() {
            Ok(parsed)
        } else {
            Err(RulesError { problems })
        }
    }

    /// A rules file with nothing in it.
    fn empty() -> Self {
        toml::from_str("").expect("an empty rules file parses")
    }

    /// `part`'s contents added to this file's (see [`Self::parse_files`];
    /// `[pack]` and the code thresholds are taken from the file that sets them).
    fn absorb(&mut self, part: RulesFile) {
        let p = part.pack;
        self.pack.name = self.pack.name.take().or(p.name);
        self.pack.version = self.pack.version.take().or(p.version);
        self.pack.tenant = self.pack.tenant.take().or(p.tenant);
        self.pack.description = self.pack.description.take().or(p.description);
        self.allowlist.regexes.extend(part.allowlist.regexes);
        self.allowlist.stopwords.extend(part.allowlist.stopwords);
        self.path_roots.extend(part.path_roots);
        self.budgets.extend(part.budgets);
        self.lenient_tools.extend(part.lenient_tools);
        let g = part.generic;
        self.generic.allow_regexes.extend(g.allow_regexes);
        if g.code_min_length != 0 || g.code_min_entropy != 0.0 || g.code_min_classes != 0 {
            self.generic.code_min_length = g.code_min_length;
            self.generic.code_min_entropy = g.code_min_entropy;
            self.generic.code_min_classes = g.code_min_classes;
        }
        self.scrub_tools.extend(part.scrub_tools);
        self.readable_roots.extend(part.readable_roots);
        self.pii |= part.pii;
        self.pii_tools.extend(part.pii_tools);
        self.internal_domains.extend(part.internal_domains);
        self.relax.extend(part.relax);
        self.rules.extend(part.rules);
    }

    /// Problems of one file's settings (everything but its rules).
    fn file_problems(&self, file: &str) -> Vec<String> {
        let mut problems = Vec::new();
        let global = g::RuleSet {
            rules: vec![],
            allow_regexes: self.allowlist.regexes.clone(),
            stopwords: self.allowlist.stopwords.clone(),
            path_roots: self.path_roots.clone(),
            budgets: vec![],
            lenient_tools: vec![],
            generic: self.generic.clone(),
            scrub_tools: vec![],
            readable_roots: vec![],
            relax: vec![],
            pii_tools: vec![],
        };
        if let Err(e) = result_sanitizer_rule_engine::check_rule_set(&global) {
            problems.push(format!("{file}: {e}"));
        }
        for (i, d) in self.internal_domains.iter().enumerate() {
            let name = d.strip_prefix("*.").unwrap_or(d);
            let ok = name.split('.').count() >= 2
                && name.split('.').all(|l| !l.is_empty() && l.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-'));
            if !ok {
                problems
                    .push(format!("{file}: internal_domains {}: write `*.example.com` or `host.example.com`", i + 1));
            }
        }
        for (i, id) in self.relax.iter().enumerate() {
            if !result_sanitizer_rule_engine::valid_rule_id(id) {
                problems.push(format!("{file}: relax {}: {}", i + 1, result_sanitizer_rule_engine::RULE_ID_FORM));
            }
        }
        for b in &self.budgets {
            if b.tool.is_empty() {
                problems.push(format!("{file}: budgets: empty tool name (use \"*\" for every tool)"));
            }
        }
        problems
    }

    /// Rules that add nothing to another rule, for `pack check`, each as
    /// `file:line: rule `id`: ...`:
    ///
    /// - a *duplicate regex*: the same regex text as an earlier rule;
    /// - a *shadowed* rule: another rule has the same keywords (as a set) and
    ///   redacts every example of this one at least as widely (each span
    ///   this rule finds in its own examples lies inside a span the other
    ///   finds). Of two rules that shadow each other, the later is named.
    pub fn overlaps(&self) -> Vec<String> {
        let origin = |i: usize| self.origins.get(i).cloned().unwrap_or_else(|| format!("rule {}", i + 1));
        let id = |i: usize| &self.rules[i].get_ref().rule.id;
        let mut problems = Vec::new();
        let mut regexes = HashMap::new();
        let mut duplicate = BTreeSet::new();
        for (i, r) in self.rules.iter().enumerate() {
            if let Some(&first) = regexes.get(&r.get_ref().rule.regex) {
                duplicate.insert((first, i));
                problems.push(format!(
                    "{}: rule `{}`: duplicate regex: the same as rule `{}` ({})",
                    origin(i),
                    id(i),
                    id(first),
                    origin(first)
                ));
            } else {
                regexes.insert(&r.get_ref().rule.regex, i);
            }
        }
        let mut groups: BTreeMap<BTreeSet<&str>, Vec<usize>> = Default::default();
        for (i, r) in self.rules.iter().enumerate() {
            groups.entry(r.get_ref().rule.keywords.iter().map(String::as_str).collect()).or_default().push(i);
        }
        for members in groups.values().filter(|m| m.len() > 1) {
            let compiled: Vec<Option<CompiledPack>> =
                members.iter().map(|&i| self.single_rule_pack(&self.rules[i].get_ref().rule).ok()).collect();
            // Spans each rule finds in each member's examples.
            let spans = |k: usize, text: &str| -> Vec<(u32, u32)> {
                compiled[k].as_ref().map_or_else(Vec::new, |c| {
                    c.findings(text)
                        .into_iter()
                        .filter(|f| f.rule_id == *id(members[k]))
                        .map(|f| (f.start, f.end))
                        .collect()
                })
            };
            let covers = |a: usize, b: usize| {
                self.rules[members[b]].get_ref().examples.iter().all(|ex| {
                    let outer = spans(a, ex);
                    spans(b, ex).iter().all(|&(s, e)| outer.iter().any(|&(os, oe)| os <= s && e <= oe))
                })
            };
            for b in 0..members.len() {
                let shadow = (0..members.len()).find(|&a| {
                    a != b
                        && !duplicate.contains(&(members[a].min(members[b]), members[a].max(members[b])))
                        && covers(a, b)
                        && (members[a] < members[b] || !covers(b, a))
                });
                if let Some(a) = shadow {
                    let (a, b) = (members[a], members[b]);
                    problems.push(format!(
                        "{}: rule `{}`: shadowed by rule `{}` ({}): the same keywords, and it redacts every example of this one",
                        origin(b),
                        id(b),
                        id(a),
                        origin(a)
                    ));
                }
            }
        }
        problems
    }

    /// One rule compiled on its own, under this file's allowlist (and its
    /// `[generic]` values for a generic rule), all its regexes compiled.
    fn single_rule_pack(&self, r: &g::Rule) -> Result<CompiledPack, String> {
        let set = g::RuleSet {
            rules: vec![r.clone()],
            allow_regexes: self.allowlist.regexes.clone(),
            stopwords: self.allowlist.stopwords.clone(),
            path_roots: vec![],
            budgets: vec![],
            lenient_tools: vec![],
            // Only a generic rule reads the generic values: the others skip
            // compiling them (a pack build checks every default rule).
            generic: if r.strict_only { self.generic.clone() } else { Default::default() },
            scrub_tools: vec![],
            readable_roots: vec![],
            relax: vec![],
            pii_tools: vec![],
        };
        CompiledPack::from_rule_set(set).and_then(|c| c.check_all().map(|()| c))
    }

    /// Problems of one rule (empty when it is sound).
    fn check_rule(&self, entry: &RuleEntry) -> Vec<String> {
        let r = &entry.rule;
        let mut p = Vec::new();
        if r.id.is_empty()
            || r.id.len() > 64
            || !r.id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            p.push("id must be 1 to 64 lower-case letters, digits and '-'".into());
        }
        if r.keywords.is_empty() {
            p.push("needs at least one keyword: the regex runs only near keyword hits".into());
        }
        for k in &r.keywords {
            if k.is_empty() || *k != k.to_ascii_lowercase() {
                p.push(format!("keyword {k:?} must be non-empty and lower case"));
            }
        }
        if entry.examples.is_empty() {
            p.push("needs at least one example it must redact".into());
        }
        if r.replacement.is_some() && !r.errors_only {
            p.push("a replacement is for errors_only (scrubbing) rules; secrets become [REDACTED:<id>]".into());
        }
        if entry.counter_examples.is_empty() {
            p.push("needs at least one counter_example it must leave alone".into());
        }
        // One compiled pack per rule, its regexes all compiled, checks every
        // example.
        let compiled = match self.single_rule_pack(r) {
            Ok(c) => c,
            Err(e) => {
                p.push(e);
                return p;
            }
        };
        let finds = |text: &str| compiled.findings(text).iter().any(|s| s.rule_id == r.id);
        for (i, ex) in entry.examples.iter().enumerate() {
            if !finds(ex) {
                p.push(format!("example {} is not redacted by this rule", i + 1));
            }
        }
        for (i, ex) in entry.counter_examples.iter().enumerate() {
            if finds(ex) {
                p.push(format!("counter_example {} is redacted by this rule", i + 1));
            }
        }
        p
    }

    /// This file's rules, allowlist, roots and budgets added to the default
    /// pack's (`rules/default/`, embedded), for a pack that must carry the
    /// defaults itself: one for any tenant (`*`), which can stand as a
    /// platform's floor, or one built `--with-defaults`. The checks of
    /// [`Self::on_floor`] apply.
    pub fn over_defaults(self) -> Result<Self, RulesError> {
        let mut base = Self::defaults()?;
        self.check_over(base.rules.iter().map(|r| r.get_ref().rule.id.as_str()).collect())?;
        base.pack = self.pack;
        base.allowlist.regexes.extend(self.allowlist.regexes);
        base.allowlist.stopwords.extend(self.allowlist.stopwords);
        base.path_roots.extend(self.path_roots);
        base.budgets = self.budgets;
        base.lenient_tools = self.lenient_tools;
        base.relax = self.relax;
        base.scrub_tools.extend(self.scrub_tools);
        base.readable_roots.extend(self.readable_roots);
        base.pii |= self.pii;
        base.pii_tools.extend(self.pii_tools);
        base.internal_domains.extend(self.internal_domains);
        base.generic.allow_regexes.extend(self.generic.allow_regexes);
        base.rules.extend(self.rules);
        base.origins.extend(self.origins);
        Ok(base)
    }

    /// This file as a tenant's pack on the platform's floor: its own rules
    /// only, which is how `pack build` builds a pack scoped to one tenant.
    /// Every host serves the platform pack (the default rules unless
    /// configured) under each tenant's, and drops a tenant's copy of a
    /// platform rule, so copying the ~900 default rules into each tenant's
    /// pack added ~280 KB to the file and ~0.5 MiB to each live tenant
    /// (docs/benchmarks.md) for no change in what is found. The file is held
    /// to what it would be over the defaults: no id of a default rule, no
    /// code thresholds of its own (the platform's apply).
    pub fn on_floor(self) -> Result<Self, RulesError> {
        // The ids alone, read once: the files are held to every check by
        // the tests, and [`Self::defaults`] took most of a second per pack.
        static IDS: OnceLock<Result<BTreeSet<String>, String>> = OnceLock::new();
        let ids = IDS.get_or_init(|| {
            let mut ids = BTreeSet::new();
            for (file, text) in DEFAULT_RULE_FILES {
                let part = toml::from_str::<RulesFile>(text).map_err(|e| format!("{file}: {e}"))?;
                ids.extend(part.rules.into_iter().map(|r| r.into_inner().rule.id));
            }
            Ok(ids)
        });
        let ids = ids.as_ref().map_err(|e| RulesError { problems: vec![e.clone()] })?;
        self.check_over(ids.iter().map(String::as_str).collect())?;
        Ok(self)
    }

    /// The checks of a file laid over the default rules, whose ids are
    /// `ids`: no rule with one of them, no `[generic] code_min_*`.
    fn check_over(&self, ids: BTreeSet<&str>) -> Result<(), RulesError> {
        let mut problems: Vec<String> = self
            .rules
            .iter()
            .filter(|r| ids.contains(r.get_ref().rule.id.as_str()))
            .map(|r| {
                let id = &r.get_ref().rule.id;
                format!("rule `{id}` has the id of a default rule; rename it or build with --no-defaults")
            })
            .collect();
        // A tenant adds shapes of its code; the code thresholds are the
        // defaults' (a file that sets its own is refused, not ignored).
        let g = &self.generic;
        if g.code_min_length != 0 || g.code_min_entropy != 0.0 || g.code_min_classes != 0 {
            problems
                .push("[generic] code_min_* are the default pack's; remove them or build with --no-defaults".into());
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(RulesError { problems })
        }
    }

    /// The rule set as the pipeline's type (for native use and tests).
    pub fn to_rule_set(&self) -> g::RuleSet {
        g::RuleSet {
            rules: self.rules.iter().map(|r| r.get_ref().rule.clone()).chain(self.internal_domain_rule()).collect(),
            allow_regexes: self.allowlist.regexes.clone(),
            stopwords: self.allowlist.stopwords.clone(),
            path_roots: self.path_roots.clone(),
            budgets: self.budgets.clone(),
            lenient_tools: self.lenient_tools.clone(),
            generic: self.generic.clone(),
            scrub_tools: self.scrub_tools.clone(),
            readable_roots: self.readable_roots.clone(),
            relax: self.relax.clone(),
            pii_tools: self.pii_tools(),
        }
    }

    /// The tools whose results have personal data redacted: `*` for
    /// `pii = true`, and `pii_tools`.
    fn pii_tools(&self) -> Vec<String> {
        let mut tools: Vec<String> = if self.pii { vec!["*".into()] } else { Vec::new() };
        for t in &self.pii_tools {
            if !tools.contains(t) {
                tools.push(t.clone());
            }
        }
        tools
    }

    /// The `internal-domain` rule made of `internal_domains`: a host name
    /// under one of them (or equal to one) in error output.
    fn internal_domain_rule(&self) -> Option<g::Rule> {
        if self.internal_domains.is_empty() {
            return None;
        }
        let label = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
        let alts: Vec<String> = self
            .internal_domains
            .iter()
            .map(|d| match d.strip_prefix("*.") {
                Some(suffix) => format!("(?:{label}\\.)+{}", regex_lite::escape(&suffix.to_ascii_lowercase())),
                None => regex_lite::escape(&d.to_ascii_lowercase()),
            })
            .collect();
        Some(g::Rule {
            id: "internal-domain".into(),
            description: "A host name under this pack's internal domains (internal_domains)".into(),
            kind: g::RuleKind::Secret,
            regex: format!("(?i)\\b((?:{}))\\b", alts.join("|")),
            keywords: self
                .internal_domains
                .iter()
                .map(|d| d.strip_prefix("*.").unwrap_or(d).to_ascii_lowercase())
                .collect(),
            secret_group: 1,
            entropy: None,
            window: 256,
            allow_regexes: vec![],
            stopwords: vec![],
            strict_only: false,
            errors_only: true,
            replacement: None,
        })
    }

    /// Identity from `[pack]`, with overrides.
    pub fn identity(&self, name: Option<&str>, version: Option<&str>, tenant: Option<&str>) -> Result<PackIdentity> {
        let pick = |o: Option<&str>, f: &Option<String>, what: &str| -> Result<String> {
            o.map(str::to_string)
                .or_else(|| f.clone())
                .ok_or_else(|| anyhow!("pack {what} missing: give --{what} or set it in [pack]"))
        };
        Ok(PackIdentity {
            name: pick(name, &self.pack.name, "name")?,
            version: pick(version, &self.pack.version, "version")?,
            tenant: pick(tenant, &self.pack.tenant, "tenant")?,
            description: self.pack.description.clone().unwrap_or_default(),
        })
    }
}

/// The id of the `[[rules]]` entry that byte `at` of `text` falls in, if it
/// has one (names the rule in an error the TOML deserializer reports).
fn rule_id_at(text: &str, at: usize) -> Option<String> {
    let doc = toml::de::DeTable::parse(text).ok()?;
    let rules = doc.get_ref().get("rules")?.get_ref().as_array()?;
    rules.iter().find_map(|r| {
        let table = r.get_ref().as_table()?;
        // A `[[rules]]` table's span is its header: extend it to its last value.
        let end = table.values().map(|v| v.span().end).fold(r.span().end, usize::max);
        (r.span().start..end).contains(&at).then_some(())?;
        Some(table.get("id")?.get_ref().as_str()?.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::RulesFile;

    const OWN: &str = "[[rules]]\nid = \"acme-token\"\nregex = '\\b(acme_[a-f0-9]{8})\\b'\nkeywords = [\"acme_\"]\n\
                       secret_group = 1\nexamples = [\"acme_0123abcd\"]\ncounter_examples = [\"acme_x\"]\n";

    #[test]
    fn on_the_floor_a_file_keeps_its_own_rules_and_is_held_to_the_defaults_checks() {
        let n = RulesFile::defaults().unwrap().rules.len();
        let own = RulesFile::parse("t.toml", OWN).unwrap();
        assert_eq!(own.clone().on_floor().unwrap().rules.len(), 1);
        assert_eq!(own.over_defaults().unwrap().rules.len(), n + 1);
        // Refused alike on the floor and over the defaults: a default
        // rule's id, code thresholds of its own.
        let clash = OWN.replace("acme-token", "aws-access-key-id");
        let thresholds = format!("[generic]\ncode_min_length = 3\n{OWN}");
        for (file, want) in [(clash, "has the id of a default rule"), (thresholds, "code_min_* are the default pack's")]
        {
            for e in [
                RulesFile::parse("t.toml", &file).unwrap().on_floor().unwrap_err(),
                RulesFile::parse("t.toml", &file).unwrap().over_defaults().unwrap_err(),
            ] {
                assert!(e.to_string().contains(want), "{e}");
            }
        }
    }
}
