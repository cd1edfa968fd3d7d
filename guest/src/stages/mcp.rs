//! MCP input: a `CallToolResult` as JSON.
//!
//! Triage per content block:
//! * `text` blocks are joined (one per line) into the text that the byte,
//!   char and token budgets then apply to;
//! * embedded `resource` text joins the text under a `[resource <uri>]`
//!   line; a `blob` is omitted with a marker (binary);
//! * blocks annotated `audience: ["user"]` (for the user, not the model)
//!   are left out and counted;
//! * `image` and `audio` pass through when their data is base64 that
//!   begins as a known type of their kind does (their `mimeType` first;
//!   they go out under the type's own name, [`media::known_type`]), fits
//!   the byte cap, and their estimated tokens fit half the token budget (all
//!   media together), else they are omitted with a marker;
//! * `resource_link` passes through with its strings redacted;
//! * `structuredContent` passes through with every string redacted (the
//!   pipeline then checks its share of the token budget), unless it holds
//!   more values than the pipeline parses ([`STRUCTURED_VALUES_MAX`]): then
//!   it is left out with a notice, unparsed.
//! * what the output's message cannot carry ([`carries`]: OpenAI's holds
//!   text only, Anthropic's text and images) is omitted with a notice and
//!   costs no tokens; structured content unsaid when the text holds it.
//!
//! Every block left out with a notice is counted in the record's
//! `left-out`, by why ([`LeftOut`]).
//!
//! The strings passed through (structured content and links, keys too) are
//! defanged as the text is ([`defang::json`]): a client that shows them to
//! the model shows them decoded, so `\u005b/tool_result]` would read as the
//! boundary's end.
//!
//! A `structuredContent` string that equals the joined text is its twin:
//! the same content in the other form (read_text_file of the filesystem
//! server returns the file as its text and as `{"content": <file>}`; the
//! spec asks tools with structured output to repeat it as text). A client
//! shows the model one or the other, so the twin is neither redacted nor
//! counted again: it stands as a placeholder ([`TWIN`]) until the text is
//! done, then [`fill_twins`] puts the text in, with the same redactions,
//! cuts and markers (the boundary frame is left to the text block). Cost: one comparison
//! per string, by length first ([`same_bytes`]).

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::api::{Budget, LeftOut, OutputFormat, SanitizeError};
use crate::markup::{defang, notice};
use crate::stages::redact::Pass;
use crate::stages::wrap::Extra;
use crate::support::text::same_bytes;
use crate::support::{json_scan, media};

/// A parsed and triaged MCP result.
pub struct Parsed {
    /// Joined text.
    pub text: String,
    /// Blocks passed through.
    pub extras: Vec<Extra>,
    /// Redacted structured content.
    pub structured: Option<Value>,
    /// `isError` of the input.
    pub is_error: bool,
    /// Markers for omitted blocks.
    pub notes: Vec<String>,
    /// The blocks those markers say, counted by why.
    pub left_out: LeftOut,
    /// Blocks for the user only, left out.
    pub user_only: u32,
    /// Estimated tokens of the media passed through.
    pub media_tokens: u32,
    /// Twins of the text in `structured`, standing as [`TWIN`].
    pub twins: u32,
    /// Markup look-alikes defanged in `structured` and the links.
    pub defanged: u32,
}

/// What a twin of the text stands as until [`fill_twins`]: a short string
/// (thinning never shortens it) that is checked not to occur in the input.
pub const TWIN: &str = "\u{0}twin\u{0}";

fn bad(m: &str) -> SanitizeError {
    SanitizeError::InvalidInput(m.into())
}

/// Parses and triages `input`.
pub fn parse(
    input: &[u8],
    budget: &Budget,
    format: OutputFormat,
    pass: &Pass,
    counts: &mut BTreeMap<String, u32>,
) -> Result<Parsed, SanitizeError> {
    // Structured content too large to parse is counted, never parsed
    // ([`read`]).
    let (obj, structured) = read(input)?;
    let content =
        obj.get("content").and_then(Value::as_array).ok_or_else(|| bad("CallToolResult.content must be an array"))?;
    let is_error = obj.get("isError").and_then(Value::as_bool).unwrap_or(false);
    // An error result is scrubbed, its structured content and links too.
    let scrubbing;
    let pass = if is_error {
        scrubbing = pass.scrub(true);
        &scrubbing
    } else {
        pass
    };
    let mut text = String::new();
    let mut extras = Vec::new();
    let mut notes = Vec::new();
    let push_text = |text: &mut String, s: &str| {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(s);
    };
    let mut user_only = 0;
    let mut media_tokens = 0u32;
    let mut defanged = 0;
    // Blocks the message cannot carry.
    let mut left = notice::NotCarried::default();
    let mut out = crate::record::no_left_out();
    for (i, block) in content.iter().enumerate() {
        let ty = block.get("type").and_then(Value::as_str).unwrap_or("");
        let audience: Vec<&str> = block
            .pointer("/annotations/audience")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !audience.is_empty() && !audience.contains(&"assistant") {
            user_only += 1;
            continue;
        }
        match ty {
            "text" => {
                let t = block.get("text").and_then(Value::as_str).ok_or_else(|| bad("text block without text"))?;
                push_text(&mut text, t);
            }
            "image" if !carries(format, ty, None) => left.images += 1,
            "audio" if !carries(format, ty, None) => left.audio += 1,
            "image" | "audio" => {
                let data = block.get("data").and_then(Value::as_str).unwrap_or("");
                // Only data that begins as a known type's passes, under
                // that type's name (see `support::media`).
                let mime = block.get("mimeType").and_then(Value::as_str).unwrap_or("");
                let mime = match media::known_type(ty, mime, data) {
                    Ok(known) if !carries(format, ty, Some(known.name)) => {
                        *if ty == "image" { &mut left.images } else { &mut left.audio } += 1;
                        continue;
                    }
                    Ok(known) => known.name,
                    Err(why) => {
                        out.unknown_media += 1;
                        notes.push(notice::media_malformed(i, ty, why));
                        continue;
                    }
                };
                if data.len() as u64 > budget.max_bytes {
                    out.over_cap += 1;
                    notes.push(notice::media_over_cap(i, ty, mime, data.len(), budget.max_bytes));
                    continue;
                }
                let est = if ty == "image" { media::image_tokens(data) } else { media::audio_tokens(data) };
                if media_tokens.saturating_add(est) > budget.max_tokens / 2 {
                    out.over_budget += 1;
                    notes.push(notice::media_over_tokens(i, ty, mime, est, budget.max_tokens));
                    continue;
                }
                media_tokens += est;
                extras.push(if ty == "image" {
                    Extra::Image { data: data.into(), mime: mime.into() }
                } else {
                    Extra::Audio { data: data.into(), mime: mime.into() }
                });
            }
            "resource_link" if !carries(format, ty, None) => {
                // Only the first few URIs are shown (in the notice, which
                // quotes them), and only those are redacted.
                let uri = block.get("uri").and_then(Value::as_str).unwrap_or("");
                if left.uris.len() < notice::LINKS_SHOWN {
                    left.uris.push(pass.redact_text(uri, counts));
                }
                left.links += 1;
            }
            "resource_link" => {
                let mut link = block.clone();
                pass.redact_json(&mut link, counts);
                defanged += defang::json(&mut link, &[]);
                extras.push(Extra::ResourceLink(link));
            }
            "resource" => {
                let r = block.get("resource").ok_or_else(|| bad("resource block without resource"))?;
                let uri = r.get("uri").and_then(Value::as_str).unwrap_or("");
                if let Some(t) = r.get("text").and_then(Value::as_str) {
                    push_text(&mut text, &notice::resource(uri));
                    push_text(&mut text, t);
                } else {
                    let n = r.get("blob").and_then(Value::as_str).map_or(0, str::len);
                    // Quoted in a notice: a media type (nothing that reads
                    // as markup), redacted as the text is.
                    let mime = r.get("mimeType").and_then(Value::as_str).unwrap_or("application/octet-stream");
                    let mime = if media::is_media_type(mime) {
                        pass.redact_text(mime, counts)
                    } else {
                        "an invalid mimeType".into()
                    };
                    out.binary += 1;
                    notes.push(notice::binary_resource(i, &mime, n));
                }
            }
            other => {
                out.unknown_type += 1;
                let what: String = other.chars().filter(char::is_ascii_alphanumeric).take(32).collect();
                notes.push(notice::unknown_block(i, &pass.redact_text(&what, counts)));
            }
        }
    }
    if left.images + left.audio + left.links > 0 {
        out.not_carried = (left.images + left.audio + left.links) as u32;
        notes.push(notice::not_carried(&left, holder(format)));
    }
    let mut twins = 0;
    let carried = carries(format, "structuredContent", None);
    // Left out, and said: too many values to parse within the pipeline's
    // memory, or a message that cannot carry it (unsaid only when it holds
    // nothing the text does not).
    let (given, lost) = match structured {
        Err(values) if carried => (None, Some(notice::structured_too_large(values, STRUCTURED_VALUES_MAX))),
        Err(_) => (None, Some(notice::structured_not_carried(holder(format)))),
        Ok(s) if s.as_ref().is_some_and(|s| !carried && !only_the_text(s, &text)) => {
            (s, Some(notice::structured_not_carried(holder(format))))
        }
        Ok(s) => (s, None),
    };
    if let Some(lost) = lost {
        out.structured_content = true;
        notes.push(lost);
    }
    let structured = given.filter(|_| carried).map(|mut s| {
        if !text.is_empty() && !any_string(&s, &|x| x == TWIN) {
            twins = mark_twins(&mut s, &text);
        }
        pass.redact_json_keeping(&mut s, TWIN, counts);
        // Before thinning, which writes markers of its own in.
        defanged += defang::json(&mut s, &[]);
        s
    });
    Ok(Parsed { text, extras, structured, is_error, notes, left_out: out, user_only, media_tokens, twins, defanged })
}

/// The result as a JSON object, its structured content taken out (or, past
/// [`STRUCTURED_VALUES_MAX`], how many values it holds). Parsed whole
/// when the whole holds no more values than that (a byte scan counts
/// them first); else member by member, the structured content counted,
/// not parsed.
#[allow(clippy::type_complexity)]
fn read(input: &[u8]) -> Result<(Map<String, Value>, Result<Option<Value>, usize>), SanitizeError> {
    // serde_json errors quote no input, only positions.
    let invalid = |e: serde_json::Error| SanitizeError::InvalidInput(format!("MCP input is not valid JSON: {e}"));
    let not_object = || bad("MCP input must be a CallToolResult object");
    if json_scan::values(input) <= STRUCTURED_VALUES_MAX {
        let Value::Object(mut obj) = serde_json::from_slice(input).map_err(invalid)? else {
            return Err(not_object());
        };
        let structured = obj.remove("structuredContent");
        return Ok((obj, Ok(structured)));
    }
    // The last of a repeated name counts, as in a parsed object. Only the
    // members the pipeline reads are parsed (`_meta` and the like could be
    // as large); the rest were checked as JSON.
    let members: BTreeMap<String, &RawValue> = serde_json::from_slice(input).map_err(|e| {
        let object = input.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        match serde_json::from_slice::<IgnoredAny>(input) {
            Ok(_) if !object => not_object(),
            Ok(_) => invalid(e),
            Err(e) => invalid(e),
        }
    })?;
    let (mut obj, mut structured) = (Map::new(), Ok(None));
    for (name, raw) in members {
        if name == "structuredContent" {
            let values = json_scan::values(raw.get().as_bytes());
            structured = match values > STRUCTURED_VALUES_MAX {
                true => Err(values),
                false => Ok(Some(serde_json::from_str(raw.get()).map_err(invalid)?)),
            };
        } else if name == "content" || name == "isError" {
            obj.insert(name, serde_json::from_str(raw.get()).map_err(invalid)?);
        }
    }
    Ok((obj, structured))
}

/// Whether a message of `format` carries a block of type `ty` (one passed
/// through, or `structuredContent`; `image`: an image's type, once known):
/// an OpenAI tool message holds text only, an Anthropic `tool_result` text
/// and the image types Anthropic's API takes ([`ANTHROPIC_IMAGES`]). A
/// block it cannot carry is omitted with a notice, not dropped unsaid, and
/// its tokens are not counted.
fn carries(format: OutputFormat, ty: &str, image: Option<&str>) -> bool {
    match format {
        OutputFormat::Mcp => true,
        OutputFormat::Anthropic => ty == "image" && image.is_none_or(|m| ANTHROPIC_IMAGES.contains(&m)),
        OutputFormat::Openai => false,
    }
}

/// The image types Anthropic's Messages API accepts.
const ANTHROPIC_IMAGES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// The message of `format` and what it holds, as [`notice::not_carried`]
/// says it.
fn holder(format: OutputFormat) -> (&'static str, &'static str) {
    match format {
        OutputFormat::Mcp => ("an MCP result", "every block type"),
        OutputFormat::Anthropic => ("an Anthropic tool_result", "text and JPEG, PNG, GIF or WebP images"),
        OutputFormat::Openai => ("an OpenAI tool message", "text"),
    }
}

/// Whether structured content `s` holds nothing but `text`: the document
/// the text holds (the spec asks tools to repeat it as text), or strings
/// equal to the text alone (read_text_file's `{"content": <file>}`).
fn only_the_text(s: &Value, text: &str) -> bool {
    fn leaves_are(v: &Value, text: &str) -> bool {
        match v {
            Value::String(x) => same_bytes(x.as_bytes(), text.as_bytes()),
            Value::Array(a) => !a.is_empty() && a.iter().all(|x| leaves_are(x, text)),
            Value::Object(o) => !o.is_empty() && o.values().all(|x| leaves_are(x, text)),
            _ => false,
        }
    }
    // The same document: parsed only up to a size (a large text beside
    // small structured content is not parsed into a second copy; a large
    // repeat gets a needless notice, nothing lost).
    let same_doc = || text.len() <= SAME_DOC_MAX && serde_json::from_str::<Value>(text).is_ok_and(|t| &t == s);
    leaves_are(s, text) || same_doc()
}

/// Most values (keys included) of structured content parsed: parsed, a
/// value takes some 50 bytes however short its text (`[0,0,…]` takes 25
/// times its size), and the pipeline's memory is bounded (256 MiB by
/// default). More is left out with a notice; the text still goes (a long
/// one as head + tail).
const STRUCTURED_VALUES_MAX: usize = 1 << 20;

/// Most bytes of a text [`only_the_text`] parses to compare with the
/// structured content: a parsed document takes several times its text.
const SAME_DOC_MAX: usize = 1 << 20;

/// Whether a string of `v` (keys too) satisfies `f`.
fn any_string(v: &Value, f: &impl Fn(&str) -> bool) -> bool {
    match v {
        Value::String(s) => f(s),
        Value::Array(a) => a.iter().any(|x| any_string(x, f)),
        Value::Object(o) => o.iter().any(|(k, x)| f(k) || any_string(x, f)),
        _ => false,
    }
}

/// Replaces each string of `v` equal to `text` by [`TWIN`]; how many.
fn mark_twins(v: &mut Value, text: &str) -> u32 {
    match v {
        Value::String(s) if same_bytes(s.as_bytes(), text.as_bytes()) => {
            *s = TWIN.into();
            1
        }
        Value::Array(a) => a.iter_mut().map(|x| mark_twins(x, text)).sum(),
        Value::Object(o) => o.values_mut().map(|x| mark_twins(x, text)).sum(),
        _ => 0,
    }
}

/// Puts `shown` (the text as the model is shown it, unframed) in place of
/// each [`TWIN`] that thinning kept.
pub fn fill_twins(v: &mut Value, shown: &str) {
    match v {
        Value::String(s) if s == TWIN => *s = shown.into(),
        Value::Array(a) => a.iter_mut().for_each(|x| fill_twins(x, shown)),
        Value::Object(o) => o.values_mut().for_each(|x| fill_twins(x, shown)),
        _ => {}
    }
}
