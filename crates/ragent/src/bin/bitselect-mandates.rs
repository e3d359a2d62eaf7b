//! `bitselect-mandates`: the checkout mandates the app signed for its
//! shopper, read from its database and each verified again offline: the
//! device's signature over exactly the checkout kept, made out to that
//! merchant and checkout; the merchant's signature on the checkout, with the
//! keys it published when the shopper approved; and the merchant's signed
//! receipt. Exit status 0 when every check holds, 1 when one does not, 2
//! when the database cannot be read.

use std::path::PathBuf;
use std::process::ExitCode;

use ragent::ucp::evidence_report::verify_mandates;

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
    let status = verify_mandates(
        &database,
        json,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    ExitCode::from(status)
}
