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
//! input (see [`crate::support::edits`]).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::api::{
    Budget, ContentClass, InputKind, Options, SanitizeError, SanitizeRecord, Sanitized, SliceUnit, Span as RecSpan,
    StageTrace, Strategy, StructureCuts,
};
use crate::stages::char_budget::{self, Cut};
use crate::support::edits::OffsetMap;
use crate::markup::marker::{self, MiddleCut, Totals};
use crate::pack::CompiledPack;
use crate::strategies::records::{self, Records};
use crate::stages::redact::{counts_to_records, Pass, Redacted};
use crate::support::text::{self, Lines};
use crate::support::tokenizer::Tokenizer;
use crate::stages::wrap;
use crate::stages::byte_cap;
use crate::strategies::error_lines;
use crate::strategies::json;
use crate::stages::mcp;
use crate::options;
use crate::stages::token_budget;
use crate::stages::triage;

/// Runs the whole pipeline over one tool result.
pub fn sanitize(input: &[u8], opts: &Options, pack: &CompiledPack) -> Result<Sanitized, SanitizeError> {
    sanitize_visible(input, opts, pack).map(|(s, _)| s)
}

/// [`sanitize`], also returning the model-visible text (for round budgets).
pub fn sanitize_visible(
    input: &[u8],
    opts: &Options,
    pack: &CompiledPack,
) -> Result<(Sanitized, String), SanitizeError> {
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
                ContentClass::Text => run.class = triage::refine(input, opts.content_type.as_deref()),
                class => run.class = class,
            }
            is_error_in = false;
            if run.class == ContentClass::Html {
                let (text, notes) = run.html(input);
                (text, Vec::new(), None, notes, None)
            } else {
                (input.to_vec(), Vec::new(), None, Vec::new(), opts.total_bytes)
            }
        }
        InputKind::Mcp => {
            let parsed = mcp::parse(input, &budget, &Pass::new(pack, run.lenient), &mut run.counts)?;
            run.class = ContentClass::Mcp;
            run.user_only_blocks = parsed.user_only;
            run.media_tokens = parsed.media_tokens;
            is_error_in = parsed.is_error;
            let total = Some(parsed.text.len() as u64);
            (parsed.text.into_bytes(), parsed.extras, parsed.structured, parsed.notes, total)
        }
    };
    // Structured content shares the token budget with the text: at most
    // half of it, thinned like any JSON document when larger.
    let half = budget.max_tokens as usize / 2;
    let structured = structured.and_then(|s| {
        let count = |v: &Value| {
            let json = serde_json::to_string(v).unwrap_or_default();
            tok.count_within(&json, half).map(|n| n.unwrap_or_else(|| tok.upper_bound(&json)) as u32)
        };
        if let Some(tokens) = count(&s) {
            run.structured_tokens = tokens;
            return Some(s);
        }
        let rest = marker::Recall::from_options(&opts.call_id, opts.recall_bytes).short(input.len() as u64);
        match json::fit(&s, &rest, |t| count(t).map(|n| (t.clone(), n))) {
            Some(((thinned, tokens), cuts)) => {
                run.structured_tokens = tokens;
                run.structure = Some(cuts);
                run.notes.push(format!(
                    "{} structuredContent thinned to {tokens} tokens (half the {}-token budget); omissions are marked inside it.]",
                    marker::PREFIX,
                    budget.max_tokens
                ));
                Some(thinned)
            }
            None => {
                run.notes.push(format!(
                    "{} structuredContent omitted: over half the {}-token budget even when thinned; its text form is above.]",
                    marker::PREFIX,
                    budget.max_tokens
                ));
                None
            }
        }
    });
    run.notes.extend(notes);
    let is_error = is_error_in || opts.tool_error.is_some();
    let text = run.text(&body, total);
    if let Some(e) = run.pack_error.take().or_else(|| pack.ruleset.error()) {
        return Err(SanitizeError::InvalidPack(e));
    }
    let mut record = run.record.take().expect("record set by text()");
    record.user_only_blocks = run.user_only_blocks;
    record.media_tokens = run.media_tokens;
    if let Some(sc) = run.structure.take() {
        // Structured content was thinned: its cuts join the text's.
        let r = record.structure.get_or_insert_with(json::no_cuts);
        r.items += sc.items;
        r.keys += sc.keys;
        r.chars += sc.chars;
        r.containers += sc.containers;
        record.truncated = true;
    }
    let message = wrap::message(opts, &text, &extras, structured.as_ref(), is_error, &record);
    Ok((Sanitized { message, record, is_error }, text))
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
    /// Estimated tokens of images and audio passed through.
    media_tokens: u32,
    /// MCP blocks for the user only, kept from the model.
    user_only_blocks: u32,
    /// Cuts made in thinning structured content.
    structure: Option<StructureCuts>,
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
    /// Where this text starts in the whole output (a recalled slice).
    base: Base,
}

impl Prepared {
    fn byte(&self, off: usize) -> u64 {
        self.base.byte + self.dmap.to_src(self.rmap.to_src(off)) as u64
    }
    fn byte_end(&self, off: usize) -> u64 {
        self.base.byte + self.dmap.to_src_end(self.rmap.to_src_end(off)) as u64
    }
    fn line(&self, off: usize) -> u64 {
        self.base.line + self.lines.line_of(self.rmap.to_src(off))
    }
}

/// What one render produced.
struct Rendered {
    text: String,
    cut: Cut,
    final_counts: BTreeMap<String, u32>,
    /// Error lines of the omitted middle shown.
    error_lines: u64,
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
            media_tokens: 0,
            user_only_blocks: 0,
            structure: None,
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
        let msg = Pass::new(self.pack, self.lenient).redact_text(&e.message, &mut self.counts);
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
            structure: None,
            user_only_blocks: 0,
            media_tokens: 0,
            recallable: false,
            round: None,
        }
    }

    /// Binary output: omitted, reported as a tool error.
    fn binary(mut self, n: usize, format: Option<&str>) -> (Sanitized, String) {
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
        (Sanitized { message, record: rec, is_error: true }, text)
    }

    /// HTML: the markup, read up to its own byte budget, becomes text.
    /// Positions in markers and records then refer to that text.
    fn html(&mut self, input: &[u8]) -> (Vec<u8>, Vec<String>) {
        let cap = byte_cap::cap_len(input, self.budget.markup_bytes.min(usize::MAX as u64) as usize);
        let text = crate::stages::html::extract(&String::from_utf8_lossy(&input[..cap]));
        self.stage("html", cap, text.len());
        let mut notes = Vec::new();
        if cap < input.len() {
            notes.push(format!(
                "{} HTML markup read up to byte {cap} of {}{} (markup budget {} bytes); the text above comes from that part only.]",
                marker::PREFIX,
                input.len(),
                if input.len() as u64 > self.budget.markup_bytes + 1 { "" } else { " or more" },
                self.budget.markup_bytes
            ));
        }
        (text.into_bytes(), notes)
    }

    /// The text path: cap, decode, redact, then the strategy for the class
    /// (JSON structure, whole records, or head and tail with error lines),
    /// budgets, render. Returns the model-visible text and leaves the
    /// record in `self.record`.
    fn text(&mut self, input: &[u8], total: Option<u64>) -> String {
        let budget = *self.budget;
        // A recall reads one part of the output (the input is the whole).
        let (input, base) = match &self.opts.slice {
            Some(sl) => slice(input, sl),
            None => (input, Base::default()),
        };
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
        let pass = Pass::new(self.pack, self.lenient);
        let Redacted { text: redacted, map: rmap, defanged } = pass.redact(&decoded.text, true, &mut self.counts);
        if let Some(SanitizeError::InvalidPack(e)) = pass.error() {
            self.pack_error = Some(e);
        }
        self.stage("redact", decoded.text.len(), redacted.len());
        let prep = Prepared { text: redacted, rmap, dmap: decoded.map, lines, base };
        let d = DecodedStats { chars: original_chars, lines: total_lines, invalid: decoded.invalid, defanged };

        let recall = marker::Recall::from_options(&self.opts.call_id, self.opts.recall_bytes);
        let totals = Totals {
            read_bytes: base.byte + n as u64,
            total_bytes: if cap_hit { total.map(|t| base.byte + t) } else { Some(base.byte + n as u64) },
            lines: base.line + total_lines,
            threshold: format!(
                "limits {} bytes, {} chars, {} tokens",
                budget.max_bytes, budget.max_chars, budget.max_tokens
            ),
            recall,
        };
        let err = self.error_line();
        let token_budget = budget.max_tokens.saturating_sub(self.structured_tokens + self.media_tokens);
        let notes = self.notes.clone();
        let is_empty = prep.text.is_empty() && notes.is_empty();
        let class = self.class;
        let records = matches!(class, ContentClass::JsonLines | ContentClass::Csv)
            .then(|| Records::split(&prep.text, class == ContentClass::Csv));
        let errors = if class == ContentClass::Text { error_lines::find(&prep.text) } else { Vec::new() };
        // Error lines take about a tenth of the token budget (at ~4 bytes
        // a token; the render that holds them is counted exactly anyway).
        let error_cap = token_budget as usize * 2 / 5;
        let ctx = Compose {
            p: &prep,
            cap_hit,
            cap: budget.max_bytes,
            totals: &totals,
            notes: &notes,
            is_empty,
            records: records.as_ref(),
            errors: &errors,
            error_cap,
        };
        let (opts, pack, lenient, tok) = (self.opts, self.pack, self.lenient, self.tok);
        let render = |cut: Cut| -> Rendered {
            let cut = avoid_replacements(&prep, cut);
            let (inner, error_lines) = ctx.compose(cut);
            let (text, final_counts) = finish(opts, pack, lenient, err.as_deref(), &inner);
            Rendered { text, cut, final_counts, error_lines }
        };
        let len = prep.text.len();
        let whole_fits = || {
            text::char_count(&prep.text) <= budget.max_chars as usize
                && tok.count_within(&render(Cut::none(len)).text, token_budget as usize).is_some()
        };
        let structured = !is_empty && matches!(class, ContentClass::Json | ContentClass::JsonLines | ContentClass::Csv);
        if structured && (cap_hit || !whole_fits()) {
            // Structure first: JSON stays JSON (a document cut by the byte
            // cap is closed after its last complete element), records stay
            // whole.
            if class == ContentClass::Json {
                if let Some(out) = self.json_structure(
                    &prep,
                    &totals,
                    err.as_deref(),
                    token_budget,
                    input.len(),
                    n,
                    original_bytes,
                    cap_hit,
                    &d,
                ) {
                    return out;
                }
            } else if cap_hit {
                // Whole records: the last line may be cut; head and tail below.
            } else if let Some(r) = &records {
                if let Some(out) =
                    self.records(&prep, r, &render, &totals, token_budget, input.len(), original_bytes, &d)
                {
                    return out;
                }
            }
        }

        // Head and tail: the character budget, then the token budget.
        let (char_cut, char_lines) =
            char_budget::cut(&prep.text, budget.max_chars, budget.head_chars, budget.tail_chars);
        let kept_after_chars = char_cut.head_end + (prep.text.len() - char_cut.tail_start);
        self.stage("char-budget", prep.text.len(), kept_after_chars);
        let head_share = if budget.head_chars + budget.tail_chars == 0 {
            0.75
        } else {
            f64::from(budget.head_chars) / f64::from(budget.head_chars + budget.tail_chars)
        };
        let fitted = token_budget::fit(&prep.text, char_cut, char_lines, token_budget, head_share, self.tok, render);
        let Rendered { text: out, cut, final_counts, error_lines } = fitted.rendered;
        self.stage("token-budget", kept_after_chars, cut.head_end + (prep.text.len() - cut.tail_start));
        self.stage("wrap+final-redact", prep.text.len(), out.len());
        for (k, v) in final_counts {
            *self.counts.entry(k).or_default() += v;
        }

        // The record.
        let strategy = if !cut.is_cut() {
            Strategy::None
        } else if error_lines > 0 {
            Strategy::HeadTailErrors
        } else if fitted.whole_lines {
            Strategy::HeadTailLines
        } else {
            Strategy::HeadTailChars
        };
        let mut rec = self.record_base(input.len(), original_bytes, cap_hit, &d, &totals);
        rec.truncated = cut.is_cut() || cap_hit;
        rec.strategy = strategy;
        if error_lines > 0 {
            rec.structure = Some(StructureCuts { error_lines, ..json::no_cuts() });
        }
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
        self.close_record(rec, n, original_bytes, total_lines, &prep, cap_hit, &out, fitted.tokens);
        out
    }

    /// The record's common part.
    fn record_base(
        &self,
        input_len: usize,
        original_bytes: u64,
        cap_hit: bool,
        d: &DecodedStats,
        totals: &Totals,
    ) -> SanitizeRecord {
        let mut rec = self.base_record(input_len);
        rec.original_bytes = original_bytes;
        rec.original_chars = d.chars;
        rec.original_lines = d.lines;
        rec.byte_cap_hit = cap_hit;
        rec.invalid_utf8 = d.invalid;
        rec.defanged = d.defanged;
        rec.recallable = totals.recall.call_id.is_some();
        rec
    }

    /// Adds the cap span, counts and sizes, and stores the record.
    fn close_record(
        &mut self,
        mut rec: SanitizeRecord,
        n: usize,
        original_bytes: u64,
        total_lines: u64,
        prep: &Prepared,
        cap_hit: bool,
        out: &str,
        tokens: Option<u64>,
    ) {
        if cap_hit {
            rec.omitted.push(RecSpan {
                start_byte: prep.base.byte + n as u64,
                end_byte: prep.base.byte + original_bytes,
                start_line: prep.base.line + total_lines.max(1),
                end_line: prep.base.line + total_lines.max(1),
            });
        }
        rec.redactions = counts_to_records(&self.counts);
        rec.output_chars = text::char_count(out) as u64;
        rec.output_tokens = tokens;
        rec.stages = std::mem::take(&mut self.stages);
        self.record = Some(rec);
    }

    /// JSON over budget: thinned (see [`json_budget`]) so that it stays
    /// valid JSON. `None` when it does not parse (after redaction) or no
    /// level fits; the caller falls back to head and tail.
    fn json_structure(
        &mut self,
        prep: &Prepared,
        totals: &Totals,
        err: Option<&str>,
        token_budget: u32,
        input_len: usize,
        read: usize,
        original_bytes: u64,
        cap_hit: bool,
        d: &DecodedStats,
    ) -> Option<String> {
        let rest = totals.recall.short(original_bytes + prep.base.byte);
        let v: Value = if cap_hit {
            let from = prep.base.byte + read as u64;
            let rest = match totals.total_bytes {
                Some(to) if to > from => {
                    format!("bytes {from}-{to} of the document were not read{}", totals.recall.short(to))
                }
                _ => format!("the document continued past byte {from} (total size unknown), not kept"),
            };
            let note = format!("{} byte cap of {} bytes reached: {rest}]", marker::PREFIX, self.budget.max_bytes);
            serde_json::from_str(&json::close_prefix(&prep.text, &note)?).ok()?
        } else {
            serde_json::from_str(&prep.text).ok()?
        };
        let max_chars = self.budget.max_chars as usize;
        let found = json::fit(&v, &rest, |t| {
            let json = json::render(t);
            if text::char_count(&json) > max_chars {
                return None;
            }
            // The final redaction must leave the document valid.
            let mut counts = BTreeMap::new();
            let json = Pass::new(self.pack, self.lenient).redact_text(&json, &mut counts);
            serde_json::from_str::<Value>(&json).ok()?;
            let framed = wrap::frame(self.opts, err, &json);
            let tokens = self.tok.count_within(&framed, token_budget as usize)?;
            Some((framed, counts, tokens))
        });
        let ((out, counts, tokens), cuts) = found?;
        self.stage("json-structure", prep.text.len(), out.len());
        for (k, v) in counts {
            *self.counts.entry(k).or_default() += v;
        }
        let mut rec = self.record_base(input_len, original_bytes, cap_hit, d, totals);
        rec.truncated = true;
        rec.strategy = Strategy::JsonStructure;
        rec.structure = Some(cuts);
        self.close_record(rec, read, original_bytes, d.lines, prep, cap_hit, &out, tokens.map(|t| t as u64));
        Some(out)
    }

    /// JSON lines and CSV over budget: as many whole records as fit, three
    /// quarters from the start, the header always kept. `None` when not
    /// even the header fits; the caller falls back to head and tail.
    fn records(
        &mut self,
        prep: &Prepared,
        r: &Records,
        render: &dyn Fn(Cut) -> Rendered,
        totals: &Totals,
        token_budget: u32,
        input_len: usize,
        original_bytes: u64,
        d: &DecodedStats,
    ) -> Option<String> {
        let budget = *self.budget;
        let try_keep = |k: usize| -> Option<(Rendered, Option<usize>)> {
            let (h, t) = records::shares(k);
            let (head_end, tail_start) = r.cut(h, t);
            let cut = Cut { head_end, tail_start };
            let kept = head_end + (prep.text.len() - tail_start);
            // Characters of content within the char budget.
            if kept > budget.max_chars as usize
                && text::char_count(&prep.text[..head_end]) + text::char_count(&prep.text[tail_start..])
                    > budget.max_chars as usize
            {
                return None;
            }
            let rendered = render(cut);
            let tokens = self.tok.count_within(&rendered.text, token_budget as usize)?;
            Some((rendered, tokens))
        };
        // Bisection on the number of records kept.
        let (mut lo, mut hi) = (0usize, r.count());
        let mut best = try_keep(0).map(|x| (0, x));
        best.as_ref()?;
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            match try_keep(mid) {
                Some(found) => {
                    best = Some((mid, found));
                    lo = mid;
                }
                None => hi = mid - 1,
            }
        }
        let (k, (rendered, tokens)) = best?;
        let Rendered { text: out, cut, final_counts, .. } = rendered;
        self.stage("records", prep.text.len(), cut.head_end + (prep.text.len() - cut.tail_start));
        self.stage("wrap+final-redact", prep.text.len(), out.len());
        for (key, v) in final_counts {
            *self.counts.entry(key).or_default() += v;
        }
        let mut rec = self.record_base(input_len, original_bytes, false, d, totals);
        rec.truncated = true;
        rec.strategy = Strategy::Records;
        rec.structure = Some(StructureCuts {
            items: (r.count() - k) as u64,
            total_records: Some(r.count() as u64),
            ..json::no_cuts()
        });
        let len = prep.text.len();
        if cut.head_end > 0 {
            rec.kept.push(span(prep, 0, cut.head_end));
        }
        rec.omitted.push(span(prep, cut.head_end, cut.tail_start));
        if cut.tail_start < len {
            rec.kept.push(span(prep, cut.tail_start, len));
        }
        let n = input_len;
        self.close_record(rec, n, original_bytes, d.lines, prep, false, &out, tokens.map(|t| t as u64));
        Some(out)
    }
}

/// Framed, with the final redaction pass over the whole text.
fn finish(
    opts: &Options,
    pack: &CompiledPack,
    lenient: bool,
    err: Option<&str>,
    inner: &str,
) -> (String, BTreeMap<String, u32>) {
    let framed = wrap::frame(opts, err, inner);
    let mut counts = BTreeMap::new();
    let text = Pass::new(pack, lenient).redact_text(&framed, &mut counts);
    (text, counts)
}

/// Sizes of the decoded text, for the record.
struct DecodedStats {
    chars: u64,
    lines: u64,
    invalid: u32,
    defanged: u32,
}

/// Where a slice starts in the whole output.
#[derive(Clone, Copy, Default, Debug)]
struct Base {
    byte: u64,
    line: u64,
}

/// The part of `input` a slice names, moved to character boundaries, and
/// its position in the whole.
fn slice<'i>(input: &'i [u8], sl: &crate::api::Slice) -> (&'i [u8], Base) {
    let (start, end) = match sl.unit {
        SliceUnit::Bytes => {
            let s = (sl.offset.min(input.len() as u64)) as usize;
            (s, s.saturating_add(sl.limit.min(usize::MAX as u64) as usize).min(input.len()))
        }
        SliceUnit::Lines => {
            let nl = |k: u64| -> usize {
                // Start of line k (from 1).
                if k <= 1 {
                    return 0;
                }
                memchr::memchr_iter(b'\n', input).nth((k - 2) as usize).map_or(input.len(), |p| p + 1)
            };
            (nl(sl.offset), nl(sl.offset.saturating_add(sl.limit)))
        }
    };
    // Never start or end inside a UTF-8 sequence.
    let back = |mut i: usize| {
        while i > 0 && i < input.len() && (input[i] & 0xC0) == 0x80 {
            i -= 1;
        }
        i
    };
    let (start, end) = (back(start), back(end).max(back(start)));
    let line = memchr::memchr_iter(b'\n', &input[..start]).count() as u64;
    (&input[start..end], Base { byte: start as u64, line })
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

/// Everything that shapes the content around a cut.
struct Compose<'p> {
    p: &'p Prepared,
    cap_hit: bool,
    cap: u64,
    totals: &'p Totals,
    notes: &'p [String],
    is_empty: bool,
    records: Option<&'p Records>,
    errors: &'p [(usize, usize)],
    error_cap: usize,
}

impl Compose<'_> {
    /// The content with its markers, before framing; and how many error
    /// lines from the omitted middle it shows.
    fn compose(&self, cut: Cut) -> (String, u64) {
        let (p, totals) = (self.p, self.totals);
        if self.is_empty {
            return ("(no output)".into(), 0);
        }
        let text = &p.text;
        let mut out = String::with_capacity(cut.head_end + (text.len() - cut.tail_start) + 512);
        let push_line = |out: &mut String, s: &str| {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(s);
        };
        let mut shown_errors = 0;
        if cut.is_cut() || self.cap_hit {
            let parts = usize::from(cut.head_end > 0) + usize::from(cut.is_cut() && cut.tail_start < text.len());
            let shown = if cut.is_cut() {
                (p.byte_end(cut.head_end) - p.base.byte) + (totals.read_bytes - p.byte(cut.tail_start))
            } else {
                totals.read_bytes - p.base.byte
            };
            push_line(&mut out, &marker::header(totals, parts.max(1), shown));
            out.push('\n');
        }
        if p.base.byte > 0 || p.base.line > 0 {
            push_line(
                &mut out,
                &format!(
                    "{} recalled part starting at byte {}, line {}; positions below are those of the whole output]",
                    marker::PREFIX,
                    p.base.byte,
                    p.base.line + 1
                ),
            );
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
            match self.records {
                Some(r) => push_line(&mut out, &self.records_marker(r, cut, &m)),
                None => push_line(&mut out, &marker::middle(&m, totals)),
            }
            out.push('\n');
            if !self.errors.is_empty() {
                let (ex, k) =
                    error_lines::excerpt(text, self.errors, cut.head_end, cut.tail_start, self.error_cap, |off| {
                        p.line(off)
                    });
                out.push_str(&ex);
                shown_errors = k;
            }
            out.push_str(&text[cut.tail_start..]);
        } else {
            out.push_str(text);
        }
        if self.cap_hit {
            push_line(&mut out, &marker::cap(totals, self.cap));
        }
        for n in self.notes {
            push_line(&mut out, n);
        }
        (out, shown_errors)
    }

    fn records_marker(&self, r: &Records, cut: Cut, m: &MiddleCut) -> String {
        let n = r.count();
        // Index of the first omitted record (records before it are shown).
        let first = if cut.head_end <= r.header_end { 0 } else { r.index_of(cut.head_end) };
        let last = if cut.tail_start >= r.len { n } else { r.index_of(cut.tail_start) };
        let header = if r.header_end > 0 { "the header line, " } else { "" };
        format!(
            "{} omitted records {}-{} of {n} ({} records; bytes {}-{}, lines {}-{}); shown: {header}records 1-{} above and {}-{n} below. {}]",
            marker::PREFIX,
            first + 1,
            last,
            last - first,
            m.start_byte,
            m.end_byte,
            m.start_line,
            m.end_line,
            first,
            last + 1,
            marker::recovery(m.start_byte, m.end_byte, m.start_line, m.end_line, &self.totals.recall)
        )
    }
}
