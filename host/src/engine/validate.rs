//! Validation of everything the pipeline returns, before it is passed on.
//!
//! The pipeline is a guest like any other: the host does not take its word
//! for anything it can check. A message must be JSON of the requested shape
//! and carry the record returned; the record may name only the pack, its
//! rules and stages from the WIT enum (so no text from the input rides in it); the
//! budget applied may not exceed the budget asked for, and the model-visible
//! text must fit it; content left out must be an MCP result's. A round's
//! shares must fit the round, a `redact` step must consume a sane number of
//! bytes.
//!
//! Fitting the token budget is proved cheaply when possible (the byte
//! length, or the rule engine's upper bound compiled into the host) and
//! otherwise recounted natively; the rule engine's items this needs are
//! gathered at the end of this file.

use super::classify::guest_error;
use super::packs::LoadedPack;
use crate::bindings::pipeline::exports::result_sanitizer::core::result_sanitizer as api;
use crate::error::{Error, Result};

/// The two packs a pipeline instance served a call with.
#[derive(Clone, Copy)]
pub struct Packs<'a> {
    /// The platform pack.
    pub platform: &'a LoadedPack,
    /// The tenant's pack (the platform's, when there is none).
    pub tenant: &'a LoadedPack,
}

/// Checks a pipeline result before the host passes it on: the message is
/// JSON of the requested shape, the record inside it is the record
/// returned, the model-visible text is within the budget the host asked
/// for (recounted by the host when the byte length does not prove it), and
/// the record names only the packs, their rules and stages of the WIT enum.
pub fn validate(opts: &api::Options, out: &api::Sanitized, packs: Packs<'_>) -> Result<()> {
    validate_with(opts, out, packs, true)
}

/// [`validate`]; `recount` makes the host count the output's tokens itself
/// when the byte length does not prove the budget. A `Sanitizer` recounts
/// for a pipeline loaded from bytes; the embedded pipeline was built with
/// the host binary and is trusted as much as it (the recount would cost
/// the CLI the ~100 ms of building tokenizer tables natively).
pub(crate) fn validate_with(opts: &api::Options, out: &api::Sanitized, packs: Packs<'_>, recount: bool) -> Result<()> {
    let (pack, platform) = (packs.tenant, packs.platform);
    let bad = |m: &str| Err(Error::InvalidOutput(m.into()));
    let v: serde_json::Value = match serde_json::from_str(&out.message) {
        Ok(v) => v,
        Err(_) => return bad("message is not JSON"),
    };
    let (texts, record) = match opts.format {
        api::OutputFormat::Mcp => {
            let Some(content) = v.get("content").and_then(|c| c.as_array()) else { return bad("no content array") };
            if v.get("isError").and_then(|b| b.as_bool()) != Some(out.is_error) {
                return bad("isError disagrees with the result");
            }
            let texts: Vec<&str> = content.iter().filter_map(|b| b.get("text").and_then(|t| t.as_str())).collect();
            (texts, v.pointer("/_meta/result-sanitizer~1record"))
        }
        api::OutputFormat::Openai => {
            let Some(t) = v.pointer("/message/content").and_then(|t| t.as_str()) else {
                return bad("no message.content string");
            };
            (vec![t], v.get("record"))
        }
        api::OutputFormat::Anthropic => {
            let Some(content) = v.pointer("/message/content").and_then(|c| c.as_array()) else {
                return bad("no message.content array");
            };
            let texts: Vec<&str> = content.iter().filter_map(|b| b.get("text").and_then(|t| t.as_str())).collect();
            (texts, v.get("record"))
        }
    };
    let Some(record) = record else { return bad("no record in the message") };
    let mut typed = serde_json::to_value(&out.record).map_err(|e| Error::InvalidOutput(e.to_string()))?;
    crate::naming::record_to_json_names(&mut typed);
    if *record != typed {
        return bad("the record in the message differs from the record returned");
    }
    // The record carries no free text: its names must be the pack's own
    // and stages are a WIT enum, so nothing from the input rides in it.
    if out.record.pack_name != pack.manifest.name
        || out.record.pack_version != pack.manifest.version
        || out.record.platform_name != platform.manifest.name
        || out.record.platform_version != platform.manifest.version
    {
        return bad("the record names another pack");
    }
    // A relaxation is the platform's grant, never the pipeline's say.
    let sorted = out.record.relaxed.windows(2).all(|w| w[0] < w[1]);
    let granted =
        out.record.relaxed.iter().all(|id| pack.grant.contains(id) && platform.manifest.rule_ids.contains(id));
    if !sorted || !granted {
        return bad("the record names a relaxation that was not granted");
    }
    // Content left out is an MCP result's, and a cut; MCP output carries
    // every block MCP defines.
    if let Some(l) = &out.record.left_out {
        if out.record.class != api::ContentClass::Mcp
            || !out.record.truncated
            || (opts.format == api::OutputFormat::Mcp && l.not_carried > 0)
        {
            return bad("the record says content was left out that could not have been");
        }
    }
    let b = &out.record.budget;
    if opts.max_tokens.is_some_and(|t| b.max_tokens > t)
        || opts.max_chars.is_some_and(|c| b.max_chars > c)
        || opts.max_bytes.is_some_and(|m| b.max_bytes > m)
    {
        return bad("the budget applied is larger than the budget asked for");
    }
    let visible: usize = texts.iter().map(|t| t.len()).sum();
    // What the bytes alone prove, without tokenizing: the byte length or
    // the rule engine's upper bound (the same function the guest uses).
    let proved =
        visible <= b.max_tokens as usize || token_bound_fits(out.record.encoding, &texts, b.max_tokens as usize);
    match out.record.output_tokens {
        Some(n) if n > u64::from(b.max_tokens) => return bad("output tokens exceed the budget"),
        // Not counted: only valid when the bytes prove it fits.
        None if !proved => return bad("output was not counted and may exceed the budget"),
        _ => {}
    }
    // Every token is at most a few dozen bytes; anything beyond is a lie.
    if visible > (b.max_tokens as usize).saturating_mul(64) {
        return bad("output is far larger than its token budget allows");
    }
    // An output the bytes prove fits; any other is recounted here rather
    // than taken on the pipeline's word.
    if recount && !proved {
        let n: usize = texts.iter().map(|t| count_tokens(out.record.encoding, t)).sum();
        if n > b.max_tokens as usize {
            return bad("output tokens exceed the budget (host recount)");
        }
    }
    // Every rule the record names is a pack's, or a builtin: the record
    // names a few, the packs hundreds, so the named ids are sorted and the
    // packs' ids looked up among them in one pass (no set of the packs'
    // ids per call).
    let has_detect = pack.manifest.has_detect || platform.manifest.has_detect;
    let mut named: Vec<&str> = Vec::new();
    for r in &out.record.redactions {
        let ok_chars = r.rule_id.len() <= 64
            && r.rule_id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !ok_chars {
            return bad("the record names a rule the pack does not have");
        }
        // Tenant roots and the pipeline's personal-data detectors report
        // ids of no pack rule; a pack with a detector may report any.
        let builtin = r.rule_id == "tenant-path-root"
            || result_sanitizer_rule_engine::PII_DETECTOR_IDS.contains(&r.rule_id.as_str());
        if !builtin && !has_detect {
            named.push(&r.rule_id);
        }
    }
    if !named.is_empty() {
        named.sort_unstable();
        named.dedup();
        let mut known = vec![false; named.len()];
        for id in pack.manifest.rule_ids.iter().chain(&platform.manifest.rule_ids) {
            if let Ok(i) = named.binary_search(&id.as_str()) {
                known[i] = true;
            }
        }
        if known.contains(&false) {
            return bad("the record names a rule the pack does not have");
        }
    }
    // Sites: only on request, each a counted rule's, in order, inside the
    // output, with a hash of the documented form.
    if !out.record.sites.is_empty() && opts.report_key.is_none() {
        return bad("the record reports sites nobody asked for");
    }
    let mut at = 0;
    for s in &out.record.sites {
        let counted = out.record.redactions.iter().any(|r| r.rule_id == s.rule_id);
        let hash = s.hash.len() == 16 && s.hash.bytes().all(|c| c.is_ascii_hexdigit());
        if !counted || !hash || s.start_byte < at || s.end_byte < s.start_byte || s.line == 0 || s.column == 0 {
            return bad("the record reports a bad redaction site");
        }
        at = s.start_byte;
    }
    Ok(())
}

/// A round returned one result per input.
pub(super) fn round_len(results: usize, inputs: usize) -> Result<()> {
    if results != inputs {
        return Err(Error::InvalidOutput("a round returned a different number of results".into()));
    }
    Ok(())
}

/// One result of a round: valid against its own options, and within the
/// share the round gave it. Returns the tokens of that share, for
/// [`round_total`].
pub(super) fn round_result(
    r: std::result::Result<api::Sanitized, api::SanitizeError>,
    opts: &api::Options,
    packs: Packs<'_>,
    recount: bool,
) -> Result<(api::Sanitized, u64)> {
    let s = r.map_err(guest_error)?;
    validate_with(opts, &s, packs, recount)?;
    let Some(share) = &s.record.round else {
        return Err(Error::InvalidOutput("a round result without its share".into()));
    };
    if s.record.output_tokens.is_some_and(|t| t > u64::from(share.tokens)) {
        return Err(Error::InvalidOutput("a round result over its share".into()));
    }
    let tokens = u64::from(share.tokens);
    Ok((s, tokens))
}

/// The shares granted to a round's valid results fit the round.
pub(super) fn round_total(granted: u64, round: &api::RoundOptions) -> Result<()> {
    if granted > u64::from(round.round_tokens) {
        return Err(Error::InvalidOutput("the shares exceed the round budget".into()));
    }
    Ok(())
}

/// A `redact` step consumed no more than it was given, and all of it on
/// the last step.
pub(super) fn redact_response(req: &api::RedactRequest, resp: &api::RedactResponse) -> Result<()> {
    let (len, last) = (req.data.len(), req.last);
    if resp.consumed as usize > len || (last && resp.consumed as usize != len) {
        return Err(Error::InvalidOutput("redact consumed a bad number of bytes".into()));
    }
    // A judgment only when asked and once it is made (before any byte is
    // consumed), and one of the types the WIT names.
    let sniffing = req.sniff && req.content_type.is_none();
    match resp.content_type.as_deref() {
        Some(t) if !sniffing || !matches!(t, "" | "text/x-source" | "text/x-source; test") => {
            return Err(Error::InvalidOutput("redact returned a content type it was not asked for".into()));
        }
        None if sniffing && resp.consumed > 0 => {
            return Err(Error::InvalidOutput("redact consumed a stream it had not judged".into()));
        }
        _ => {}
    }
    // Report spans: asked for, in order, within the consumed bytes, and
    // each one's rule counted.
    let mut at = 0;
    for s in &resp.spans {
        if !req.report || s.start < at || s.end <= s.start || s.end > resp.consumed {
            return Err(Error::InvalidOutput("redact returned a bad report span".into()));
        }
        if !resp.redactions.iter().any(|r| r.rule_id == s.rule_id) {
            return Err(Error::InvalidOutput("redact reported a rule it did not count".into()));
        }
        at = s.end;
    }
    Ok(())
}

/// Most error lines a drained gap may hold (the pipeline keeps 16 from
/// each end), and the longest one.
const GAP_LINES: usize = 64;
const GAP_LINE_BYTES: usize = 1024;

/// A `drain` step consumed no more than it was given (all of it on the
/// last step), counted exactly that into the gap, and returned a bounded
/// gap: what a host passes on to `sanitize` and holds meanwhile.
pub(super) fn drain_step(before: &api::Gap, len: usize, last: bool, step: &api::DrainStep) -> Result<()> {
    let (g, n) = (&step.gap, step.consumed as usize);
    let bad = |what: &str| Err(Error::InvalidOutput(format!("drain step: {what}")));
    if n > len || (last && n != len) {
        return bad("consumed a bad number of bytes");
    }
    if g.start_byte != before.start_byte || g.bytes != before.bytes + n as u64 || g.newlines > g.bytes {
        return bad("the gap's sizes do not add up");
    }
    if g.error_lines.len() > GAP_LINES || g.error_lines.iter().any(|l| l.text.len() > GAP_LINE_BYTES) {
        return bad("too many or too long error lines");
    }
    Ok(())
}

// The host's uses of the rule engine's tokenizer (`count_tokens`,
// `token_bound_fits`, `api::Encoding`), kept together. They are compiled
// into the host, so a pipeline build loaded from bytes cannot change them.

/// Token count by the host's own native copy of the pipeline's tokenizer
/// (chunked tiktoken, so a long piece stays linear; tables built once per
/// process, on first need). A pipeline build cannot change this code.
fn count_tokens(enc: api::Encoding, text: &str) -> usize {
    result_sanitizer_rule_engine::count_tokens(native_encoding(enc), text)
}

/// Whether the host's own upper bound on the texts' tokens (the rule
/// engine's `token_bound`, compiled into the host) is within `budget`: no
/// tokenizing, no tables to build.
fn token_bound_fits(enc: api::Encoding, texts: &[&str], budget: usize) -> bool {
    result_sanitizer_rule_engine::token_bound_fits(native_encoding(enc), texts, budget)
}

fn native_encoding(enc: api::Encoding) -> result_sanitizer_rule_engine::api::Encoding {
    use result_sanitizer_rule_engine::api::Encoding as E;
    match enc {
        api::Encoding::O200kBase => E::O200kBase,
        api::Encoding::Cl100kBase => E::Cl100kBase,
    }
}
