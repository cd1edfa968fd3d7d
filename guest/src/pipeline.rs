//! The pipeline, top to bottom.
//!
//! ```text
//! input ─► triage ─► byte_cap ─► decode ─► redact (+ defang) ─► char_budget
//!       ─► token_budget (renders markers and the boundary, counts exactly)
//!       ─► final redact (inside each render) ─► wrap
//! ```
//!
//! Positions reported in markers and records are bytes and lines of the
//! original input: each replacing stage keeps an offset map back to its
//! input (see [`crate::edits`]).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api::{
    Budget, ContentClass, InputKind, Options, SanitizeError, SanitizeRecord, Sanitized, Span as RecSpan, StageTrace,
    Strategy,
};
use crate::char_budget::{self, Cut};
use crate::edits::{self, Edit, OffsetMap};
use crate::marker::{self, MiddleCut, Totals};
use crate::pack::CompiledPack;
use crate::redact::{self, counts_to_records};
use crate::text::{self, Lines};
use crate::tokenizer::Tokenizer;
use crate::wrap;
use crate::{byte_cap, defang, mcp_input, options, token_budget, triage};

/// Runs the whole pipeline over one tool result.
pub fn sanitize(input: &[u8], opts: &Options, pack: &CompiledPack) -> Result<Sanitized, SanitizeError> {
    let budget = options::resolve(opts, &pack.rules)?;
    let tok = Tokenizer::get(opts.encoding);
    let mut run = Run::new(opts, &budget, pack, tok);
    run.stage("triage", input.len(), input.len());
    let is_error_in;
    let (body, extras, structured, notes, total) = match opts.input {
        InputKind::Raw => {
            let verdict = triage::classify(input, opts.content_type.as_deref());
            match verdict.class {
                ContentClass::Binary => return Ok(run.binary(input.len(), verdict.format)),
                class => run.class = class,
            }
            is_error_in = false;
            (input.to_vec(), Vec::new(), None, Vec::new(), opts.total_bytes)
        }
        InputKind::Mcp => {
            let parsed = mcp_input::parse(input, &budget, pack, &mut run.counts)?;
            run.class = ContentClass::Mcp;
            is_error_in = parsed.is_error;
            let total = Some(parsed.text.len() as u64);
            (parsed.text.into_bytes(), parsed.extras, parsed.structured, parsed.notes, total)
        }
    };
    // Structured content shares the token budget with the text.
    let structured = structured.and_then(|s| {
        let json = serde_json::to_string(&s).unwrap_or_default();
        let tokens = tok.count_unless_fits(&json, budget.max_tokens as usize / 2).unwrap_or(json.len()) as u32;
        if tokens <= budget.max_tokens / 2 {
            run.structured_tokens = tokens;
            Some(s)
        } else {
            run.notes.push(format!(
                "{} structuredContent omitted: about {tokens} tokens, over half the {}-token budget; its text form is above.]",
                marker::PREFIX,
                budget.max_tokens
            ));
            None
        }
    });
    run.notes.extend(notes);
    let is_error = is_error_in || opts.tool_error.is_some();
    let text = run.text(&body, total);
    if let Some(e) = run.pack_error.take().or_else(|| pack.ruleset.error()) {
        return Err(SanitizeError::InvalidPack(e));
    }
    let record = run.record.take().expect("record set by text()");
    let message = wrap::message(opts, &text, &extras, structured.as_ref(), is_error, &record);
    Ok(Sanitized { message, record, is_error })
}

/// State of one pipeline run.
struct Run<'a> {
    opts: &'a Options,
    budget: &'a Budget,
    pack: &'a CompiledPack,
    tok: Tokenizer,
    class: ContentClass,
    counts: BTreeMap<String, u32>,
    stages: Vec<StageTrace>,
    notes: Vec<String>,
    structured_tokens: u32,
    record: Option<SanitizeRecord>,
    lenient: bool,
    /// A rule of the pack failed to compile when first used.
    pack_error: Option<String>,
}

/// The redacted text and the way back to the input.
struct Prepared {
    text: String,
    rmap: OffsetMap,
    dmap: OffsetMap,
    lines: Lines,
}

impl Prepared {
    fn byte(&self, off: usize) -> u64 {
        self.dmap.to_src(self.rmap.to_src(off)) as u64
    }
    fn byte_end(&self, off: usize) -> u64 {
        self.dmap.to_src_end(self.rmap.to_src_end(off)) as u64
    }
    fn line(&self, off: usize) -> u64 {
        self.lines.line_of(self.rmap.to_src(off))
    }
}

/// What one render produced.
struct Rendered {
    text: String,
    cut: Cut,
    final_counts: BTreeMap<String, u32>,
}

impl AsRef<str> for Rendered {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl<'a> Run<'a> {
    fn new(opts: &'a Options, budget: &'a Budget, pack: &'a CompiledPack, tok: Tokenizer) -> Self {
        Self {
            opts,
            budget,
            pack,
            tok,
            class: ContentClass::Text,
            counts: BTreeMap::new(),
            stages: Vec::new(),
            notes: Vec::new(),
            structured_tokens: 0,
            record: None,
            lenient: options::lenient(opts, &pack.rules),
            pack_error: None,
        }
    }

    fn stage(&mut self, name: &str, bytes_in: usize, bytes_out: usize) {
        self.stages.push(StageTrace { stage: name.into(), bytes_in: bytes_in as u64, bytes_out: bytes_out as u64 });
    }

    /// The `[code] message` line, its message redacted (and counted) like
    /// the content, since it is caller text.
    fn error_line(&mut self) -> Option<String> {
        let e = self.opts.tool_error.as_ref()?;
        let spans = self.pack.ruleset.scan_mode(&e.message, &[], self.lenient);
        let (msg, _) = edits::apply(&e.message, &redact::to_edits(&spans, &mut self.counts));
        Some(wrap::error_line(&e.code, &msg))
    }

    fn base_record(&self, input_bytes: usize) -> SanitizeRecord {
        SanitizeRecord {
            class: self.class,
            input_bytes: input_bytes as u64,
            original_bytes: input_bytes as u64,
            original_chars: 0,
            original_lines: 0,
            original_tokens: None,
            byte_cap_hit: false,
            truncated: false,
            strategy: Strategy::None,
            kept: Vec::new(),
            omitted: Vec::new(),
            invalid_utf8: 0,
            defanged: 0,
            redactions: Vec::new(),
            output_chars: 0,
            output_tokens: None,
            budget: *self.budget,
            encoding: self.opts.encoding,
            pack_name: self.pack.info.name.clone(),
            pack_version: self.pack.info.version.clone(),
            stages: Vec::new(),
        }
    }

    /// Binary output: omitted, reported as a tool error.
    fn binary(mut self, n: usize, format: Option<&str>) -> Sanitized {
        self.class = ContentClass::Binary;
        let what = format.map(|f| format!(" ({f})")).unwrap_or_default();
        let inner = format!("binary output omitted, {n} bytes{what}");
        let err = self.error_line();
        let text = wrap::frame(self.opts, err.as_deref(), &inner);
        self.stage("wrap", n, text.len());
        let mut rec = self.base_record(n);
        rec.class = ContentClass::Binary;
        rec.original_bytes = self.opts.total_bytes.unwrap_or(n as u64).max(n as u64);
        rec.truncated = true;
        rec.strategy = Strategy::Omitted;
        rec.omitted = vec![RecSpan { start_byte: 0, end_byte: rec.original_bytes, start_line: 0, end_line: 0 }];
        rec.output_chars = text::char_count(&text) as u64;
        rec.output_tokens = self.tok.count_unless_fits(&text, self.budget.max_tokens as usize).map(|n| n as u64);
        rec.redactions = counts_to_records(&self.counts);
        rec.stages = std::mem::take(&mut self.stages);
        let message = wrap::message(self.opts, &text, &[], None, true, &rec);
        Sanitized { message, record: rec, is_error: true }
    }

    /// The text path: cap, decode, redact, budgets, render. Returns the
    /// model-visible text and leaves the record in `self.record`.
    fn text(&mut self, input: &[u8], total: Option<u64>) -> String {
        let budget = *self.budget;
        // Byte cap, on a UTF-8 boundary.
        let n = byte_cap::cap_len(input, budget.max_bytes.min(usize::MAX as u64) as usize);
        let read = &input[..n];
        // A host that caps while reading passes at most cap + 1 bytes; more
        // than that means it passed the whole output.
        let total = total.or_else(|| (input.len() as u64 > budget.max_bytes + 1).then_some(input.len() as u64));
        let original_bytes = total.unwrap_or(input.len() as u64).max(input.len() as u64);
        let cap_hit = (n as u64) < original_bytes;
        self.stage("byte-cap", input.len(), n);

        // Decode; invalid UTF-8 is replaced and counted.
        let decoded = text::decode(read);
        let lines = Lines::new(&decoded.text);
        let total_lines = lines.count();
        let original_chars = text::char_count(&decoded.text) as u64;

        // Redact secrets and paths; defang look-alikes of our markup.
        let custom = self.pack.detect(&decoded.text);
        let spans = self.pack.ruleset.scan_mode(&decoded.text, &custom, self.lenient);
        let mut edit_list = redact::to_edits(&spans, &mut self.counts);
        let mut defangs = defang::edits(&decoded.text);
        defangs.retain(|d| !spans.iter().any(|s| d.start < s.end && s.start < d.end));
        let defanged = defangs.len() as u32;
        edit_list.extend(defangs);
        edit_list.sort_by_key(|e: &Edit| e.start);
        if let Some(e) = self.pack.ruleset.error() {
            self.pack_error = Some(e);
        }
        let (redacted, rmap) = edits::apply(&decoded.text, &edit_list);
        self.stage("redact", decoded.text.len(), redacted.len());
        let prep = Prepared { text: redacted, rmap, dmap: decoded.map, lines };

        // Character budget.
        let (char_cut, char_lines) =
            char_budget::cut(&prep.text, budget.max_chars, budget.head_chars, budget.tail_chars);
        let kept_after_chars = char_cut.head_end + (prep.text.len() - char_cut.tail_start);
        self.stage("char-budget", prep.text.len(), kept_after_chars);

        // Token budget, over the rendered output (markers, boundary, final
        // redaction included).
        let totals = Totals {
            read_bytes: n as u64,
            total_bytes: if cap_hit { total } else { Some(n as u64) },
            lines: total_lines,
            threshold: format!(
                "limits {} bytes, {} chars, {} tokens",
                budget.max_bytes, budget.max_chars, budget.max_tokens
            ),
        };
        let err = self.error_line();
        let token_budget = budget.max_tokens.saturating_sub(self.structured_tokens);
        let head_share = if budget.head_chars + budget.tail_chars == 0 {
            0.75
        } else {
            f64::from(budget.head_chars) / f64::from(budget.head_chars + budget.tail_chars)
        };
        let notes = self.notes.clone();
        let is_empty = prep.text.is_empty() && notes.is_empty();
        let render = |cut: Cut| -> Rendered {
            let cut = avoid_replacements(&prep, cut);
            let inner = compose(&prep, cut, cap_hit, budget.max_bytes, &totals, &notes, is_empty);
            let framed = wrap::frame(self.opts, err.as_deref(), &inner);
            // Redact once more over the final text.
            let spans = self.pack.ruleset.scan_mode(&framed, &self.pack.detect(&framed), self.lenient);
            let mut final_counts = BTreeMap::new();
            let (text, _) = edits::apply(&framed, &redact::to_edits(&spans, &mut final_counts));
            Rendered { text, cut, final_counts }
        };
        let fitted =
            token_budget::fit(&prep.text, char_cut, char_lines, token_budget, head_share, self.tok, render);
        let Rendered { text: out, cut, final_counts } = fitted.rendered;
        self.stage("token-budget", kept_after_chars, cut.head_end + (prep.text.len() - cut.tail_start));
        self.stage("wrap+final-redact", prep.text.len(), out.len());
        for (k, v) in final_counts {
            *self.counts.entry(k).or_default() += v;
        }

        // The record.
        let mut rec = self.base_record(input.len());
        rec.original_bytes = original_bytes;
        rec.original_chars = original_chars;
        rec.original_lines = total_lines;
        rec.byte_cap_hit = cap_hit;
        rec.invalid_utf8 = decoded.invalid;
        rec.defanged = defanged;
        rec.truncated = cut.is_cut() || cap_hit;
        rec.strategy = if !cut.is_cut() {
            Strategy::None
        } else if fitted.whole_lines {
            Strategy::HeadTailLines
        } else {
            Strategy::HeadTailChars
        };
        let len = prep.text.len();
        if cut.is_cut() {
            if cut.head_end > 0 {
                rec.kept.push(span(&prep, 0, cut.head_end));
            }
            rec.omitted.push(span(&prep, cut.head_end, cut.tail_start));
            if cut.tail_start < len {
                rec.kept.push(span(&prep, cut.tail_start, len));
            }
        } else if len > 0 {
            rec.kept.push(span(&prep, 0, len));
        }
        if cap_hit {
            rec.omitted.push(RecSpan {
                start_byte: n as u64,
                end_byte: original_bytes,
                start_line: total_lines.max(1),
                end_line: total_lines.max(1),
            });
        }
        rec.redactions = counts_to_records(&self.counts);
        rec.output_chars = text::char_count(&out) as u64;
        rec.output_tokens = fitted.tokens;
        rec.stages = std::mem::take(&mut self.stages);
        self.record = Some(rec);
        out
    }
}

fn span(p: &Prepared, start: usize, end: usize) -> RecSpan {
    RecSpan {
        start_byte: p.byte(start),
        end_byte: p.byte_end(end),
        start_line: p.line(start),
        end_line: p.line(end.saturating_sub(1).max(start)),
    }
}

/// Moves cut points out of replacement strings, so that no marker is cut.
fn avoid_replacements(p: &Prepared, cut: Cut) -> Cut {
    if !cut.is_cut() {
        return cut;
    }
    let head_end = p.rmap.enclosing(cut.head_end).map_or(cut.head_end, |(s, _)| s);
    let tail_start = p.rmap.enclosing(cut.tail_start).map_or(cut.tail_start, |(_, e)| e);
    Cut { head_end, tail_start: tail_start.max(head_end) }
}

/// The content with its markers, before framing.
fn compose(
    p: &Prepared,
    cut: Cut,
    cap_hit: bool,
    cap: u64,
    totals: &Totals,
    notes: &[String],
    is_empty: bool,
) -> String {
    if is_empty {
        return "(no output)".into();
    }
    let text = &p.text;
    let mut out = String::with_capacity(cut.head_end + (text.len() - cut.tail_start) + 512);
    let push_line = |out: &mut String, s: &str| {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(s);
    };
    if cut.is_cut() || cap_hit {
        let parts = usize::from(cut.head_end > 0) + usize::from(cut.is_cut() && cut.tail_start < text.len());
        let shown = if cut.is_cut() {
            p.byte_end(cut.head_end) + (totals.read_bytes - p.byte(cut.tail_start))
        } else {
            totals.read_bytes
        };
        push_line(&mut out, &marker::header(totals, parts.max(1), shown));
        out.push('\n');
    }
    if cut.is_cut() {
        out.push_str(&text[..cut.head_end]);
        let m = MiddleCut {
            start_byte: p.byte(cut.head_end),
            end_byte: p.byte(cut.tail_start),
            start_line: p.line(cut.head_end),
            end_line: p.line(cut.tail_start.saturating_sub(1).max(cut.head_end)),
            above_last_line: if cut.head_end == 0 { 0 } else { p.line(cut.head_end - 1) },
            below_first_line: p.line(cut.tail_start),
        };
        push_line(&mut out, &marker::middle(&m, totals));
        out.push('\n');
        out.push_str(&text[cut.tail_start..]);
    } else {
        out.push_str(text);
    }
    if cap_hit {
        push_line(&mut out, &marker::cap(totals, cap));
    }
    for n in notes {
        push_line(&mut out, n);
    }
    out
}

/// Decodes a JSON value's strings through the ruleset (used for MCP
/// structured content and resource links).
pub fn redact_json(v: &mut Value, pack: &CompiledPack, counts: &mut BTreeMap<String, u32>) {
    match v {
        Value::String(s) => {
            let spans = pack.ruleset.scan(s, &[]);
            if !spans.is_empty() {
                let (out, _) = edits::apply(s, &redact::to_edits(&spans, counts));
                *s = out;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| redact_json(x, pack, counts)),
        Value::Object(o) => {
            let entries: Vec<(String, Value)> = std::mem::take(o).into_iter().collect();
            for (k, mut val) in entries {
                redact_json(&mut val, pack, counts);
                let mut key = Value::String(k);
                redact_json(&mut key, pack, counts);
                o.insert(key.as_str().unwrap_or_default().to_string(), val);
            }
        }
        _ => {}
    }
}
