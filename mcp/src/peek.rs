//! What the session reads of a message, without building the rest of it:
//! a client's request ([`Request`]), and a server's response with a
//! tool's result ([`Response`], [`ToolResult`]).
//!
//! A request is remembered by its id, method, tool name and the few
//! arguments that say whether a file tool reads source code. Its other
//! arguments (an `echo` of a megabyte, a file to write) are skipped by
//! serde's `IgnoredAny`: one scan, no allocation, where a
//! `serde_json::Value` would copy every string. A message this typed read
//! refuses (a batch, a duplicate key, a field of another type, bytes that
//! are not UTF-8) is read again as a `Value`, by [`Request::from_value`],
//! so both agree. Where they still differ: a skipped argument is not
//! checked for lone surrogate escapes (`\ud800`) or nesting deeper than
//! 128, which a `Value` refuses. Such a request is then noted as what it
//! names, where a `Value` would have left it unnoted; either way it goes
//! to the server, and the answer is sanitized as a tool's result.
//!
//! A tool's result, the one message that is megabytes, is left as the
//! server wrote it (a borrowed [`RawValue`]) and handed to the pipeline as
//! it is: serde_json writes JSON several times slower than it reads it,
//! so building a `Value` only to write it out again was most of what the
//! proxy added to a large result. The response is scanned once for its
//! members ([`Response::read`]), the result once more for what the proxy
//! decides from it ([`ToolResult::read`]), and, when a recall keeps only
//! its text blocks, once more for where they are
//! ([`ToolResult::text_blocks`]). The pipeline parses the result itself.
//! Where this differs from a `Value`: a result nested deeper than 128 is
//! refused by the pipeline (the result is withheld, saying so) rather than
//! here (withheld as a message that is not JSON).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

/// The arguments that can name the file a tool reads, in the order they
/// are looked at.
pub const PATH_ARGS: [&str; 6] = ["path", "file", "file_path", "filePath", "filename", "uri"];

/// What the session notes of one request.
#[derive(Debug, Default, PartialEq)]
pub struct Request {
    /// `method`, when a string.
    pub method: Option<String>,
    /// `id`, when present (`null` too).
    pub id: Option<Value>,
    /// `params.name`, when a string.
    pub name: Option<String>,
    /// Whether `params.cursor` is present.
    pub cursor: bool,
    /// Whether `params.task` is present.
    pub task: bool,
    /// `params.taskId`, when a string.
    pub task_id: Option<String>,
    /// The string arguments of [`PATH_ARGS`], by index.
    pub paths: [Option<String>; 6],
}

impl Request {
    /// The typed read of one message; `None` when it cannot read it.
    pub fn read(line: &[u8]) -> Option<Self> {
        // An object: serde would also read a struct from an array.
        if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return None;
        }
        let m: Msg<'_> = serde_json::from_str(std::str::from_utf8(line).ok()?).ok()?;
        let p = m.params;
        Some(Self {
            method: m.method.0.map(Cow::into_owned),
            id: m.id,
            name: p.name.0.map(Cow::into_owned),
            cursor: p.cursor,
            task: p.task,
            task_id: p.task_id.0.map(Cow::into_owned),
            paths: p.arguments.0,
        })
    }

    /// The same from a parsed message.
    pub fn from_value(m: &Value) -> Self {
        let params = m.get("params");
        let param = |k: &str| params.and_then(|p| p.get(k));
        let string = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        let args = param("arguments").and_then(Value::as_object);
        Self {
            method: string(m.get("method")),
            id: m.get("id").cloned(),
            name: string(param("name")),
            cursor: param("cursor").is_some(),
            task: param("task").is_some(),
            task_id: string(param("taskId")),
            paths: PATH_ARGS.map(|k| string(args.and_then(|a| a.get(k)))),
        }
    }
}

/// The visits of a [`Visitor`] for every value but the one it reads:
/// each is skipped and gives `$none`.
macro_rules! skip_others {
    ($t:ty, $none:expr) => {
        skip_scalars!($t, $none);
        fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<$t, A::Error> {
            while a.next_element::<IgnoredAny>()?.is_some() {}
            Ok($none)
        }
    };
}

/// The visits of a [`Visitor`] for a number, a boolean and `null`: each
/// gives `$none`.
macro_rules! skip_scalars {
    ($t:ty, $none:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<$t, E> {
            Ok($none)
        }
        fn visit_i64<E>(self, _: i64) -> Result<$t, E> {
            Ok($none)
        }
        fn visit_u64<E>(self, _: u64) -> Result<$t, E> {
            Ok($none)
        }
        fn visit_f64<E>(self, _: f64) -> Result<$t, E> {
            Ok($none)
        }
        fn visit_unit<E>(self) -> Result<$t, E> {
            Ok($none)
        }
    };
}

/// A response of the server that may carry a tool's result.
#[derive(Debug)]
pub struct Response<'a> {
    /// `id` (`null` too).
    pub id: Value,
    /// `jsonrpc`, when present.
    pub jsonrpc: Option<Value>,
    /// `result`, an object, as the server wrote it.
    pub result: &'a RawValue,
}

impl<'a> Response<'a> {
    /// The typed read of one message; `None` unless it is one object (not a
    /// batch) of UTF-8 with an `id`, a `result` object, no `method` and no
    /// `error`, and no escape in its result that could be a lone UTF-16
    /// surrogate: those (which JavaScript servers write) are repaired on
    /// the `Value` path, where the pipeline would refuse them.
    pub fn read(line: &'a [u8]) -> Option<Self> {
        if line.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return None;
        }
        let m: ResponseMsg<'a> = serde_json::from_str(std::str::from_utf8(line).ok()?).ok()?;
        let result = m.result.filter(|r| r.get().starts_with('{'))?;
        if m.method || m.error || may_escape_a_surrogate(result.get()) {
            return None;
        }
        Some(Self { id: m.id?, jsonrpc: m.jsonrpc, result })
    }
}

/// Whether JSON text has a `\uD800`-`\uDFFF` escape (pairs too, and
/// `\\ud800`, which is no escape: a `Value` reads those, only slower).
fn may_escape_a_surrogate(json: &str) -> bool {
    let b = json.as_bytes();
    memchr::memmem::find_iter(b, b"\\u")
        .any(|i| matches!(b.get(i + 2..i + 4), Some([b'd' | b'D', b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'])))
}

#[derive(Deserialize)]
struct ResponseMsg<'a> {
    #[serde(default, deserialize_with = "present")]
    method: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
    #[serde(default, deserialize_with = "present_value")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present_value")]
    jsonrpc: Option<Value>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

/// What the proxy decides from a tool's result (`CallToolResult` JSON),
/// read without building it.
#[derive(Debug, Default, PartialEq)]
pub struct ToolResult {
    /// Whether it has `content`.
    pub content: bool,
    /// Whether its `content` (an array) is of text blocks only and it has
    /// no member but `content`, then optionally `isError`: what a recall
    /// slices ([`Self::text_blocks`]) is then the result itself.
    pub only_text: bool,
    /// For each item of `content` (an array), whether the pipeline joins
    /// its text: a text block, or an embedded resource with text.
    joined: Vec<bool>,
}

impl ToolResult {
    /// Reads `json`, any JSON value (only an object has members); `None`
    /// when it is not JSON or has `content` or `isError` twice.
    pub fn read(json: &str) -> Option<Self> {
        serde_json::from_str(json).ok()
    }

    /// `json` (the result this was read from) with only the items of
    /// `content` whose text the pipeline joins, in order, and its
    /// `isError`: each as the server wrote it.
    pub fn text_blocks(&self, json: &str) -> Option<Vec<u8>> {
        let spans: Spans<'_> = serde_json::from_str(json).ok()?;
        let mut out = b"{\"content\":[".to_vec();
        let kept = spans.content.iter().zip(&self.joined).filter(|(_, j)| **j);
        for (i, (item, _)) in kept.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(item.get().as_bytes());
        }
        out.push(b']');
        if let Some(e) = spans.is_error {
            out.extend_from_slice(b",\"isError\":");
            out.extend_from_slice(e.get().as_bytes());
        }
        out.push(b'}');
        Some(out)
    }
}

impl<'de> Deserialize<'de> for ToolResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ToolResult;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<ToolResult, A::Error> {
                let mut out = ToolResult::default();
                // Members in order: 1 `content`, 2 `isError`, 3 any other.
                let mut order = Vec::new();
                let mut text_only = false;
                while let Some(k) = a.next_key::<MaybeStr<'de>>()? {
                    let member = match k.0.as_deref() {
                        Some("content") => 1,
                        Some("isError") => 2,
                        _ => 3,
                    };
                    if member < 3 && order.contains(&member) {
                        return Err(de::Error::custom("a member twice"));
                    }
                    order.push(member);
                    match member {
                        1 => {
                            out.content = true;
                            let blocks = a.next_value::<Seq<Block<'de>>>()?.0;
                            text_only = blocks.as_ref().is_some_and(|b| b.iter().all(Block::text));
                            out.joined = blocks.unwrap_or_default().iter().map(Block::joined).collect();
                        }
                        _ => {
                            a.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                out.only_text = text_only && matches!(order[..], [1] | [1, 2]);
                Ok(out)
            }
            fn visit_str<E>(self, _: &str) -> Result<ToolResult, E> {
                Ok(ToolResult::default())
            }
            skip_others!(ToolResult, ToolResult::default());
        }
        d.deserialize_any(V)
    }
}

/// The items of an array, each read as `T`; `None` for any other value
/// (skipped).
struct Seq<T>(Option<Vec<T>>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Seq<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Seq<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Seq<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(x) = a.next_element()? {
                    out.push(x);
                }
                Ok(Seq(Some(out)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Seq<T>, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Seq(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Seq<T>, E> {
                Ok(Seq(None))
            }
            skip_scalars!(Seq<T>, Seq(None));
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A `Deserialize` for `$t` (a `Default`, read as `$v`): an object read
/// member by member, `$body` taking each value (or skipping it) with the
/// map access `$a`, its key `$key` (`None` if not a string) and the value
/// built so far `$out`; any other value, skipped, is the default.
macro_rules! members {
    ([$($g:tt)*] $t:ty => $v:ty, |$out:ident, $key:ident, $a:ident| $body:block) => {
        impl<$($g)*> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $v;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str("any JSON value")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut $a: A) -> Result<$v, A::Error> {
                        let mut $out = <$v>::default();
                        while let Some(k) = $a.next_key::<MaybeStr<'de>>()? {
                            let $key = k.0.as_deref();
                            $body
                        }
                        Ok($out)
                    }
                    fn visit_str<E>(self, _: &str) -> Result<$v, E> {
                        Ok(<$v>::default())
                    }
                    skip_others!($v, <$v>::default());
                }
                d.deserialize_any(V)
            }
        }
    };
}

/// One item of `content`: its `type` and its resource's `text`, when
/// strings; the last of duplicate keys, as a `Value` keeps.
#[derive(Default)]
struct Block<'a> {
    ty: MaybeStr<'a>,
    resource: Resource<'a>,
}

members!(['de: 'a, 'a] Block<'a> => Block<'de>, |out, key, a| {
    match key {
        Some("type") => out.ty = a.next_value()?,
        Some("resource") => out.resource = a.next_value()?,
        _ => {
            a.next_value::<IgnoredAny>()?;
        }
    }
});

impl Block<'_> {
    /// A text block.
    fn text(&self) -> bool {
        self.ty.0.as_deref() == Some("text")
    }

    /// A block whose text the pipeline joins: a text block, or an
    /// embedded resource with text.
    fn joined(&self) -> bool {
        self.text() || (self.ty.0.as_deref() == Some("resource") && self.resource.text.0.is_some())
    }
}

/// An embedded resource's `text`, when a string.
#[derive(Default)]
struct Resource<'a> {
    text: MaybeStr<'a>,
}

members!(['de: 'a, 'a] Resource<'a> => Resource<'de>, |out, key, a| {
    if key == Some("text") {
        out.text = a.next_value()?;
    } else {
        a.next_value::<IgnoredAny>()?;
    }
});

/// Where the items of `content` and `isError` are in a result's JSON
/// (the last of duplicate keys); none in any value but an object.
#[derive(Default)]
struct Spans<'a> {
    content: Vec<&'a RawValue>,
    is_error: Option<&'a RawValue>,
}

members!(['de: 'a, 'a] Spans<'a> => Spans<'de>, |out, key, a| {
    match key {
        Some("content") => out.content = a.next_value::<Seq<&RawValue>>()?.0.unwrap_or_default(),
        Some("isError") => out.is_error = Some(a.next_value()?),
        _ => {
            a.next_value::<IgnoredAny>()?;
        }
    }
});

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(borrow, default)]
    method: MaybeStr<'a>,
    #[serde(default, deserialize_with = "present_value")]
    id: Option<Value>,
    #[serde(borrow, default, deserialize_with = "params")]
    params: Params<'a>,
}

#[derive(Deserialize, Default)]
struct Params<'a> {
    #[serde(borrow, default)]
    name: MaybeStr<'a>,
    #[serde(default, deserialize_with = "present")]
    cursor: bool,
    #[serde(default, deserialize_with = "present")]
    task: bool,
    #[serde(borrow, default, rename = "taskId")]
    task_id: MaybeStr<'a>,
    #[serde(default)]
    arguments: Args,
}

/// `params` read as an object; any other value (an array too, which
/// serde would read by position) has none of its members.
fn params<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Params<'a>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Params<'de>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Params<'de>, A::Error> {
            Params::deserialize(de::value::MapAccessDeserializer::new(a))
        }
        fn visit_str<E>(self, _: &str) -> Result<Params<'de>, E> {
            Ok(Params::default())
        }
        skip_others!(Params<'de>, Params::default());
    }
    d.deserialize_any(V)
}

/// Any value, present (`null` included): `Some`.
fn present_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Any value, skipped: present.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    IgnoredAny::deserialize(d).map(|_| true)
}

/// A string, or `None` for any other value (skipped).
#[derive(Default)]
struct MaybeStr<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<Cow<'de, str>>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(s.into())))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(None)
            }
            skip_others!(Self::Value, None);
        }
        d.deserialize_any(V).map(MaybeStr)
    }
}

/// The string arguments of [`PATH_ARGS`]; any other argument, or
/// arguments that are not an object, skipped.
#[derive(Default)]
struct Args([Option<String>; 6]);

members!(['de] Args => Args, |out, key, a| {
    match key.and_then(|k| PATH_ARGS.iter().position(|p| *p == k)) {
        // The last of duplicate keys, as a `Value` keeps.
        Some(i) => out.0[i] = a.next_value::<MaybeStr<'de>>()?.0.map(Cow::into_owned),
        None => {
            a.next_value::<IgnoredAny>()?;
        }
    }
});

/// The content type of the source file a tool's arguments name (`paths`:
/// the string arguments of [`PATH_ARGS`]), if they name one and the tool
/// reads files (its name says `read`, `view`, `open` or `get_file`). The
/// arguments come from the model: any other tool (`run(command="cat .env",
/// file="a.py")`) must not switch redaction to code mode by naming a file.
pub(super) fn code_type(tool: &str, paths: &[Option<String>; 6]) -> Option<String> {
    let t = tool.to_ascii_lowercase();
    if !["read", "view", "open", "get_file"].iter().any(|w| t.contains(w)) {
        return None;
    }
    paths.iter().flatten().find_map(|p| result_sanitizer_rule_engine::content_type_for_path(p)).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both reads agree, on what the typed read accepts.
    fn agree(line: &str) -> Request {
        let typed = Request::read(line.as_bytes()).expect("the typed read accepts it");
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(typed, Request::from_value(&v), "{line}");
        typed
    }

    #[test]
    fn the_typed_read_agrees_with_a_value() {
        let r = agree(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/a.rs","message":"x","n":[1,{"a":2}],"uri":5,"path":"b.py"},"task":null}}"#,
        );
        assert_eq!(r.paths[0].as_deref(), Some("b.py"));
        assert!(r.task && !r.cursor);
        agree(r#"{"id":null,"method":"tools/list","params":{"cursor":"c2"}}"#);
        agree(r#"{"id":"a","method":"tasks/result","params":{"taskId":"t1"}}"#);
        agree(r#"{"id":1,"method":"tools/call","params":{"name":3,"arguments":"s"}}"#);
        agree(r#"{"id":1,"method":"tools/call","params":{"name":{"x":[1]},"arguments":[{"path":"a.rs"}]}}"#);
        agree(r#"{"method":"notifications/progress","params":null}"#);
        agree(r#"{"id":1,"method":"tools/call","params":["read_file",true,true,"t",{"path":"a.rs"}]}"#);
        agree(r#"{"id":1,"method":"tools/call","params":"read_file"}"#);
        agree(r#"{"id":1.5,"method":7,"params":{}}"#);
        agree(r#"{"id":1,"method":"tools/call","params":{"name":"a\u00e9\"b","arguments":{"file":"d\\e.rs"}}}"#);
    }

    #[test]
    fn what_the_typed_read_refuses_is_read_as_a_value() {
        for line in [
            r#"[{"id":1,"method":"ping"}]"#,
            r#"{"id":1,"id":2,"method":"ping"}"#,
            r#"{"id":1,"method":"ping"} x"#,
            r#"["ping",1,{"name":"x"}]"#,
            "not json",
        ] {
            assert!(Request::read(line.as_bytes()).is_none(), "{line}");
        }
        // Not UTF-8 inside a skipped argument.
        let mut bad = br#"{"id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":""#.to_vec();
        bad.extend_from_slice(b"\xff\"}}}");
        assert!(Request::read(&bad).is_none());
    }

    /// What a recall slices, by a `Value`: `content`'s text blocks and
    /// embedded text resources, then `isError` (the rule the typed read
    /// keeps).
    fn blocks_by_value(v: &Value) -> Value {
        let content: Vec<Value> = v["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => true,
                Some("resource") => b.pointer("/resource/text").is_some_and(Value::is_string),
                _ => false,
            })
            .cloned()
            .collect();
        let mut out = serde_json::json!({ "content": content });
        if let Some(e) = v.get("isError") {
            out["isError"] = e.clone();
        }
        out
    }

    #[test]
    fn a_tool_result_is_read_for_its_text_blocks() {
        let cases = [
            (r#"{"content":[{"type":"text","text":"a\nb"}]}"#, true),
            (r#"{"content":[{"type":"text","text":"a"},{"text":"b","type":"text"}],"isError":true}"#, true),
            (r#" { "content" : [ { "type" : "text" , "text" : "a" } ] , "isError" : null } "#, true),
            (r#"{"content":[]}"#, true),
            (r#"{"content":[{"type":"image","type":"text","text":"a"}]}"#, true),
            (r#"{"isError":false,"content":[{"type":"text","text":"a"}]}"#, false),
            (r#"{"content":[{"type":"text","text":"a"}],"structuredContent":{"a":1}}"#, false),
            (r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}"#, false),
            (r#"{"content":[{"type":"resource","resource":{"uri":"f","text":"t"}}]}"#, false),
            (r#"{"content":[{"type":"text","text":"a"}],"_meta":{}}"#, false),
            (r#"{"content":"x","isError":true}"#, false),
            (r#"{"content":{"type":"text","text":"a"}}"#, false),
            (r#"{"content":[1,"a",null,[{"type":"text","text":"a"}],{"type":["text"]}]}"#, false),
            (
                r#"{"structuredContent":{"content":"t"},"content":[{"type":"image","data":"AA=="},{"type":"text","text":"a\u00e9"},{"type":"resource","resource":{"uri":"f","text":"t"}},{"type":"resource","resource":{"uri":"g","blob":"AA=="}},{"type":"resource","resource":{"text":1}}],"isError":false}"#,
                false,
            ),
            (r#"[{"content":[]}]"#, false),
            (r#""text""#, false),
        ];
        for (json, only_text) in cases {
            let read = ToolResult::read(json).expect("read");
            let v: Value = serde_json::from_str(json).unwrap();
            assert_eq!(read.only_text, only_text, "{json}");
            assert_eq!(read.content, v.get("content").is_some(), "{json}");
            let blocks = read.text_blocks(json).expect("spans");
            let blocks: Value = serde_json::from_slice(&blocks).expect("the blocks are JSON");
            assert_eq!(blocks, blocks_by_value(&v), "{json}");
            if only_text {
                assert_eq!(blocks, v, "{json}");
            }
        }
        // Items are kept as written: not read into a `Value` and out again.
        let json = r#"{"content":[{"text":"a\/b \u0041","type":"text"}],"structuredContent":{}}"#;
        let blocks = ToolResult::read(json).unwrap().text_blocks(json).unwrap();
        assert_eq!(String::from_utf8(blocks).unwrap(), r#"{"content":[{"text":"a\/b \u0041","type":"text"}]}"#);
        // Which of two members a `Value` keeps depends on its order: not read.
        for json in [r#"{"content":[],"isError":true,"content":[]}"#, r#"{"isError":1,"isError":2}"#, "{"] {
            assert!(ToolResult::read(json).is_none(), "{json}");
        }
    }

    /// A result-shaped JSON value: members `content` (blocks of any
    /// type, resources with and without text, or any value), `isError`
    /// and others, in any order, or any value at all.
    fn result_like() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::collection::vec;
        use proptest::prelude::*;
        let object = |kv: Vec<(&str, Value)>| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect());
        let leaf = || {
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                Just(Value::from(1)),
                Just(Value::from("text")),
                Just(Value::from("a\nb\u{e9}\"")),
                Just(serde_json::json!({ "type": "text" })),
                Just(serde_json::json!([{ "type": "text", "text": "a" }])),
            ]
        };
        let entry = prop_oneof![
            prop::sample::select(vec!["text", "resource", "image", ""]).prop_map(|t| ("type", Value::from(t))),
            leaf().prop_map(|v| ("type", v)),
            Just(("text", Value::from("a\nb"))),
            prop_oneof![
                Just(serde_json::json!({ "uri": "f", "text": "t" })),
                Just(serde_json::json!({ "text": 1 })),
                Just(serde_json::json!({ "blob": "AA==" })),
                leaf(),
            ]
            .prop_map(|r| ("resource", r)),
            leaf().prop_map(|v| ("x", v)),
        ];
        let block = prop_oneof![4 => vec(entry, 0..4).prop_map(object), 1 => leaf()];
        let content = prop_oneof![4 => vec(block, 0..5).prop_map(Value::Array), 1 => leaf()];
        let member = prop_oneof![
            3 => content.prop_map(|c| ("content", c)),
            2 => leaf().prop_map(|v| ("isError", v)),
            1 => leaf().prop_map(|v| ("structuredContent", v)),
            1 => leaf().prop_map(|v| ("_meta", v)),
        ];
        prop_oneof![8 => vec(member, 0..4).prop_map(object), 1 => leaf()]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// The typed read of any result, compact or pretty, says what a
        /// `Value` of it says.
        #[test]
        fn the_typed_read_of_a_result_agrees_with_a_value(v in result_like(), pretty in proptest::bool::ANY) {
            let json = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
            let read = ToolResult::read(&json).expect("read");
            let o = v.as_object();
            let keys: Vec<&str> = o.map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
            let only_text = matches!(keys[..], ["content"] | ["content", "isError"])
                && v["content"]
                    .as_array()
                    .is_some_and(|c| c.iter().all(|b| b.get("type").and_then(Value::as_str) == Some("text")));
            proptest::prop_assert_eq!(read.only_text, only_text, "{}", json);
            proptest::prop_assert_eq!(read.content, v.get("content").is_some());
            let blocks: Value = serde_json::from_slice(&read.text_blocks(&json).expect("spans")).expect("JSON");
            proptest::prop_assert_eq!(blocks, blocks_by_value(&v), "{}", json);
        }
    }

    #[test]
    fn a_response_is_read_when_its_result_is_an_object() {
        let r = Response::read(br#"{"jsonrpc":"2.0","id":"7","result":{"content":[]}}"#).expect("read");
        assert_eq!((r.id, r.jsonrpc, r.result.get()), ("7".into(), Some("2.0".into()), r#"{"content":[]}"#));
        let r = Response::read(br#" {"result" : {"content":[]} ,"id":null}"#).expect("read");
        assert_eq!((r.id, r.jsonrpc), (Value::Null, None));
        for line in [
            r#"{"id":1,"result":{},"method":"x"}"#,
            r#"{"id":1,"result":{},"error":null}"#,
            r#"{"result":{}}"#,
            r#"{"id":1,"result":null}"#,
            r#"{"id":1,"result":[{}]}"#,
            r#"{"id":1,"result":{},"result":{}}"#,
            r#"[{"id":1,"result":{}}]"#,
            r#"{"id":1,"result":{"content":[{"type":"text","text":"\ud83d\ude00"}]}}"#,
            r#"{"id":1,"result":{"content":[{"type":"text","text":"\uDC00"}]}}"#,
            r#"{"id":1,"result":{}} x"#,
        ] {
            assert!(Response::read(line.as_bytes()).is_none(), "{line}");
        }
        // Not UTF-8 inside the result: repaired on the `Value` path.
        assert!(Response::read(b"{\"id\":1,\"result\":{\"a\":\"\xff\"}}").is_none());
        // Other escapes are passed on.
        assert!(Response::read(br#"{"id":1,"result":{"a":"\u00e9\\u\u0064800"}}"#).is_some());
    }
}
