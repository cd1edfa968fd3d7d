//! What the session notes of a client's request, read without building
//! the rest of it.
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

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
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
        fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<$t, A::Error> {
            while a.next_element::<IgnoredAny>()?.is_some() {}
            Ok($none)
        }
    };
}

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

impl<'de> Deserialize<'de> for Args {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Args;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Args, A::Error> {
                let mut out = Args::default();
                while let Some(k) = a.next_key::<MaybeStr<'de>>()? {
                    match k.0.and_then(|k| PATH_ARGS.iter().position(|p| *p == k)) {
                        // The last of duplicate keys, as a `Value` keeps.
                        Some(i) => out.0[i] = a.next_value::<MaybeStr<'de>>()?.0.map(Cow::into_owned),
                        None => {
                            a.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(out)
            }
            fn visit_str<E>(self, _: &str) -> Result<Args, E> {
                Ok(Args::default())
            }
            skip_others!(Args, Args::default());
        }
        d.deserialize_any(V)
    }
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
}
