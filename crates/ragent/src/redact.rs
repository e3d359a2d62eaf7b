//! What stands in for a secret value in `Debug` output, so that logging a
//! setting or a server's configuration leaks nothing.

use std::collections::BTreeMap;

/// Stands in for a secret in `Debug` output.
pub(crate) const REDACTED: &str = "<redacted>";

/// A map's keys with every value hidden.
pub(crate) fn redacted_values<S>(map: &BTreeMap<String, S>) -> BTreeMap<&str, &str> {
    map.keys().map(|k| (k.as_str(), REDACTED)).collect()
}
