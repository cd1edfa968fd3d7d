//! The options' defaults and bounds: the numbers of the spec (256 KiB,
//! 100 000 chars with a 60 000 head and a 20 000 tail, 8 000 tokens), the
//! floors below which a limit cannot hold a marker, and the requests with
//! every field unset that hosts and tests start from. Data only; the
//! budget actually applied is worked out in `options.rs` of the pipeline.

use crate::api::{Encoding, InputKind, Options, OutputFormat, OutputSource, RedactRequest, StructuredFit};

/// Default byte cap.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024;
/// Default character budget.
pub const DEFAULT_MAX_CHARS: u32 = 100_000;
/// Default head share.
pub const DEFAULT_HEAD_CHARS: u32 = 60_000;
/// Default tail share.
pub const DEFAULT_TAIL_CHARS: u32 = 20_000;
/// Default token budget.
pub const DEFAULT_MAX_TOKENS: u32 = 8_000;
/// Smallest token budget that always fits a marker and the boundary.
pub const MIN_MAX_TOKENS: u32 = 256;
/// Smallest character budget.
pub const MIN_MAX_CHARS: u32 = 1_024;
/// Smallest byte cap.
pub const MIN_MAX_BYTES: u64 = 1_024;
/// Largest byte cap the pipeline accepts (guest memory is bounded).
pub const MAX_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Largest MCP result a host reads (MCP input is read whole, then parsed).
pub const MAX_MCP_INPUT: u64 = 64 * 1024 * 1024;

/// A streaming redaction request with every flag off: the caller sets
/// what it needs (`content_type`, `untrusted`, `report`, `pii`, ...).
pub fn redact_request(data: Vec<u8>, last: bool) -> RedactRequest {
    RedactRequest {
        data,
        last,
        content_type: None,
        sniff: false,
        untrusted: false,
        report: false,
        pii: false,
        pii_public_ip: false,
    }
}

/// Options with every field at its default.
pub fn default_options() -> Options {
    Options {
        tool: String::new(),
        call_id: String::new(),
        format: OutputFormat::Mcp,
        input: InputKind::Raw,
        max_bytes: None,
        max_chars: None,
        head_chars: None,
        tail_chars: None,
        max_tokens: None,
        encoding: Encoding::O200kBase,
        untrusted: false,
        content_type: None,
        tool_error: None,
        lenient: false,
        total_bytes: None,
        markup_bytes: None,
        recall_bytes: None,
        recall_tool: None,
        slice: None,
        report_key: None,
        source: OutputSource::Tool,
        gap: None,
        pii: false,
        pii_public_ip: false,
        file_name: None,
        structured_fit: StructuredFit::Marked,
    }
}
