//! The WIT package, embedded, parsed on demand.

use anyhow::Result;
use wit_parser::{PackageId, Resolve, SourceMap, WorldId};

/// Version of the WIT package this host speaks.
pub use pack_format::WIT_VERSION;
/// Interface name of rule packs, as seen in component imports and exports.
pub const RULE_PACK_INTERFACE: &str = "result-sanitizer:core/rule-pack@0.1.0";
/// The pipeline's import of the platform pack (same functions as `rule-pack`).
pub const PLATFORM_INTERFACE: &str = "result-sanitizer:core/platform@0.1.0";

const SOURCES: &[(&str, &str)] = &[
    ("rule-pack.wit", include_str!("../../wit/rule-pack.wit")),
    ("result-sanitizer.wit", include_str!("../../wit/result-sanitizer.wit")),
];

/// The parsed package.
pub fn resolve() -> Result<(Resolve, PackageId)> {
    let mut map = SourceMap::new();
    for (name, text) in SOURCES {
        map.push_str(name, *text);
    }
    let mut resolve = Resolve::default();
    let group = map.parse().map_err(|(_, e)| anyhow::anyhow!("embedded WIT: {e}"))?;
    let pkg = resolve.push_group(group)?;
    Ok((resolve, pkg))
}

/// A world of the package by name (`pipeline` or `pack`).
pub fn world(resolve: &Resolve, pkg: PackageId, name: &str) -> Result<WorldId> {
    resolve.select_world(&[pkg], Some(name))
}
