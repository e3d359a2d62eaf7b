//! The kept mandates checked again and told on a terminal: what the
//! command line tools print (`bitselect-mandates DATABASE`, and the app's
//! own `bitselect-assistant --verify-mandates`) and the exit status they
//! end with.

use std::io::Write;
use std::path::Path;

use super::evidence::{Check, KeptMandate, read_and_check};

/// Every check held (or nothing was kept).
pub const ALL_HOLD: u8 = 0;
/// At least one check does not hold.
pub const ONE_FAILS: u8 = 1;
/// The database could not be read, or the report not written.
pub const UNREADABLE: u8 = 2;

/// Checks every mandate kept in the app's database at `database` and
/// writes the report to `out` (lines of text, or one JSON document with
/// `json`), errors to `err`; the exit status.
pub fn verify_mandates(
    database: &Path,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    if !database.is_file() {
        let _ = writeln!(
            err,
            "no assistant database at {}: nothing to verify there",
            database.display()
        );
        return UNREADABLE;
    }
    let kept = match read_and_check(database) {
        Ok(kept) => kept,
        Err(error) => {
            let _ = writeln!(err, "{error}");
            return UNREADABLE;
        }
    };
    let written = if json {
        serde_json::to_string_pretty(&kept)
            .map_err(std::io::Error::other)
            .and_then(|text| writeln!(out, "{text}"))
    } else if kept.is_empty() {
        writeln!(out, "no mandates kept")
    } else {
        kept.iter().try_for_each(|mandate| write_one(out, mandate))
    };
    if let Err(error) = written {
        let _ = writeln!(err, "cannot write the report: {error}");
        return UNREADABLE;
    }
    if kept.iter().all(|mandate| mandate.evidence.holds()) {
        ALL_HOLD
    } else {
        ONE_FAILS
    }
}

fn write_one(out: &mut dyn Write, mandate: &KeptMandate) -> std::io::Result<()> {
    let verdict = |check: &Check| match check {
        Check::Holds => "holds".to_owned(),
        Check::Fails { reason } => format!("FAILS: {reason}"),
    };
    let total = match (mandate.total, mandate.currency.as_deref()) {
        (Some(minor), Some(currency)) => format!("{}.{:02} {currency}", minor / 100, minor % 100),
        _ => "?".to_owned(),
    };
    let order = match &mandate.order {
        Some(order) => format!(", order {order}"),
        None => ", not completed".to_owned(),
    };
    writeln!(
        out,
        "checkout {} at {}: {total}, signed at {} ms{order}",
        mandate.checkout_id, mandate.merchant, mandate.signed_at,
    )?;
    writeln!(
        out,
        "  mandate:            {}",
        verdict(&mandate.evidence.mandate)
    )?;
    writeln!(
        out,
        "  merchant signature: {}",
        verdict(&mandate.evidence.merchant_signature)
    )?;
    if let Some(receipt) = &mandate.evidence.receipt {
        writeln!(out, "  receipt:            {}", verdict(receipt))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_database_is_said_by_name_and_is_not_an_empty_success() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let status = verify_mandates(
            Path::new("/nonexistent/assistant.db"),
            false,
            &mut out,
            &mut err,
        );
        assert_eq!(status, UNREADABLE);
        assert!(out.is_empty());
        assert!(
            String::from_utf8(err)
                .unwrap()
                .contains("/nonexistent/assistant.db")
        );
    }
}
