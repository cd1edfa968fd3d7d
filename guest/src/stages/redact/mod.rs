//! Secret and path redaction: the rule engine (`rule-engine/src/stages/redact/`,
//! whose module docs give the algorithm), re-exported at this path, and
//! where each redaction was made, for a report ([`sites`]).

mod sites;

pub(crate) use result_sanitizer_rule_engine::stages::redact::*;
pub(crate) use sites::sites;
