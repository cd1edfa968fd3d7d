//! The text the model sees besides the content itself: truncation
//! markers, the untrusted-source boundary, the tool-error line and notices.
//! Every such string is built here, so its wording lives in one place.

pub(crate) mod marker;
