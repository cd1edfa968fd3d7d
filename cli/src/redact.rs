//! `redact`: a stream redacted in constant memory, with an optional
//! report of each replacement (keyed hashes, never values).

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;

use result_sanitizer_host::io::{redact_stream, StreamOptions};
use result_sanitizer_host::report::Report;
use result_sanitizer_host::Error;

use crate::flags::{LimitOpts, PackOpts, PiiOpts};
use crate::open::{content_type_of, open, open_input};

/// The `redact` subcommand's own flags.
pub(crate) struct RedactFlags<'a> {
    pub(crate) content_type: &'a Option<String>,
    pub(crate) report: &'a Option<PathBuf>,
    pub(crate) untrusted: bool,
    pub(crate) sniff: bool,
    pub(crate) threads: usize,
    pub(crate) pii: PiiOpts,
}

pub(crate) fn redact(
    file: &Option<PathBuf>,
    flags: RedactFlags<'_>,
    po: &PackOpts,
    limits: &LimitOpts,
) -> Result<(), Error> {
    let (s, loaded) = open(limits.limits(), po)?;
    let pack = loaded.as_ref().unwrap_or(s.default_pack());
    let (reader, _, _) = open_input(file)?;
    let stdout = io::stdout().lock();
    let mut report_file = match flags.report {
        Some(p) => Some(io::BufWriter::new(
            File::create(p).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))?,
        )),
        None => None,
    };
    let mut opts = StreamOptions {
        content_type: flags.content_type.clone().or_else(|| content_type_of(file)),
        untrusted: flags.untrusted,
        sniff: flags.sniff,
        pii: flags.pii.pii,
        pii_public_ip: flags.pii.pii_public_ip,
        threads: flags.threads,
        ..StreamOptions::default()
    };
    if let Some(w) = report_file.as_mut() {
        opts.report = Some(Report::new(w, None)?);
    }
    redact_stream(&s, pack, reader, io::BufWriter::new(stdout), &mut opts)?;
    drop(opts);
    if let Some(mut w) = report_file {
        w.flush()?;
    }
    Ok(())
}
