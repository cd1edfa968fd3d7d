//! Options, defaults and the budget actually applied.
//!
//! Precedence, per field: the caller's option, then the pack's override for
//! this tool (an exact name beats `*`), then the defaults of the spec
//! (256 KiB, 100 000 chars with a 60 000 head and a 20 000 tail, 8 000
//! tokens). Limits below the floors here cannot hold a marker and are
//! rejected rather than silently raised.

use std::borrow::Cow;

use crate::api::{Budget, InputKind, Options, SanitizeError};
use crate::pack_api::{BudgetOverride, RuleSet};
use crate::support::code::content_type_for_path;

pub use result_sanitizer_rule_engine::options::defaults::*;

/// The content type a call declares, else the one its file name gives (a
/// source file's extension, [`content_type_for_path`]): one table for
/// every host, which passes the name and not a type of its own.
pub fn content_type(opts: &Options) -> Option<&str> {
    opts.content_type.as_deref().or_else(|| opts.file_name.as_deref().and_then(content_type_for_path))
}

/// `opts` with [`content_type`] filled in from the file name, when that
/// gives one the call did not declare (a copy only then).
pub fn with_file_type(opts: &Options) -> Cow<'_, Options> {
    match (&opts.content_type, content_type(opts)) {
        (None, Some(t)) => Cow::Owned(Options { content_type: Some(t.to_string()), ..opts.clone() }),
        _ => Cow::Borrowed(opts),
    }
}

fn override_for<'a>(rules: &'a RuleSet, tool: &str) -> (Option<&'a BudgetOverride>, Option<&'a BudgetOverride>) {
    let exact = rules.budgets.iter().find(|b| b.tool == tool);
    let any = rules.budgets.iter().find(|b| b.tool == "*");
    (exact, any)
}

/// Whether `opts` runs in lenient (documentation) mode.
pub fn lenient(opts: &Options, rules: &RuleSet) -> bool {
    opts.lenient || rules.lenient_tools.contains(&opts.tool)
}

/// Resolves and validates the budget for `opts`.
pub fn resolve(opts: &Options, rules: &RuleSet) -> Result<Budget, SanitizeError> {
    let (exact, any) = override_for(rules, &opts.tool);
    let pick = |f: fn(&BudgetOverride) -> Option<u64>| exact.and_then(f).or_else(|| any.and_then(f));
    let max_bytes = opts.max_bytes.or_else(|| pick(|b| b.max_bytes)).unwrap_or(DEFAULT_MAX_BYTES);
    let max_chars =
        opts.max_chars.or_else(|| pick(|b| b.max_chars.map(u64::from)).map(|v| v as u32)).unwrap_or(DEFAULT_MAX_CHARS);
    let max_tokens = opts
        .max_tokens
        .or_else(|| pick(|b| b.max_tokens.map(u64::from)).map(|v| v as u32))
        .unwrap_or(DEFAULT_MAX_TOKENS);
    let bad = |m: String| Err(SanitizeError::InvalidOptions(m));
    if !(MIN_MAX_BYTES..=MAX_MAX_BYTES).contains(&max_bytes) {
        return bad(format!("max-bytes must be between {MIN_MAX_BYTES} and {MAX_MAX_BYTES}, got {max_bytes}"));
    }
    if max_chars < MIN_MAX_CHARS {
        return bad(format!("max-chars must be at least {MIN_MAX_CHARS}, got {max_chars}"));
    }
    if max_tokens < MIN_MAX_TOKENS {
        return bad(format!("max-tokens must be at least {MIN_MAX_TOKENS}, got {max_tokens}"));
    }
    // Head and tail keep the default 60:20 proportion of the char budget.
    let head_chars = opts.head_chars.unwrap_or(if max_chars == DEFAULT_MAX_CHARS {
        DEFAULT_HEAD_CHARS
    } else {
        (u64::from(max_chars) * 3 / 5) as u32
    });
    let tail_chars =
        opts.tail_chars.unwrap_or(if max_chars == DEFAULT_MAX_CHARS { DEFAULT_TAIL_CHARS } else { max_chars / 5 });
    if u64::from(head_chars) + u64::from(tail_chars) > u64::from(max_chars) {
        return bad(format!("head-chars + tail-chars ({head_chars} + {tail_chars}) exceed max-chars ({max_chars})"));
    }
    if head_chars == 0 && tail_chars == 0 {
        return bad("head-chars and tail-chars cannot both be 0".into());
    }
    let markup_bytes = opts.markup_bytes.unwrap_or(max_bytes.saturating_mul(4).min(MAX_MAX_BYTES));
    if !(MIN_MAX_BYTES..=MAX_MAX_BYTES).contains(&markup_bytes) {
        return bad(format!("markup-bytes must be between {MIN_MAX_BYTES} and {MAX_MAX_BYTES}, got {markup_bytes}"));
    }
    if let Some(t) = &opts.recall_tool {
        let ok = (1..=128).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
        if !ok {
            return bad("recall-tool must be 1 to 128 letters, digits, `_`, `-` or `.`".into());
        }
    }
    if let Some(s) = &opts.slice {
        if s.limit == 0 || (s.unit == crate::api::SliceUnit::Lines && s.offset == 0) {
            return bad("a slice needs a limit above 0, and lines count from 1".into());
        }
    }
    let html = content_type(opts).is_some_and(|c| c.to_ascii_lowercase().starts_with("text/html"));
    let read_bytes = match opts.input {
        InputKind::Mcp => MAX_MCP_INPUT + 1,
        InputKind::Raw if html => max_bytes.max(markup_bytes) + 1,
        InputKind::Raw => max_bytes + 1,
    };
    // Raw text is read as head + tail (its end is where logs put their
    // verdict), a JSON document too (the pipeline closes it around the
    // drained middle); MCP and HTML documents are read whole, under
    // read-bytes, as a head and tail of them would not be one document.
    let head_tail = opts.input == InputKind::Raw && !html;
    let (head_bytes, tail_bytes) = if head_tail { head_tail_bytes(max_bytes) } else { (0, 0) };
    if opts.gap.is_some() && (!head_tail || opts.slice.is_some()) {
        return bad("a gap (head + tail input) is for raw output, not a declared HTML document, without a slice".into());
    }
    Ok(Budget {
        max_bytes,
        max_chars,
        head_chars,
        tail_chars,
        max_tokens,
        markup_bytes,
        read_bytes,
        head_bytes,
        tail_bytes,
    })
}

/// How a byte cap splits between the head and the tail of an output read
/// as both: three quarters before the middle, one after.
pub(crate) fn head_tail_bytes(max_bytes: u64) -> (u64, u64) {
    let head = max_bytes / 4 * 3;
    (head, max_bytes - head)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(b: Vec<BudgetOverride>) -> RuleSet {
        RuleSet { budgets: b, ..crate::pack::empty_rule_set() }
    }

    #[test]
    fn precedence() {
        let r = rules(vec![
            BudgetOverride { tool: "*".into(), max_bytes: Some(4096), max_chars: None, max_tokens: Some(1000) },
            BudgetOverride { tool: "grep".into(), max_bytes: None, max_chars: None, max_tokens: Some(2000) },
        ]);
        let mut o = default_options();
        o.tool = "grep".into();
        let b = resolve(&o, &r).unwrap();
        assert_eq!((b.max_bytes, b.max_tokens, b.max_chars), (4096, 2000, DEFAULT_MAX_CHARS));
        o.max_tokens = Some(300);
        assert_eq!(resolve(&o, &r).unwrap().max_tokens, 300);
        o.max_tokens = Some(10);
        assert!(matches!(resolve(&o, &r), Err(SanitizeError::InvalidOptions(_))));
    }

    #[test]
    fn recall_tool_names_a_tool_or_is_refused() {
        let r = rules(Vec::new());
        let mut o = default_options();
        o.recall_tool = Some("read_truncated_output".into());
        assert!(resolve(&o, &r).is_ok());
        for bad in ["", "read output", "x]y", "a\nb", &"x".repeat(129)] {
            o.recall_tool = Some(bad.into());
            assert!(matches!(resolve(&o, &r), Err(SanitizeError::InvalidOptions(_))), "{bad:?}");
        }
    }

    #[test]
    fn markers_name_the_recall_tool() {
        let pack = crate::pack::fixtures::pack(Vec::new());
        let text: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        let mut o = default_options();
        o.call_id = "call_1".into();
        o.recall_bytes = Some(text.len() as u64);
        o.max_chars = Some(2000);
        let shown = |o: &Options| format!("{:?}", crate::sanitize(text.as_bytes(), o, &pack).unwrap().message);
        assert!(shown(&o).contains("recall(call_id=call_1, offset="));
        o.recall_tool = Some("read_truncated_output".into());
        let t = shown(&o);
        assert!(t.contains("read_truncated_output(call_id=call_1, offset=") && !t.contains(" recall(call_id"), "{t}");
    }
}
