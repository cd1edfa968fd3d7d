//! Structure first: the strategy for a text over its budget.
//!
//! JSON is thinned and stays valid JSON ([`crate::strategies::json`]); JSON
//! lines and CSV keep whole records ([`crate::strategies::records`]); when
//! neither applies (plain text, a document that does not parse, no level
//! that fits) the text is cut to head and tail: the character budget, then
//! the token budget, on whole lines where possible, with the error lines of
//! the omitted middle rescued for logs. Every attempt is rendered and
//! counted exactly (see [`crate::stages::wrap::Renderer`]).

use serde_json::Value;

use crate::api::{Budget, ContentClass, Options, Span, Stage, Strategy, StructureCuts, StructuredFit};
use crate::markup::marker::{self, Totals};
use crate::markup::notice;
use crate::record::{no_cuts, RecordBuilder};
use crate::stages::char_budget;
use crate::stages::token_budget;
use crate::stages::wrap::{FinalPass, Rendered, Renderer};
use crate::strategies::json_gap::Layout;
use crate::strategies::records::{self, Records};
use crate::strategies::{error_lines, json};
use crate::support::json_scan::Nest;
use crate::support::located::Cut;
use crate::support::located::Located;
use crate::support::text;
use crate::support::tokenizer::Tokenizer;

/// What the chosen strategy produced.
pub(crate) struct Outcome {
    /// The model-visible text.
    pub text: String,
    /// Its tokens, when counted.
    pub tokens: Option<u64>,
    /// The strategy.
    pub strategy: Strategy,
    /// Whether anything was cut by a budget.
    pub cut: bool,
    /// What a structure-aware strategy left out.
    pub structure: Option<StructureCuts>,
    /// Spans of the original kept and omitted (before the byte cap's).
    pub kept: Vec<Span>,
    /// See `kept`.
    pub omitted: Vec<Span>,
    /// What the final pass replaced and left alone.
    pub final_counts: FinalPass,
    /// Rendered terse (see [`Renderer::render_terse`]).
    pub terse: bool,
}

/// The text to fit and how it is rendered.
pub(crate) struct Fit<'a> {
    /// Options of the call.
    pub opts: &'a Options,
    /// The budget applied.
    pub budget: &'a Budget,
    /// Tokens left for the text (media and structured content take theirs).
    pub token_budget: u32,
    /// The class triage decided.
    pub class: ContentClass,
    /// The redacted text.
    pub p: &'a Located,
    /// Sizes of the whole output.
    pub totals: &'a Totals,
    /// Bytes read, and the whole output's size.
    pub read: usize,
    /// See `read`.
    pub original_bytes: u64,
    /// The byte cap cut the input.
    pub cap_hit: bool,
    /// Records of JSON lines and CSV.
    pub records: Option<&'a Records>,
    /// Renders a cut.
    pub renderer: &'a Renderer<'a>,
    /// The tokenizer.
    pub tok: Tokenizer<'a>,
}

/// What the strategies need to know of the text's shape: its records (JSON
/// lines, CSV) or its error-looking lines (plain text, logs).
pub(crate) struct Shapes<'t> {
    /// Records of JSON lines and CSV.
    pub records: Option<Records>,
    /// Error-looking lines (byte ranges) of plain text, found when a cut
    /// first shows them.
    pub errors: error_lines::Lazy<'t>,
}

/// Finds the shape of `text` that its class's strategy uses.
pub(crate) fn shapes(class: ContentClass, p: &Located) -> Shapes<'_> {
    let text = p.text.as_str();
    // A drained middle between whole lines held one record a line.
    let around = |r: Records| match p.hole {
        Some(h) if p.hole_on_lines() => r.around(h.text, h.newlines as usize),
        _ => r,
    };
    let records = matches!(class, ContentClass::JsonLines | ContentClass::Csv)
        .then(|| around(Records::split(text, class == ContentClass::Csv)));
    let known = p.error_words.as_deref().map(|words| error_lines::Known { words, map: &p.rmap });
    let errors = error_lines::Lazy::new((class == ContentClass::Text).then_some(text), known);
    Shapes { records, errors }
}

/// Bytes the rescued error lines may take: about a tenth of the token
/// budget, at ~4 bytes a token (the render that holds them is counted
/// exactly anyway).
pub(crate) fn error_cap(token_budget: u32) -> usize {
    token_budget as usize * 2 / 5
}

/// Fits the text with the strategy its class calls for.
pub(crate) fn fit(f: &Fit, record: &mut RecordBuilder) -> Outcome {
    let len = f.p.text.len();
    let whole_fits = || {
        text::char_count(&f.p.text) <= f.budget.max_chars as usize
            && f.tok.count_within(&f.renderer.render(Cut::none(len)).text, f.token_budget as usize).is_some()
    };
    // Head + tail around a drained middle: a JSON document closed around
    // it, records whole on both sides; else cut as text.
    if let Some(h) = f.p.hole.filter(|_| !f.renderer.compose.is_empty) {
        let out = match (f.class, f.records) {
            (ContentClass::Json, _) => h.json.and_then(|n| json_gap(f, h.text, &n, record)),
            (ContentClass::JsonLines | ContentClass::Csv, Some(r)) if !f.cap_hit && r.hidden.is_some() => {
                whole_records(f, r, record)
            }
            _ => None,
        };
        if let Some(out) = out {
            return out;
        }
    }
    let structured = !f.renderer.compose.is_empty
        && f.p.hole.is_none()
        && matches!(f.class, ContentClass::Json | ContentClass::JsonLines | ContentClass::Csv);
    if structured && (f.cap_hit || !whole_fits()) {
        if f.class == ContentClass::Json {
            if let Some(out) = json_structure(f, record) {
                return out;
            }
        } else if f.cap_hit {
            // The last record may be cut: head and tail below.
        } else if let Some(r) = f.records {
            if let Some(out) = whole_records(f, r, record) {
                return out;
            }
        }
    }
    head_tail(f, record)
}

/// JSON over budget, thinned so that it stays valid JSON. `None` when it
/// does not parse (after redaction) or no level fits.
fn json_structure(f: &Fit, record: &mut RecordBuilder) -> Option<Outcome> {
    let (p, totals) = (f.p, f.totals);
    let rest = totals.recall.short(f.original_bytes + p.base.byte);
    let note = f.cap_hit.then(|| {
        let from = p.base.byte + f.read as u64;
        marker::json_cap_note(f.budget.max_bytes, &marker::json_unread(from, totals.total_bytes, &totals.recall))
    });
    let mut v: Value = match &note {
        Some(note) => serde_json::from_str(&json::close_prefix(&p.text, note)?).ok()?,
        None => serde_json::from_str(&p.text).ok()?,
    };
    // Rendered, the strings show their escapes decoded: a look-alike of the
    // pipeline's markup written with them is defanged now (not the cap's
    // own key and note).
    if memchr::memchr(b'\\', p.text.as_bytes()).is_some() {
        let key = marker::json_cap_key();
        let keep: Vec<&str> = note.iter().map(String::as_str).chain([key.as_str()]).collect();
        record.defanged(crate::markup::defang::json(&mut v, &keep));
    }
    let max_chars = f.budget.max_chars as usize;
    let r = f.renderer;
    let found = json::fit(&v, &rest, |t| {
        let doc = json::render(t);
        if text::char_count(&doc) > max_chars {
            return None;
        }
        // The final redaction must leave the document valid.
        let (doc, counts) = FinalPass::run(&r.pass, &doc);
        serde_json::from_str::<Value>(&doc).ok()?;
        let framed = crate::markup::frame::frame(f.opts, r.error_line.map(|e| e.line.as_str()), &doc);
        let tokens = f.tok.count_within(&framed, f.token_budget as usize)?;
        Some((framed, counts, tokens))
    });
    let ((out, counts, tokens), cuts) = found?;
    record.stage(Stage::JsonStructure, p.text.len(), out.len());
    Some(Outcome {
        text: out,
        tokens: tokens.map(|t| t as u64),
        strategy: Strategy::JsonStructure,
        cut: true,
        structure: Some(cuts),
        kept: Vec::new(),
        omitted: Vec::new(),
        final_counts: counts,
        terse: false,
    })
}

/// A JSON document read as head + tail: closed around its drained middle
/// ([`json_gap`]), keeping as many whole elements of the container around
/// it as fit, three quarters from the start. `None` when the text is not
/// such a document or not even the note fits.
fn json_gap(f: &Fit, at: usize, nest: &Nest, record: &mut RecordBuilder) -> Option<Outcome> {
    let p = f.p;
    let layout = Layout::find(&p.text, at, nest)?;
    let r = f.renderer;
    let max_chars = f.budget.max_chars as usize;
    let unit = if layout.object { "members" } else { "items" };
    let try_keep = |k: usize| -> Option<(String, FinalPass, Option<usize>, Cut)> {
        let (head_end, tail_start, _, _) = layout.cut(k);
        let cut = Cut { head_end, tail_start };
        let span = p.omitted(cut);
        let rest = f.totals.recall.short(span.end_byte);
        let doc = layout.render(&p.text, k, |o, a, b, t| marker::json_gap(o, unit, (a, b, t), &span, &rest));
        if text::char_count(&doc) > max_chars {
            return None;
        }
        // The final redaction must leave the document valid.
        let (doc, counts) = FinalPass::run(&r.pass, &doc);
        serde_json::from_str::<serde::de::IgnoredAny>(&doc).ok()?;
        let framed = crate::markup::frame::frame(f.opts, r.error_line.map(|e| e.line.as_str()), &doc);
        let tokens = f.tok.count_within(&framed, f.token_budget as usize)?;
        Some((framed, counts, tokens, cut))
    };
    // Bisection on the number of elements kept.
    let (mut lo, mut hi) = (0usize, layout.most());
    let mut best = (0, try_keep(0)?);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        match try_keep(mid) {
            Some(found) => {
                best = (mid, found);
                lo = mid;
            }
            None => hi = mid - 1,
        }
    }
    let (k, (out, final_counts, tokens, cut)) = best;
    let omitted = layout.total() - k.min(layout.most()) as u64;
    record.stage(Stage::JsonStructure, p.text.len(), out.len());
    let (kept, omitted_spans) = p.cut_spans(cut);
    let cuts = if layout.object {
        StructureCuts { keys: omitted, ..no_cuts() }
    } else {
        StructureCuts { items: omitted, ..no_cuts() }
    };
    Some(Outcome {
        text: out,
        tokens: tokens.map(|t| t as u64),
        strategy: Strategy::JsonStructure,
        cut: true,
        structure: Some(cuts),
        kept,
        omitted: omitted_spans,
        final_counts,
        terse: false,
    })
}

/// JSON lines and CSV over budget: as many whole records as fit, three
/// quarters from the start, the header always kept. `None` when not even
/// the header fits.
fn whole_records(f: &Fit, r: &Records, record: &mut RecordBuilder) -> Option<Outcome> {
    let p = f.p;
    let max_chars = f.budget.max_chars as usize;
    let try_keep = |k: usize| -> Option<(Rendered, Option<usize>)> {
        let (h, t) = records::shares(k);
        let (head_end, tail_start) = r.cut(h, t);
        let cut = Cut { head_end, tail_start };
        let kept = head_end + (p.text.len() - tail_start);
        // Characters of content within the char budget.
        if kept > max_chars
            && text::char_count(&p.text[..head_end]) + text::char_count(&p.text[tail_start..]) > max_chars
        {
            return None;
        }
        let rendered = f.renderer.render(cut);
        let tokens = f.tok.count_within(&rendered.text, f.token_budget as usize)?;
        Some((rendered, tokens))
    };
    // Bisection on the number of records kept.
    // At most the records shown (a drained middle's are not).
    let (mut lo, mut hi) = (0usize, r.starts.len());
    let mut best = Some((0, try_keep(0)?));
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
    record.stage(Stage::Records, p.text.len(), cut.head_end + (p.text.len() - cut.tail_start));
    record.stage(Stage::Wrap, p.text.len(), out.len());
    let (kept, omitted) = p.cut_spans(cut);
    Some(Outcome {
        text: out,
        tokens: tokens.map(|t| t as u64),
        strategy: Strategy::Records,
        cut: true,
        structure: Some(StructureCuts {
            items: (r.count() - k) as u64,
            total_records: Some(r.count() as u64),
            ..no_cuts()
        }),
        kept,
        omitted,
        final_counts,
        terse: false,
    })
}

/// Head and tail: the character budget, then the token budget.
fn head_tail(f: &Fit, record: &mut RecordBuilder) -> Outcome {
    let (p, budget) = (f.p, f.budget);
    let (char_cut, char_lines) = char_budget::cut(&p.text, budget.max_chars, budget.head_chars, budget.tail_chars);
    let char_cut = p.around_hole(char_cut);
    let kept_after_chars = char_cut.head_end + (p.text.len() - char_cut.tail_start);
    record.stage(Stage::CharBudget, p.text.len(), kept_after_chars);
    let head_share = if budget.head_chars + budget.tail_chars == 0 {
        0.75
    } else {
        f64::from(budget.head_chars) / f64::from(budget.head_chars + budget.tail_chars)
    };
    let fitted = token_budget::fit(&p.text, char_cut, char_lines, f.token_budget, head_share, f.tok, f.renderer);
    let Rendered { text: out, cut, final_counts, error_lines, terse } = fitted.rendered;
    record.stage(Stage::TokenBudget, kept_after_chars, cut.head_end + (p.text.len() - cut.tail_start));
    record.stage(Stage::Wrap, p.text.len(), out.len());
    let omits = p.omits(cut);
    let strategy = if !omits {
        Strategy::None
    } else if error_lines > 0 {
        Strategy::HeadTailErrors
    } else if fitted.whole_lines && p.hole_on_lines() {
        Strategy::HeadTailLines
    } else {
        Strategy::HeadTailChars
    };
    let (kept, omitted) = if omits {
        p.cut_spans(cut)
    } else if !p.text.is_empty() {
        (vec![p.span(0, p.text.len())], Vec::new())
    } else {
        (Vec::new(), Vec::new())
    };
    Outcome {
        text: out,
        tokens: fitted.tokens,
        strategy,
        cut: omits,
        structure: (error_lines > 0).then(|| StructureCuts { error_lines, ..no_cuts() }),
        kept,
        omitted,
        final_counts,
        terse,
    }
}

/// MCP structured content: it shares the token budget with the text, at
/// most half of it, thinned like any JSON document when larger (`how`:
/// with notes inside it, keeping the shape a schema checks, or left out;
/// `rest`: the recovery wording of its notes). Returns what is passed on, and its tokens; a notice says what was done.
pub(crate) fn structured_content(
    s: Value,
    how: StructuredFit,
    budget: &Budget,
    rest: &str,
    tok: Tokenizer<'_>,
    record: &mut RecordBuilder,
    notes: &mut Vec<String>,
) -> (Option<Value>, u32) {
    let half = budget.max_tokens as usize / 2;
    let count = |v: &Value| {
        let json = serde_json::to_string(v).unwrap_or_default();
        tok.count_within(&json, half).map(|n| n.unwrap_or_else(|| tok.upper_bound(&json)) as u32)
    };
    if how == StructuredFit::Omitted {
        record.structured_left_out();
        notes.push(notice::structured_invalid());
        return (None, 0);
    }
    if let Some(tokens) = count(&s) {
        return (Some(s), tokens);
    }
    let found = match how {
        StructuredFit::Schema => {
            json::fit_bare(&s, rest, |t| count(t).map(|n| (t.clone(), n))).map(|((thinned, tokens), cuts, arrays)| {
                let arrays: Vec<_> =
                    arrays.iter().map(|a| (a.path.as_str(), a.omitted, a.first, a.last, a.of)).collect();
                notes.push(notice::structured_thinned_bare(tokens, budget.max_tokens, &arrays, rest));
                ((thinned, tokens), cuts)
            })
        }
        _ => json::fit(&s, rest, |t| count(t).map(|n| (t.clone(), n))).inspect(|((_, tokens), _)| {
            notes.push(notice::structured_thinned(*tokens, budget.max_tokens));
        }),
    };
    match found {
        Some(((thinned, tokens), cuts)) => {
            record.structured_cuts(cuts);
            (Some(thinned), tokens)
        }
        None => {
            record.structured_left_out();
            notes.push(notice::structured_omitted(budget.max_tokens));
            (None, 0)
        }
    }
}
