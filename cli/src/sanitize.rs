//! `sanitize` and `sanitize-round`: one result, or one round of parallel
//! results under a shared budget, read as the pipeline's budget says.

use std::io::{self, Write};
use std::path::PathBuf;

use result_sanitizer_host::api::{self, InputKind, Options, OutputSource};
use result_sanitizer_host::io::{read_capped, read_file_head_tail, read_head_tail};
use result_sanitizer_host::{Error, LoadedPack, Sanitizer};

use crate::flags::SanitizeOpts;
use crate::open::{open, open_input, Opened};

/// Reads one input as the pipeline's budget says: raw output as head +
/// tail with the middle drained (`opts.gap`), MCP and HTML documents whole
/// under `read-bytes`. `len` is a file's size; a regular `file` is read by
/// offset ([`read_file_head_tail`]).
pub(crate) fn read_input(
    s: &Sanitizer,
    pack: &LoadedPack,
    opts: &mut Options,
    (reader, len, file): Opened,
    drain_limit: u64,
) -> Result<Vec<u8>, Error> {
    let b = s.effective_budget(pack, opts)?;
    opts.total_bytes = len;
    if let (Some(file), Some(len), true) = (&file, len, b.head_bytes > 0) {
        // A regular file: head and tail read by offset, the middle scanned
        // up to the bound.
        let ht = read_file_head_tail(s, pack, file, len, (b.head_bytes, b.tail_bytes))?;
        opts.gap = ht.gap;
        return Ok(ht.bytes);
    }
    if b.head_bytes > 0 {
        let ht = read_head_tail(s, pack, reader, b.head_bytes, b.tail_bytes, drain_limit)?;
        opts.gap = ht.gap;
        return Ok(ht.bytes);
    }
    let cap = b.read_bytes.saturating_sub(1);
    let input = read_capped(reader, cap)?;
    if opts.input == InputKind::Mcp && input.over {
        return Err(Error::InvalidInput(format!("MCP input larger than {cap} bytes")));
    }
    Ok(input.bytes)
}

pub(crate) fn sanitize(file: &Option<PathBuf>, so: &SanitizeOpts) -> Result<(), Error> {
    let (s, loaded) = open(so.limits.limits(), &so.packs)?;
    let pack = loaded.as_ref().unwrap_or(s.default_pack());
    let mut opts = so.options();
    // The pipeline derives a source file's content type from its name.
    if opts.file_name.is_none() {
        opts.file_name = file.as_ref().filter(|p| p.as_os_str() != "-").map(|p| p.to_string_lossy().into_owned());
    }
    let opened = open_input(file)?;
    // A regular file can be re-read by offset; stdin cannot.
    opts.source = if opened.1.is_some() { OutputSource::File } else { OutputSource::Pipe };
    let input = read_input(&s, pack, &mut opts, opened, so.drain_limit)?;
    let out = s.sanitize_with(pack, &input, &opts)?;
    outln!("{}", out.message)?;
    Ok(())
}

pub(crate) fn parse_priority(s: &str) -> Result<(String, u32), String> {
    let (tool, w) = s.split_once('=').ok_or("expected TOOL=WEIGHT")?;
    Ok((tool.to_string(), w.parse().map_err(|e| format!("weight: {e}"))?))
}

pub(crate) fn sanitize_round(
    files: &[PathBuf],
    round: api::RoundOptions,
    priorities: &[(String, u32)],
    so: &SanitizeOpts,
) -> Result<(), Error> {
    let (s, loaded) = open(so.limits.limits(), &so.packs)?;
    let pack = loaded.as_ref().unwrap_or(s.default_pack());
    let mut inputs = Vec::with_capacity(files.len());
    for f in files {
        let mut opts = so.options();
        opts.tool = f.file_stem().map(|x| x.to_string_lossy().into_owned()).unwrap_or_default();
        opts.call_id = opts.tool.clone();
        let opened = open_input(&Some(f.clone()))?;
        opts.source = if opened.1.is_some() { OutputSource::File } else { OutputSource::Pipe };
        let input = read_input(&s, pack, &mut opts, opened, so.drain_limit)?;
        let priority = priorities.iter().find(|(t, _)| *t == opts.tool).map_or(1, |(_, w)| *w);
        inputs.push(api::RoundInput { input, options: opts, priority });
    }
    let results = s.sanitize_round(pack, &inputs, &round)?;
    let out: Vec<serde_json::Value> = results
        .into_iter()
        .map(|r| match r {
            Ok(m) => serde_json::from_str(&m.message).expect("validated JSON"),
            Err(e) => serde_json::json!({ "error": e.to_string() }),
        })
        .collect();
    outln!("{}", serde_json::to_string(&out).expect("serializes"))?;
    Ok(())
}
