//! What the app is told on its command line.

use std::ffi::OsString;
use std::path::PathBuf;

/// Options given on the command line; anything not given takes its default.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LaunchOptions {
    /// Where the app keeps its databases; the OS app-data dir when absent.
    pub data_dir: Option<PathBuf>,
    /// Instead of opening the window: check the kept checkout mandates
    /// again, offline, and print what was found (as JSON when asked).
    pub verify_mandates: Option<ReportFormat>,
}

/// How a report on the terminal is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Text,
    Json,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LaunchOptionsError {
    #[error("--data-dir needs a directory after it")]
    MissingDataDir,
    #[error("--json only goes with --verify-mandates")]
    JsonAlone,
    #[error("unknown option {0:?}; the app takes: --data-dir DIR, --verify-mandates [--json]")]
    Unknown(String),
}

impl LaunchOptions {
    /// Parses the arguments after the program name.
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Self, LaunchOptionsError> {
        let mut options = LaunchOptions::default();
        let mut json = false;
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.to_str() {
                Some("--verify-mandates") => options.verify_mandates = Some(ReportFormat::Text),
                Some("--json") => json = true,
                // WebKitWebDriver launches the app with these when it drives it.
                Some(flag) if flag == "--automation" || flag.starts_with("--target=") => {}
                Some("--data-dir") => {
                    let dir = args.next().ok_or(LaunchOptionsError::MissingDataDir)?;
                    options.data_dir = Some(PathBuf::from(dir));
                }
                _ => {
                    return Err(LaunchOptionsError::Unknown(
                        arg.to_string_lossy().into_owned(),
                    ));
                }
            }
        }
        match (&mut options.verify_mandates, json) {
            (Some(format), true) => *format = ReportFormat::Json,
            (None, true) => return Err(LaunchOptionsError::JsonAlone),
            _ => {}
        }
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<LaunchOptions, LaunchOptionsError> {
        LaunchOptions::parse(args.iter().map(OsString::from))
    }

    #[test]
    fn no_arguments_keep_the_defaults() {
        assert_eq!(parse(&[]), Ok(LaunchOptions::default()));
    }

    #[test]
    fn data_dir_is_taken_from_its_flag() {
        assert_eq!(
            parse(&["--data-dir", "/tmp/shop"]),
            Ok(LaunchOptions {
                data_dir: Some(PathBuf::from("/tmp/shop")),
                ..LaunchOptions::default()
            })
        );
    }

    #[test]
    fn the_webdriver_launch_flags_are_accepted() {
        assert_eq!(
            parse(&["--automation", "--target=127.0.0.1:4445", "--data-dir", "d"]),
            Ok(LaunchOptions {
                data_dir: Some(PathBuf::from("d")),
                ..LaunchOptions::default()
            })
        );
    }

    #[test]
    fn a_flag_without_its_value_is_refused() {
        assert_eq!(
            parse(&["--data-dir"]),
            Err(LaunchOptionsError::MissingDataDir)
        );
    }

    #[test]
    fn an_unknown_flag_is_refused_by_name() {
        assert_eq!(
            parse(&["--verbose"]),
            Err(LaunchOptionsError::Unknown("--verbose".into()))
        );
    }

    #[test]
    fn verifying_mandates_is_asked_for_with_or_without_json_and_json_alone_is_refused() {
        assert_eq!(
            parse(&["--verify-mandates"]).unwrap().verify_mandates,
            Some(ReportFormat::Text)
        );
        let both = parse(&["--json", "--data-dir", "/tmp/a", "--verify-mandates"]).unwrap();
        assert_eq!(both.verify_mandates, Some(ReportFormat::Json));
        assert_eq!(both.data_dir, Some(PathBuf::from("/tmp/a")));
        assert_eq!(parse(&["--json"]), Err(LaunchOptionsError::JsonAlone));
    }
}
