//! How a text over its budget is cut, by content class: JSON thinned and
//! still valid, whole records for JSON lines and CSV, error lines rescued
//! from the omitted middle of a log.

pub(crate) mod error_lines;
pub(crate) mod json;
pub(crate) mod json_gap;
pub(crate) mod records;
