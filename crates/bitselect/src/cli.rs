//! Command-line flags of `bitselect-mcp`, parsed without I/O so they can be
//! tested.

use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

/// Environment variable that sets the data directory (the flag wins).
pub const DATA_DIR_ENV: &str = "BITSELECT_DATA_DIR";
/// Where `--http` listens when given no address.
pub const DEFAULT_HTTP_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 8848);

pub const USAGE: &str = "\
bitselect-mcp: the Bit Select shop (比特严选) as an MCP server

Usage: bitselect-mcp [--data-dir DIR] [--http [ADDR]] [--allow-remote]

Options:
  --data-dir DIR   keep the shop database in DIR (file DIR/shop.db); default:
                   $BITSELECT_DATA_DIR, else <user data dir>/bitselect
  --http [ADDR]    serve streamable HTTP at http://ADDR/mcp instead of stdio;
                   ADDR is HOST:PORT or PORT, default 127.0.0.1:8848; port 0
                   picks a free port. The bound address is printed to stderr
                   as `bitselect-mcp listening on http://ADDR/mcp`.
  --allow-remote   allow --http on a non-loopback address
  -h, --help       print this help
  -V, --version    print the version

Without --http the server speaks MCP over stdin/stdout. Logs go to stderr;
set RUST_LOG (e.g. RUST_LOG=debug) to change their level.";

/// How the server talks to its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http(SocketAddr),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `None`: the platform default.
    pub data_dir: Option<PathBuf>,
    pub transport: Transport,
    pub allow_remote: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Serve(Options),
    Help,
    Version,
}

/// A command line that cannot be run; the process exits with status 2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

fn parse_addr(text: &str) -> Result<SocketAddr, UsageError> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Some(port) = text.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse().map_err(|_| {
        UsageError(format!(
            "invalid --http address `{text}`: expected HOST:PORT (e.g. 127.0.0.1:8848) or PORT"
        ))
    })
}

/// Parses the arguments after the program name. `env_data_dir` is the value
/// of [`DATA_DIR_ENV`], if set.
pub fn parse(
    args: impl IntoIterator<Item = OsString>,
    env_data_dir: Option<OsString>,
) -> Result<Command, UsageError> {
    let mut args = args.into_iter().peekable();
    let mut data_dir = None;
    let mut transport = Transport::Stdio;
    let mut allow_remote = false;
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|raw| UsageError(format!("argument {raw:?} is not valid UTF-8")))?;
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--data-dir" => {
                let value = match inline {
                    Some(value) => OsString::from(value),
                    None => args
                        .next()
                        .ok_or_else(|| UsageError("--data-dir needs a directory".into()))?,
                };
                if value.is_empty() {
                    return Err(UsageError("--data-dir needs a directory".into()));
                }
                data_dir = Some(PathBuf::from(value));
            }
            "--http" => {
                // The address is optional: take the next argument only if it
                // is not another flag.
                let value = match inline {
                    Some(value) => Some(value),
                    None => match args.peek().and_then(|next| next.to_str()) {
                        Some(next) if !next.starts_with('-') => {
                            let next = next.to_owned();
                            args.next();
                            Some(next)
                        }
                        _ => None,
                    },
                };
                transport = Transport::Http(match value {
                    Some(value) => parse_addr(&value)?,
                    None => DEFAULT_HTTP_ADDR,
                });
            }
            "--allow-remote" if inline.is_none() => allow_remote = true,
            _ => return Err(UsageError(format!("unknown argument `{arg}`"))),
        }
    }
    if let Transport::Http(addr) = transport
        && !addr.ip().is_loopback()
        && !allow_remote
    {
        return Err(UsageError(format!(
            "--http {addr} is not a loopback address; add --allow-remote to expose the shop to the network"
        )));
    }
    let data_dir = data_dir.or_else(|| env_data_dir.filter(|d| !d.is_empty()).map(PathBuf::from));
    Ok(Command::Serve(Options {
        data_dir,
        transport,
        allow_remote,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn run(args: &[&str], env: Option<&str>) -> Result<Command, UsageError> {
        parse(args.iter().map(OsString::from), env.map(OsString::from))
    }

    fn serve(data_dir: Option<&str>, transport: Transport, allow_remote: bool) -> Command {
        Command::Serve(Options {
            data_dir: data_dir.map(PathBuf::from),
            transport,
            allow_remote,
        })
    }

    #[test]
    fn stdio_is_the_default() {
        assert_eq!(run(&[], None), Ok(serve(None, Transport::Stdio, false)));
    }

    #[test]
    fn the_flag_beats_the_environment_for_the_data_dir() {
        assert_eq!(
            run(&[], Some("/env")),
            Ok(serve(Some("/env"), Transport::Stdio, false))
        );
        assert_eq!(
            run(&["--data-dir", "/flag"], Some("/env")),
            Ok(serve(Some("/flag"), Transport::Stdio, false))
        );
        assert_eq!(
            run(&["--data-dir=/inline"], None),
            Ok(serve(Some("/inline"), Transport::Stdio, false))
        );
    }

    #[test]
    fn http_takes_an_optional_address() {
        let at = |s: &str| Transport::Http(s.parse().unwrap());
        assert_eq!(
            run(&["--http"], None),
            Ok(serve(None, Transport::Http(DEFAULT_HTTP_ADDR), false))
        );
        assert_eq!(
            run(&["--http", "127.0.0.1:0"], None),
            Ok(serve(None, at("127.0.0.1:0"), false))
        );
        assert_eq!(
            run(&["--http", "9000", "--data-dir", "d"], None),
            Ok(serve(Some("d"), at("127.0.0.1:9000"), false))
        );
        assert_eq!(
            run(&["--http", "--data-dir", "d"], None),
            Ok(serve(Some("d"), Transport::Http(DEFAULT_HTTP_ADDR), false))
        );
        assert_eq!(
            run(&["--http=localhost:7000"], None),
            Ok(serve(None, at("127.0.0.1:7000"), false))
        );
        assert_eq!(
            run(&["--http", "[::1]:7000"], None),
            Ok(serve(None, at("[::1]:7000"), false))
        );
    }

    #[test]
    fn a_remote_address_needs_allow_remote() {
        let err = run(&["--http", "0.0.0.0:8848"], None).unwrap_err();
        assert!(err.0.contains("--allow-remote"), "{err}");
        assert_eq!(
            run(&["--http", "0.0.0.0:8848", "--allow-remote"], None),
            Ok(serve(
                None,
                Transport::Http("0.0.0.0:8848".parse().unwrap()),
                true
            ))
        );
    }

    #[test]
    fn bad_arguments_are_usage_errors() {
        for args in [
            &["--bogus"][..],
            &["--data-dir"],
            &["--http", "not-an-address"],
            &["serve"],
            &["--allow-remote=yes"],
        ] {
            assert!(run(args, None).is_err(), "{args:?} should be refused");
        }
    }

    #[test]
    fn help_and_version_win() {
        assert_eq!(run(&["--http", "--help"], None), Ok(Command::Help));
        assert_eq!(run(&["-V"], None), Ok(Command::Version));
    }
}
