//! The pipeline, top to bottom.
//!
//! ```text
//! input ─► triage ─► (mcp blocks | html) ─► byte_cap ─► decode ─► redact (+ defang)
//!       ─► structure (json | records | char_budget ─► token_budget), each cut rendered
//!          with its markers, framed and redacted again ─► wrap
//! ```
//!
//! Each step is one call into the stage's module under [`crate::stages`];
//! the record is built by one [`RecordBuilder`] that the stages report to.
//! Positions reported in markers and records are bytes and lines of the
//! original input: each replacing stage keeps an offset map back to its
//! input (see [`crate::support::located`]).

use crate::api::{ContentClass, Gap, InputKind, Options, SanitizeError, Sanitized, Stage};
use crate::markup::frame::{self, ErrorLine};
use crate::markup::marker::Recall;
use crate::markup::{defang, notice};
use crate::options;
use crate::pack::CompiledPack;
use crate::record::RecordBuilder;
use crate::stages::byte_cap::{self, Drained};
use crate::stages::redact::{self, HitsMemo, Pass, Redacted};
use crate::stages::structure::{self, Fit};
use crate::stages::wrap::{self, Compose, Extra, Renderer};
use crate::stages::{decode, html, mcp, triage};
use crate::strategies::error_lines;
use crate::support::located::{Hole, Located};
use crate::support::tokenizer::{Memo, Tokenizer};

/// How much of a code text is read to tell a test's code (200 lines at most).
const TEST_SNIFF_BYTES: usize = 16 * 1024;

/// Runs the whole pipeline over one tool result.
pub fn sanitize(input: &[u8], opts: &Options, pack: &CompiledPack) -> Result<Sanitized, SanitizeError> {
    sanitize_visible(input, opts, pack).map(|(s, _)| s)
}

/// What triage hands to the text path.
struct Body {
    text: Vec<u8>,
    extras: Vec<Extra>,
    structured: Option<serde_json::Value>,
    /// Twins of the text in `structured` (see [`mcp`]).
    twins: u32,
    /// Whether the text ends a line (its twins keep that).
    ends_line: bool,
    /// An MCP text read as head + tail: its drained middle (in `text`'s
    /// coordinates) and what draining found.
    drained: Option<(Drained, Gap)>,
    notes: Vec<String>,
    /// Size of the whole output, when known.
    total: Option<u64>,
    is_error: bool,
    class: ContentClass,
    /// The class whose strategy fits the text: the class itself, except an
    /// MCP text that holds a JSON document or JSON lines (fitted as one).
    shape: ContentClass,
}

/// [`sanitize`], also returning the model-visible text (for round budgets).
pub(crate) fn sanitize_visible(
    input: &[u8],
    opts: &Options,
    pack: &CompiledPack,
) -> Result<(Sanitized, String), SanitizeError> {
    let opts = &*options::with_file_type(opts);
    let budget = options::resolve(opts, &pack.rules)?;
    // A raw output read whole but too long to process whole in the
    // pipeline's bounded memory (`max-bytes` raised far over its default)
    // is read as a host reads a longer one: head + tail, the middle drained.
    if let Some((bytes, gap)) = too_long(input, opts, &budget, pack)? {
        return sanitize_visible(&bytes, &Options { gap: Some(gap), ..opts.clone() }, pack);
    }
    // Each chunk is tokenized once per call (see the tokenizer's memo).
    let memo = Memo::default();
    let tok = Tokenizer::get(opts.encoding).memoized(&memo);
    // Error results are scrubbed (internal hosts, private addresses, SQL
    // literals, server paths), and the tools the packs opt in.
    let scrub = opts.tool_error.is_some() || pack.scrub_tool(&opts.tool);
    // Personal data: asked for by the call or by the packs for this tool.
    let pii = opts.pii || pack.pii_tool(&opts.tool);
    // The content's keyword hits, kept for the final pass over a render
    // that shows it, whole or as a head and a tail. The memo keeps the
    // first long text its pass scans, so it joins the pass only for the
    // content (not a join's fragments, an MCP result's structured content).
    let hits = HitsMemo::default();
    let pass = Pass::for_tool(pack, options::lenient(opts, &pack.rules), &opts.tool)
        .inline_allow(!opts.untrusted)
        .scrub(scrub)
        .pii(pii, opts.pii_public_ip);
    let mut record = RecordBuilder::new(opts, &budget, pack, input.len());
    record.stage(Stage::Triage, input.len(), input.len());

    // Head + tail around a drained middle: joined on whole lines (the
    // options checked it is raw, non-HTML output).
    // A JSON document (as its head shows) is joined where the host cut it:
    // it is closed around the middle, not on lines.
    let json_doc = opts.gap.is_some()
        && opts.input == InputKind::Raw
        && triage::classify(input, opts.content_type.as_deref()).class == ContentClass::Text
        && triage::refine(input, opts.content_type.as_deref()) == ContentClass::Json;
    let joined = opts.gap.as_ref().map(|g| join(input, g, !json_doc, &pass, &mut record));
    let (input, drained) = match &joined {
        Some((bytes, d)) => (bytes.as_slice(), Some(*d)),
        None => (input, None),
    };

    // Triage: binary is omitted; MCP results are split by block; HTML
    // becomes text.
    let body = match opts.input {
        InputKind::Raw => {
            let verdict = triage::classify(input, opts.content_type.as_deref());
            let class = match verdict.class {
                ContentClass::Binary => {
                    // A drained middle's size is exact; else the host's word.
                    let total = drained.map(|d| input.len() as u64 + d.bytes).or(opts.total_bytes);
                    return Ok(binary(input.len(), total, verdict.format, opts, &pass, tok, record));
                }
                ContentClass::Text => triage::refine(input, opts.content_type.as_deref()),
                class => class,
            };
            record.class(class);
            if class == ContentClass::Html {
                let (text, note) = html::run(input, budget.markup_bytes, &mut record);
                Body {
                    text,
                    extras: Vec::new(),
                    structured: None,
                    twins: 0,
                    ends_line: false,
                    drained: None,
                    notes: note.into_iter().collect(),
                    total: None,
                    is_error: false,
                    class,
                    shape: class,
                }
            } else {
                let text = input.to_vec();
                Body {
                    text,
                    extras: Vec::new(),
                    structured: None,
                    twins: 0,
                    ends_line: false,
                    drained: None,
                    notes: Vec::new(),
                    total: opts.total_bytes,
                    is_error: false,
                    class,
                    shape: class,
                }
            }
        }
        InputKind::Mcp => {
            let parsed = mcp::parse(input, &budget, opts.format, &pass, &mut record.counts)?;
            record.class(ContentClass::Mcp);
            record.mcp(parsed.user_only, parsed.media_tokens, parsed.left_out);
            record.defanged(parsed.defanged);
            let total = Some(parsed.text.len() as u64);
            let ends_line = parsed.text.ends_with('\n');
            // A text holding a JSON document (or JSON lines) is fitted as
            // one, as raw output is: it stays valid JSON (whole records).
            let shape = match triage::refine(parsed.text.as_bytes(), opts.content_type.as_deref()) {
                c @ (ContentClass::Json | ContentClass::JsonLines) => c,
                _ => ContentClass::Mcp,
            };
            // A text over the cap is read as head + tail, as a long raw
            // output is: its end is where a log puts its verdict. Not a
            // recall's slice. A JSON document is joined where it was cut
            // (it is closed around the middle), the rest on whole lines.
            let cap = byte_cap::whole_max(shape, budget.max_bytes);
            let long = parsed.text.len() as u64 > cap && opts.slice.is_none();
            let (text, drained) = if long {
                let (bytes, gap) = byte_cap::head_tail(&parsed.text, cap, pack)?;
                let (joined, d) = join(&bytes, &gap, shape != ContentClass::Json, &pass, &mut record);
                (joined, Some((d, gap)))
            } else {
                (parsed.text.into_bytes(), None)
            };
            Body {
                text,
                extras: parsed.extras,
                structured: parsed.structured,
                twins: parsed.twins,
                ends_line,
                drained,
                notes: parsed.notes,
                total,
                is_error: parsed.is_error,
                class: ContentClass::Mcp,
                shape,
            }
        }
    };

    // Source code is redacted as code, in the content and in the final
    // pass of each render alike.
    // An MCP result is too when the host declares a code content type: a
    // tool that read a source file returns the file as its text.
    let code = match body.class {
        ContentClass::Code => true,
        ContentClass::Mcp => opts.content_type.as_deref().is_some_and(crate::support::code::is_code_type),
        _ => false,
    };
    // Plain text may interleave named files (grep, diffs, listings): each
    // region is judged as its file. A `cat -n` listing sniffs as CSV (a
    // number, a tab).
    let regions = !code && matches!(body.class, ContentClass::Text | ContentClass::Mcp | ContentClass::Csv);
    // A test's code holds fixtures on purpose: generic rules are off there.
    // (Or so its content type says, `text/x-go; test`, unless it comes
    // from a source nobody here controls.)
    let test = code
        && ((!opts.untrusted && opts.content_type.as_deref().is_some_and(crate::support::code::declares_test))
            || crate::support::sniff::looks_like_test(&body.text[..body.text.len().min(TEST_SNIFF_BYTES)]));
    let pass = pass
        .over_code(code)
        .over_tests(test)
        .over_regions(regions)
        .over_json(body.class == ContentClass::Json)
        .scrub(scrub || body.is_error);
    // The final pass leaves markup alone, so the caller text that markup
    // carries is redacted before it goes in.
    let shown = shown_options(opts, &pass, &mut record);
    let opts = shown.as_ref();
    let pass = pass.memo(&hits);

    // Structured content takes at most half the token budget.
    let recall = Recall::from_options(opts);
    let mut notes = Vec::new();
    let (structured, structured_tokens) = match body.structured {
        Some(s) => structure::structured_content(
            s,
            opts.structured_fit,
            &budget,
            &recall.short(input.len() as u64),
            tok,
            &mut record,
            &mut notes,
        ),
        None => (None, 0),
    };
    notes.extend(body.notes);
    if let Some(g) = opts.gap.as_ref().filter(|g| g.unscanned > 0) {
        let end = g.start_byte + g.bytes;
        notes.push(notice::unscanned(end - g.unscanned.min(g.bytes), end));
    }

    // Byte cap, decode, redact.
    let (drained, gap) = match &body.drained {
        Some((d, g)) => (Some(*d), Some(g)),
        None => (drained, opts.gap.as_ref()),
    };
    let capped = byte_cap::run(&body.text, opts.slice.as_ref(), body.total, budget.max_bytes, drained);
    record.stage(Stage::ByteCap, capped.input_len, capped.read.len());
    let decoded = decode::run(capped.read);
    let drained = capped.drained.filter(|d| d.bytes > 0);
    let join = drained.map(|d| decoded.map.first_at_or_after(decoded.text.len(), d.at));
    let Redacted { text, map: rmap, defanged, spans, error_words } =
        pass.redact_joined(&decoded.text, join, true, &mut record.counts);
    record.stage(Stage::Redact, decoded.text.len(), text.len());
    let hole = drained.zip(join).map(|(d, decoded)| Hole {
        src: d.at,
        decoded,
        text: rmap.first_at_or_after(text.len(), decoded),
        bytes: d.bytes,
        newlines: d.newlines,
        ends_line: d.ends_line,
        json: d.json,
    });
    let located = Located { text, rmap, dmap: decoded.map, lines: decoded.lines, base: capped.base, hole, error_words };
    // The drained middle's lines and replacements are the output's too.
    let gap = gap.filter(|_| hole.is_some());
    if let Some(g) = gap {
        record.add_counts(g.redactions.iter().map(|c| (c.rule_id.clone(), c.count)).collect());
    }
    let lines = decoded.stats.lines + hole.map_or(0, |h| h.newlines);
    let stats = crate::record::Decoded { defanged, lines, ..decoded.stats };
    if regions {
        if let Some(r) = crate::support::regions::detect(&decoded.text) {
            record.regions(&r);
        }
    }
    if let Some(key) = opts.report_key.as_deref() {
        record.sites(redact::sites(&decoded.text, &spans, key, &located));
    }
    record.text(capped.input_len, capped.original_bytes, capped.cap_hit, stats, recall.call_id.is_some());

    // An MCP text that holds a JSON document keeps the notes out of it, so
    // that it parses: they go in a text block of their own after it (for
    // OpenAI's one string, on lines after it), redacted as the text is.
    let side = (body.class == ContentClass::Mcp && body.shape == ContentClass::Json && !notes.is_empty()).then(|| {
        let (text, counts) = wrap::FinalPass::run(&pass, &notes.join("\n"));
        record.add_counts(counts.counts);
        let tokens = tok.count(&format!("\n{text}")) as u32;
        (text, tokens)
    });
    if side.is_some() {
        notes.clear();
    }

    // Fit to the budgets, structure first; every attempt is rendered.
    let totals = capped.totals(stats.lines, &budget, recall);
    let token_budget =
        budget.max_tokens.saturating_sub(structured_tokens + record.media_tokens() + side.as_ref().map_or(0, |s| s.1));
    let error_line = tool_error_line(opts, &pass, tok, token_budget, &mut record);
    let shapes = structure::shapes(body.shape, &located);
    let renderer = Renderer {
        compose: Compose {
            p: &located,
            cap_hit: capped.cap_hit,
            cap: budget.max_bytes,
            totals: &totals,
            notes: &notes,
            is_empty: located.text.is_empty() && notes.is_empty(),
            records: shapes.records.as_ref(),
            errors: &shapes.errors,
            error_cap: structure::error_cap(token_budget),
            drained: gap.zip(hole).map(|(g, h)| error_lines::Drained {
                at: h.text,
                first_line: located.hole_first_line().unwrap_or(1),
                lines: &g.error_lines,
                seen: g.error_lines_seen,
            }),
        },
        opts,
        pass,
        error_line: error_line.as_ref(),
    };
    let fit = Fit {
        opts,
        budget: &budget,
        token_budget,
        class: body.shape,
        p: &located,
        totals: &totals,
        read: capped.read.len(),
        original_bytes: capped.original_bytes,
        cap_hit: capped.cap_hit,
        records: shapes.records.as_ref(),
        renderer: &renderer,
        tok,
    };
    let out = structure::fit(&fit, &mut record);
    if let Some(e) = pass.error() {
        return Err(e);
    }
    // A terse render showed the bare line: a cut when it differs.
    if out.terse && error_line.as_ref().is_some_and(|e| e.bare != e.line) {
        record.error_line_cut();
    }
    let error_line = error_line.map(|e| if out.terse { e.bare } else { e.line });

    // The record, then the message.
    record.add_counts(out.final_counts.counts);
    record.markup_kept(out.final_counts.markup_kept);
    record.strategy(out.strategy, out.cut || capped.cap_hit, out.structure);
    out.kept.into_iter().for_each(|s| record.kept(s));
    out.omitted.into_iter().for_each(|s| record.omitted(s));
    if let Some(unread) = capped.unread_span(stats.lines) {
        record.omitted(unread);
    }
    let record = match &side {
        Some((notes, tokens)) => {
            record.finish(&format!("{}\n{notes}", out.text), out.tokens.map(|t| t + *tokens as u64))
        }
        None => record.finish(&out.text, out.tokens),
    };
    // The text's twins in the structured content: the text as shown,
    // without the frame the text block carries.
    let structured = structured.map(|mut s| {
        if body.twins > 0 {
            let shown = frame::unframe(opts, error_line.as_deref(), &out.text, body.ends_line).unwrap_or(&out.text);
            mcp::fill_twins(&mut s, shown);
        }
        s
    });
    let is_error = body.is_error || opts.tool_error.is_some();
    let side = side.map(|(notes, _)| notes);
    let message = wrap::message(opts, &out.text, side.as_deref(), &body.extras, structured.as_ref(), is_error, &record);
    Ok((Sanitized { message, record, is_error }, out.text))
}

/// A raw text the host read whole (no gap, no slice, within the byte cap)
/// that is longer than the pipeline processes whole
/// ([`byte_cap::whole_max`]): its head and tail within that, and the
/// drained middle, as a host would have read it. Not for HTML (markup is
/// extracted first) nor for invalid UTF-8 (positions would shift).
fn too_long(
    input: &[u8],
    opts: &Options,
    budget: &crate::api::Budget,
    pack: &CompiledPack,
) -> Result<Option<(Vec<u8>, Gap)>, SanitizeError> {
    // `head-bytes` is 0 for what is read whole by design (MCP input,
    // declared HTML). Over the cap, the byte cap cuts (a host that stopped
    // reading there).
    let len = input.len() as u64;
    let read_whole =
        opts.input == InputKind::Raw && opts.gap.is_none() && opts.slice.is_none() && budget.head_bytes > 0;
    if !read_whole || len <= byte_cap::JSON_WHOLE_MAX || len > budget.max_bytes {
        return Ok(None);
    }
    let ct = opts.content_type.as_deref();
    if triage::classify(input, ct).class != ContentClass::Text {
        return Ok(None);
    }
    let shape = triage::refine(input, ct);
    let whole = byte_cap::whole_max(shape, budget.max_bytes);
    let Ok(text) = std::str::from_utf8(input) else { return Ok(None) };
    if shape == ContentClass::Html || len <= whole {
        return Ok(None);
    }
    byte_cap::head_tail(text, whole, pack).map(Some)
}

/// `input`, a head and tail around `g`, joined on whole lines. The partial
/// lines at the join were neither drained nor are they shown: their
/// secrets count with the rest.
fn join(input: &[u8], g: &Gap, lines: bool, pass: &Pass, record: &mut RecordBuilder) -> (Vec<u8>, Drained) {
    let (bytes, d) = byte_cap::join(input, g, lines);
    for (s, e) in d.fragments {
        pass.redact_text(&String::from_utf8_lossy(&input[s..e]), &mut record.counts);
    }
    (bytes, d)
}

/// `opts` with the caller text that markers and the boundary show (tool
/// name, content type, call id, recall tool) redacted; borrowed when nothing is found.
fn shown_options<'o>(opts: &'o Options, pass: &Pass, record: &mut RecordBuilder) -> std::borrow::Cow<'o, Options> {
    let redact = |s: &str, counts: &mut crate::record::Counts| {
        let r = pass.redact_text(s, counts);
        (r != s).then_some(r)
    };
    let tool = redact(&opts.tool, &mut record.counts);
    let call_id = redact(&opts.call_id, &mut record.counts);
    let content_type = opts.content_type.as_deref().and_then(|c| redact(c, &mut record.counts));
    let recall_tool = opts.recall_tool.as_deref().and_then(|c| redact(c, &mut record.counts));
    if tool.is_none() && call_id.is_none() && content_type.is_none() && recall_tool.is_none() {
        return std::borrow::Cow::Borrowed(opts);
    }
    let mut o = opts.clone();
    o.tool = tool.unwrap_or(o.tool);
    o.call_id = call_id.unwrap_or(o.call_id);
    o.content_type = content_type.or(o.content_type);
    o.recall_tool = recall_tool.or(o.recall_tool);
    std::borrow::Cow::Owned(o)
}

/// The `[code] message` line of a tool error, its message redacted (and
/// counted) like the content, since it is caller text. Every render holds
/// it, before the content: it may take a quarter of the content's `tokens`.
fn tool_error_line(
    opts: &Options,
    pass: &Pass,
    tok: Tokenizer<'_>,
    tokens: u32,
    record: &mut RecordBuilder,
) -> Option<ErrorLine> {
    let e = opts.tool_error.as_ref()?;
    // Caller text, shown as the line's message: redacted and defanged
    // as content is (the final pass redacts the line again, but defangs
    // nothing).
    let (message, defanged) = defang::text(&pass.redact_text(&e.message, &mut record.counts));
    record.defanged(defanged);
    let line = ErrorLine::new(&e.code, &message, tok, tokens as usize / 4);
    if line.cut {
        record.error_line_cut();
    }
    Some(line)
}

/// Binary output: omitted, reported as a tool error.
fn binary(
    n: usize,
    total: Option<u64>,
    format: Option<&str>,
    opts: &Options,
    pass: &Pass,
    tok: Tokenizer<'_>,
    mut record: RecordBuilder,
) -> (Sanitized, String) {
    let error_line = tool_error_line(opts, pass, tok, record.budget().max_tokens, &mut record);
    let text = frame::frame(opts, error_line.as_ref().map(|e| e.line.as_str()), &notice::binary(n, format));
    record.stage(Stage::Wrap, n, text.len());
    record.binary(total.unwrap_or(n as u64).max(n as u64));
    let tokens = tok.count_unless_fits(&text, record.budget().max_tokens as usize);
    let record = record.finish(&text, tokens.map(|n| n as u64));
    let message = wrap::message(opts, &text, None, &[], None, true, &record);
    (Sanitized { message, record, is_error: true }, text)
}

#[cfg(test)]
mod tests {
    use crate::pack::fixtures::{info, platform, rule, rule_set};
    use crate::pack::{CompiledPack, RuleSource};
    use crate::pack_api::{Finding, PackInfo, Rule, RuleSet};
    use serde_json::json;

    fn acme_rule() -> Rule {
        rule(json!({"id": "acme", "regex": r"\b(acme_[a-z0-9]{8})\b", "keywords": ["acme_"], "secret_group": 1}))
    }

    /// A pack whose code reports the same spans in every text.
    struct FixedOffsets;

    impl RuleSource for FixedOffsets {
        fn info(&self) -> PackInfo {
            PackInfo { name: "fixed".into(), ..info() }
        }
        fn rules(&self) -> RuleSet {
            rule_set(vec![acme_rule()])
        }
        fn has_detect(&self) -> bool {
            true
        }
        fn detect(&self, text: &str) -> Vec<Finding> {
            (0..text.len() as u32 / 7)
                .map(|k| Finding { rule_id: "acme".into(), start: k * 7, end: k * 7 + 3 })
                .filter(|f| text.is_char_boundary(f.start as usize) && text.is_char_boundary(f.end as usize))
                .collect()
        }
    }

    #[test]
    fn findings_at_fixed_offsets_never_rewrite_the_pipelines_markup() {
        let p = CompiledPack::layered(Box::new(platform()), Box::new(FixedOffsets)).unwrap();
        let mut o = crate::options::default_options();
        o.untrusted = true;
        o.tool = "fetch".into();
        o.max_tokens = Some(300);
        let input: String = (0..400).map(|i| format!("line {i} tok_abcdef123456\n")).collect();
        let out = super::sanitize(input.as_bytes(), &o, &p).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out.message).unwrap();
        let text = v["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("[tool_result name=fetch untrusted=true content_type=text/plain]\n"), "{text}");
        assert!(text.ends_with("---\n[/tool_result]"), "{text}");
        let markers: Vec<&str> = text.lines().filter(|l| l.starts_with("[truncated:")).collect();
        assert!(!markers.is_empty() && markers.iter().all(|m| !m.contains("[REDACTED:acme]")), "{markers:?}");
        // Every redaction is whole: no marker was cut into.
        assert_eq!(
            text.matches("[REDACTED:").count(),
            text.matches("[REDACTED:tok]").count() + text.matches("[REDACTED:acme]").count()
        );
        assert!(!text.contains("DACTED:tok]DA") && !text.contains("]DACTED"), "{text}");
        assert!(out.record.markup_kept > 0);
    }
}
