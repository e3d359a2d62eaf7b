//! `bitselect-mandates`: the checkout mandates the app signed for its
//! shopper, read from its database and each verified again offline: the
//! device's signature over exactly the checkout kept, made out to that
//! merchant and checkout; the merchant's signature on the checkout, with the
//! keys it published when the shopper approved; and the merchant's signed
//! receipt. Exit status 0 when every check holds, 1 when one does not, 2
//! when the database cannot be read.

use std::path::PathBuf;
use std::process::ExitCode;

use ragent::ucp::evidence::{Check, KeptMandate, read_and_check};

const USAGE: &str = "\
bitselect-mandates: verify, offline, the checkout mandates the assistant signed

Usage: bitselect-mandates DATABASE [--json]

  DATABASE   the assistant's database, assistant.db in its data directory
  --json     one JSON document instead of lines of text";

fn main() -> ExitCode {
    let mut database: Option<PathBuf> = None;
    let mut json = false;
    for arg in std::env::args_os().skip(1) {
        match arg.to_str() {
            Some("--json") => json = true,
            Some("--help" | "-h") => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ if database.is_none() => database = Some(PathBuf::from(arg)),
            _ => {
                eprintln!("bitselect-mandates: unexpected {arg:?}\n\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(database) = database else {
        eprintln!("bitselect-mandates: which database?\n\n{USAGE}");
        return ExitCode::from(2);
    };
    let kept = match read_and_check(&database) {
        Ok(kept) => kept,
        Err(error) => {
            eprintln!("bitselect-mandates: {error}");
            return ExitCode::from(2);
        }
    };
    if json {
        match serde_json::to_string_pretty(&kept) {
            Ok(text) => println!("{text}"),
            Err(error) => {
                eprintln!("bitselect-mandates: {error}");
                return ExitCode::from(2);
            }
        }
    } else if kept.is_empty() {
        println!("no mandates kept");
    } else {
        for mandate in &kept {
            print_one(mandate);
        }
    }
    if kept.iter().all(|mandate| mandate.evidence.holds()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn print_one(mandate: &KeptMandate) {
    let verdict = |check: &Check| match check {
        Check::Holds => "holds".to_owned(),
        Check::Fails { reason } => format!("FAILS: {reason}"),
    };
    let total = match (mandate.total, mandate.currency.as_deref()) {
        (Some(minor), Some(currency)) => format!("{}.{:02} {currency}", minor / 100, minor % 100),
        _ => "?".to_owned(),
    };
    println!(
        "checkout {} at {}: {total}, signed at {} ms{}",
        mandate.checkout_id,
        mandate.merchant,
        mandate.signed_at,
        match &mandate.order {
            Some(order) => format!(", order {order}"),
            None => ", not completed".to_owned(),
        }
    );
    println!(
        "  mandate:            {}",
        verdict(&mandate.evidence.mandate)
    );
    println!(
        "  merchant signature: {}",
        verdict(&mandate.evidence.merchant_signature)
    );
    if let Some(receipt) = &mandate.evidence.receipt {
        println!("  receipt:            {}", verdict(receipt));
    }
}
