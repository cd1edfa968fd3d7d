//! A `[[rules]]` entry: the WIT's `rule`, deserialized as itself, plus the
//! keys only the builder reads.
//!
//! `examples` and `counter_examples` are not part of the WIT (a pack never
//! serves them), so they are taken out of the entry as it is read and every
//! other key goes to `pack_api::Rule`'s own `Deserialize`, which refuses
//! unknown keys. `#[serde(flatten)]` would not do: it does not combine with
//! `deny_unknown_fields`. The entry is read straight from the TOML
//! deserializer, not through an intermediate table, so each error keeps the
//! position of the key or value it is about.

use std::fmt;
use std::sync::OnceLock;

use serde::de::value::StringDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use result_sanitizer_rule_engine::pack_api as g;

/// One `[[rules]]` entry.
#[derive(Debug, Clone)]
pub struct RuleEntry {
    /// The rule, as the pack serves it.
    pub rule: g::Rule,
    /// Texts the rule must redact (checked at build time only).
    pub examples: Vec<String>,
    /// Texts the rule must leave alone (checked at build time only).
    pub counter_examples: Vec<String>,
}

/// Keys of an entry that are not fields of the WIT `rule`.
const BUILD_ONLY: [&str; 2] = ["examples", "counter_examples"];

impl<'de> Deserialize<'de> for RuleEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EntryVisitor)
    }
}

struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = RuleEntry;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a rule table")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RuleEntry, A::Error> {
        let mut keys = SplitKeys { map, build_only: [None, None] };
        let rule = g::Rule::deserialize(de::value::MapAccessDeserializer::new(&mut keys))?;
        let [examples, counter_examples] = keys.build_only.map(Option::unwrap_or_default);
        Ok(RuleEntry { rule, examples, counter_examples })
    }
}

/// The entry's map as `g::Rule` sees it: the build-only keys are read into
/// `build_only` and skipped.
struct SplitKeys<A> {
    map: A,
    build_only: [Option<Vec<String>>; 2],
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for SplitKeys<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, mut seed: K) -> Result<Option<K::Value>, A::Error> {
        loop {
            match self.map.next_key_seed(KeySeed(seed))? {
                None => return Ok(None),
                Some(Key::Rule(k)) => return Ok(Some(k)),
                Some(Key::BuildOnly(unused, i)) => {
                    self.build_only[i] = Some(self.map.next_value()?);
                    seed = unused;
                }
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// A key: one of `g::Rule`'s (deserialized by its seed) or a build-only one
/// (the seed handed back for the next key).
enum Key<K, V> {
    Rule(V),
    BuildOnly(K, usize),
}

/// Reads a key inside the TOML deserializer's own key step, so an unknown
/// key is reported at its line.
struct KeySeed<K>(K);

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<K> {
    type Value = Key<K, K::Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let key = String::deserialize(d)?;
        if let Some(i) = BUILD_ONLY.iter().position(|k| *k == key) {
            return Ok(Key::BuildOnly(self.0, i));
        }
        if !entry_keys().contains(&key.as_str()) {
            // `g::Rule` would refuse it too, but list every key an entry takes.
            return Err(de::Error::unknown_field(&key, entry_keys()));
        }
        self.0.deserialize(StringDeserializer::<D::Error>::new(key)).map(Key::Rule)
    }
}

/// Every key a `[[rules]]` entry takes: `g::Rule`'s fields (as its derived
/// `Deserialize` names them, from the WIT) and the build-only keys.
fn entry_keys() -> &'static [&'static str] {
    static KEYS: OnceLock<Vec<&'static str>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut fields: &'static [&'static str] = &[];
        let _ = g::Rule::deserialize(StructFields(&mut fields));
        fields.iter().copied().chain(BUILD_ONLY).collect()
    })
}

/// A deserializer that only records the field names a struct asks for.
struct StructFields<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for StructFields<'_> {
    type Error = de::value::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("field names only"))
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
        unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::g;
    use crate::RulesFile;

    const RULE: &str = "[[rules]]\nid = \"acme-token\"\nregex = '\\b(acme_[a-f0-9]{32})\\b'\nkeywords = [\"acme_\"]\n\
                        secret_group = 1\nexamples = [\"t=acme_0123456789abcdef0123456789abcdef\"]\n\
                        counter_examples = [\"acme_short\"]\n";

    fn error(text: &str) -> String {
        RulesFile::parse("r.toml", text).unwrap_err().to_string()
    }

    #[test]
    fn an_entry_is_the_wit_rule_with_its_examples_beside_it() {
        let rf = RulesFile::parse("r.toml", RULE).unwrap();
        let e = rf.rules[0].get_ref();
        assert_eq!(e.rule.kind, g::RuleKind::Secret);
        assert_eq!((e.rule.secret_group, e.rule.window, e.rule.entropy), (1, 0, None));
        assert_eq!(e.examples.len(), 1);
        assert_eq!(e.counter_examples, ["acme_short"]);
    }

    #[test]
    fn a_misspelt_key_is_refused_at_its_line_naming_the_rule_and_every_key() {
        let e = error(&format!("{RULE}secert_group = 2\n"));
        assert!(
            e.starts_with("r.toml:8: rule `acme-token`: unknown field `secert_group`, expected one of `id`,"),
            "{e}"
        );
        assert!(e.contains("`strict_only`, `errors_only`, `replacement`, `examples`, `counter_examples`"), "{e}");
    }

    #[test]
    fn kind_is_a_case_name() {
        let e = error(&format!("{RULE}kind = \"secrett\"\n"));
        assert_eq!(
            e,
            "r.toml:8: rule `acme-token`: unknown variant `secrett`, expected one of `secret`, `path`, `pii`"
        );
        let e = error(&format!("{RULE}kind = 3\n"));
        assert_eq!(e, "r.toml:8: rule `acme-token`: invalid type: integer `3`, expected a string");
    }

    #[test]
    fn a_budget_is_the_wit_budget_override() {
        let rf = RulesFile::parse("r.toml", "[[budgets]]\ntool = \"shell\"\nmax_tokens = 100\n").unwrap();
        assert_eq!(
            rf.budgets,
            [g::BudgetOverride { tool: "shell".into(), max_bytes: None, max_chars: None, max_tokens: Some(100) }]
        );
        let e = error("[[budgets]]\ntool = \"shell\"\nmax_token = 100\n");
        assert!(e.starts_with("r.toml:3: unknown field `max_token`"), "{e}");
    }
}
