//! Command-line flags of `bitselect-mcp`, parsed without I/O so they can be
//! tested.

use std::ffi::OsString;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use crate::auth::AuthConfig;
use crate::origins::AllowedOrigins;
use crate::serve::HttpAccess;

/// Environment variable that sets the data directory (the flag wins).
pub const DATA_DIR_ENV: &str = "BITSELECT_DATA_DIR";
/// Environment variables that set the authorization server and the
/// resource URL (the flags win).
pub const AUTH_ISSUER_ENV: &str = "BITSELECT_AUTH_ISSUER";
pub const RESOURCE_URL_ENV: &str = "BITSELECT_RESOURCE_URL";
/// Environment variable that names a PostgreSQL database (the flag wins).
pub const DATABASE_URL_ENV: &str = "BITSELECT_DATABASE_URL";
/// Where `--http` listens when given no address.
pub const DEFAULT_HTTP_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 8848);

pub const USAGE: &str = "\
bitselect-mcp: the Bit Select shop (比特严选) as an MCP server

Usage: bitselect-mcp [--data-dir DIR | --database-url URL] [--http [ADDR]]
                     [--allow-remote] [--allowed-origin ORIGIN]...
                     [--auth-issuer URL --resource-url URL]
       bitselect-mcp seed-users --count N [--data-dir DIR | --database-url URL]
       bitselect-mcp rotate-signing-key [--data-dir DIR | --database-url URL]

Commands:
  (none)           serve the shop (below)
  seed-users       add load-test users load-00001 … load-N to the shop, each
                   with three cart lines and a coupon of their own (LOAD-00001
                   …), print what was made as JSON on stdout, and exit. The
                   same catalogue and N give the same users, lines and coupons;
                   users that exist already are left as they are.
  rotate-signing-key
                   make a new key for the merchant's checkout signatures, sign
                   with it from now on (every instance, at its next
                   signature), print its public key (JWK) as JSON on stdout,
                   and exit. The keys it replaces stay published for one
                   checkout lifetime (six hours), so checkouts already signed
                   still verify.

Options:
  --data-dir DIR   keep the shop database in DIR (file DIR/shop.db); default:
                   $BITSELECT_DATA_DIR, else <user data dir>/bitselect
  --database-url URL
                   keep the shop in this PostgreSQL database instead
                   (postgres://USER:PASSWORD@HOST:PORT/DB, or the key=value
                   form); default: $BITSELECT_DATABASE_URL, else SQLite in
                   --data-dir. The schema is created or upgraded and, on first
                   start, the demo data seeded. Any number of instances may
                   share one database: with --http and sign-in they serve any
                   shopper's request, so they can stand behind a load balancer.
                   The password is never logged.
  --http [ADDR]    serve streamable HTTP at http://ADDR/mcp instead of stdio;
                   ADDR is HOST:PORT or PORT, default 127.0.0.1:8848; port 0
                   picks a free port. ADDR fd:N serves on the listening TCP
                   socket inherited as descriptor N (from a service manager,
                   or a parent that bound the port). The bound address is
                   printed to stderr as `bitselect-mcp listening on
                   http://ADDR/mcp`.
  --allow-remote   allow --http on a non-loopback address
  --allowed-origin ORIGIN
                   (--http) serve MCP requests that a web page at ORIGIN
                   (https://app.example, scheme, host and port) sends; may be
                   given again for more. A request with any other `Origin`
                   header gets 403; none is allowed by default. Requests
                   without `Origin` (native clients) are served.
  --auth-issuer URL
                   (--http) require sign-in: accept only JWT access tokens
                   issued by this OAuth authorization server (its metadata at
                   URL/.well-known/oauth-authorization-server or
                   /openid-configuration names its keys); default:
                   $BITSELECT_AUTH_ISSUER. Needs --resource-url.
  --resource-url URL
                   (--http) the URL clients reach the MCP endpoint by (e.g.
                   https://shop.example/mcp): a token's audience must hold it,
                   and the resource metadata is served at
                   /.well-known/oauth-protected-resource<its path>; default:
                   $BITSELECT_RESOURCE_URL. Needs --auth-issuer.
  --count N        (seed-users) how many users, 1 to 100000
  -h, --help       print this help
  -V, --version    print the version

Without --http the server speaks MCP over stdin/stdout, and every call acts
for the demo user (the seed's shopper). With --http alone every call acts
for the demo user too, with no sign-in (a warning says so). With --http,
--auth-issuer and --resource-url each request must carry
`Authorization: Bearer <JWT>`; its `sub` is the shopper (created on first
sight), and a request without a valid token gets 401 with a
WWW-Authenticate header that names the resource metadata. GET /healthz
answers `ok` without sign-in. Logs go to stderr, one line per tool call
(user, tool, outcome, ms); set RUST_LOG (e.g. RUST_LOG=debug) to change
their level.";

/// How the server talks to its client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http(SocketAddr),
    /// Streamable HTTP on a listening TCP socket the process inherited on
    /// this descriptor (from a service manager, or a parent that bound the
    /// port it named in the resource URL).
    HttpInherited(i32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `None`: the platform default.
    pub data_dir: Option<PathBuf>,
    /// A PostgreSQL database to keep the shop in instead of SQLite.
    pub database_url: Option<String>,
    pub transport: Transport,
    /// Other machines, and which web pages, may reach `--http`.
    pub http_access: HttpAccess,
    /// Sign-in over HTTP; `None`: none (stdio, or HTTP for the demo user).
    pub auth: Option<AuthConfig>,
}

/// The environment variables the command line reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    pub data_dir: Option<OsString>,
    pub database_url: Option<OsString>,
    pub auth_issuer: Option<OsString>,
    pub resource_url: Option<OsString>,
}

impl Env {
    pub fn from_process() -> Self {
        Self {
            data_dir: std::env::var_os(DATA_DIR_ENV),
            database_url: std::env::var_os(DATABASE_URL_ENV),
            auth_issuer: std::env::var_os(AUTH_ISSUER_ENV),
            resource_url: std::env::var_os(RESOURCE_URL_ENV),
        }
    }
}

/// What `seed-users` is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedUsersOptions {
    /// `None`: the platform default.
    pub data_dir: Option<PathBuf>,
    /// A PostgreSQL database to keep the shop in instead of SQLite.
    pub database_url: Option<String>,
    pub count: u32,
}

/// Which store a one-off command acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// `None`: the platform default.
    pub data_dir: Option<PathBuf>,
    /// A PostgreSQL database to keep the shop in instead of SQLite.
    pub database_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Boxed: the serving options are far larger than the other commands'.
    Serve(Box<Options>),
    SeedUsers(SeedUsersOptions),
    RotateSigningKey(StoreOptions),
    Help,
    Version,
}

/// The subcommand that adds load-test users.
pub const SEED_USERS: &str = "seed-users";

/// The subcommand that rotates the merchant's signing key.
pub const ROTATE_SIGNING_KEY: &str = "rotate-signing-key";

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

/// The descriptor of an inherited listening socket: not stdin, stdout or
/// stderr.
fn parse_fd(text: &str) -> Result<i32, UsageError> {
    match text.parse::<i32>() {
        Ok(fd) if fd > 2 => Ok(fd),
        _ => Err(UsageError(format!(
            "invalid --http fd:{text}: expected the number of an inherited listening socket, 3 or more"
        ))),
    }
}

/// A flag's value: after `=`, else the next argument.
fn flag_value(
    flag: &str,
    inline: Option<String>,
    args: &mut impl Iterator<Item = OsString>,
    what: &str,
) -> Result<OsString, UsageError> {
    let value = match inline {
        Some(value) => OsString::from(value),
        None => args
            .next()
            .ok_or_else(|| UsageError(format!("{flag} needs {what}")))?,
    };
    if value.is_empty() {
        return Err(UsageError(format!("{flag} needs {what}")));
    }
    Ok(value)
}

/// One argument as UTF-8, split at `=` when it is a long flag with a value.
fn split_flag(arg: OsString) -> Result<(String, Option<String>), UsageError> {
    let arg = arg
        .into_string()
        .map_err(|raw| UsageError(format!("argument {raw:?} is not valid UTF-8")))?;
    Ok(match arg.split_once('=') {
        Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), Some(value.to_owned())),
        _ => (arg, None),
    })
}

fn data_dir_or_env(data_dir: Option<PathBuf>, env_data_dir: Option<OsString>) -> Option<PathBuf> {
    data_dir.or_else(|| env_data_dir.filter(|d| !d.is_empty()).map(PathBuf::from))
}

/// The PostgreSQL database: the flag, else the environment's unless
/// `--data-dir` asked for SQLite. Both flags at once are refused.
fn database_url_or_env(
    flag: Option<OsString>,
    data_dir: &Option<PathBuf>,
    env: &Env,
) -> Result<Option<String>, UsageError> {
    match (flag, data_dir) {
        (Some(_), Some(_)) => Err(UsageError(
            "--database-url and --data-dir choose two different stores; give one".into(),
        )),
        (Some(url), None) => text_or_env(Some(url), &None, "--database-url"),
        (None, Some(_)) => Ok(None),
        (None, None) => text_or_env(None, &env.database_url, DATABASE_URL_ENV),
    }
}

/// A flag's text value, else the environment's when set and not empty.
fn text_or_env(
    flag: Option<OsString>,
    env: &Option<OsString>,
    name: &str,
) -> Result<Option<String>, UsageError> {
    let value = flag.or_else(|| env.clone().filter(|v| !v.is_empty()));
    value
        .map(|v| {
            v.into_string()
                .map_err(|raw| UsageError(format!("{name} {raw:?} is not valid UTF-8")))
        })
        .transpose()
}

/// Sign-in settings: both the issuer and the resource URL, or neither; only
/// for HTTP. The environment's are ignored for stdio, whose one client is
/// the app that spawned it.
fn auth_options(
    issuer: Option<OsString>,
    resource: Option<OsString>,
    transport: Transport,
    env: &Env,
) -> Result<Option<AuthConfig>, UsageError> {
    if matches!(transport, Transport::Stdio) {
        if issuer.is_some() || resource.is_some() {
            return Err(UsageError(
                "--auth-issuer and --resource-url are for --http only; stdio is not signed in"
                    .into(),
            ));
        }
        return Ok(None);
    }
    let issuer = text_or_env(issuer, &env.auth_issuer, "--auth-issuer")?;
    let resource = text_or_env(resource, &env.resource_url, "--resource-url")?;
    match (issuer, resource) {
        (None, None) => Ok(None),
        (Some(issuer), Some(resource)) => AuthConfig::new(&issuer, &resource)
            .map(Some)
            .map_err(|error| UsageError(error.to_string())),
        (Some(_), None) => Err(UsageError(format!(
            "--auth-issuer needs --resource-url (or ${RESOURCE_URL_ENV})"
        ))),
        (None, Some(_)) => Err(UsageError(format!(
            "--resource-url needs --auth-issuer (or ${AUTH_ISSUER_ENV})"
        ))),
    }
}

/// Parses the arguments after the program name, with the environment's
/// values for what the flags leave out.
pub fn parse(args: impl IntoIterator<Item = OsString>, env: &Env) -> Result<Command, UsageError> {
    let env_data_dir = env.data_dir.clone();
    let mut args = args.into_iter().peekable();
    if args.peek().is_some_and(|first| first == SEED_USERS) {
        args.next();
        return parse_seed_users(args, env);
    }
    if args.peek().is_some_and(|first| first == ROTATE_SIGNING_KEY) {
        args.next();
        return parse_rotate_signing_key(args, env);
    }
    let mut database_url = None;
    let mut auth_issuer = None;
    let mut resource_url = None;
    let mut data_dir = None;
    let mut transport = Transport::Stdio;
    let mut allow_remote = false;
    let mut allowed_origins = Vec::new();
    while let Some(arg) = args.next() {
        let (flag, inline) = split_flag(arg)?;
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--data-dir" => {
                let value = flag_value(&flag, inline, &mut args, "a directory")?;
                data_dir = Some(PathBuf::from(value));
            }
            "--database-url" => {
                database_url = Some(flag_value(&flag, inline, &mut args, "a URL")?);
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
                transport = match value {
                    Some(value) => match value.strip_prefix("fd:") {
                        Some(fd) => Transport::HttpInherited(parse_fd(fd)?),
                        None => Transport::Http(parse_addr(&value)?),
                    },
                    None => Transport::Http(DEFAULT_HTTP_ADDR),
                };
            }
            "--allow-remote" if inline.is_none() => allow_remote = true,
            "--allowed-origin" => {
                let value = flag_value(&flag, inline, &mut args, "an origin")?;
                allowed_origins.push(value.to_string_lossy().into_owned());
            }
            "--auth-issuer" => {
                auth_issuer = Some(flag_value(&flag, inline, &mut args, "a URL")?);
            }
            "--resource-url" => {
                resource_url = Some(flag_value(&flag, inline, &mut args, "a URL")?);
            }
            _ => return Err(unknown(&flag, inline)),
        }
    }
    let auth = auth_options(auth_issuer, resource_url, transport, env)?;
    if matches!(transport, Transport::Stdio) && !allowed_origins.is_empty() {
        return Err(UsageError(
            "--allowed-origin is for --http only; stdio has no web pages to allow".into(),
        ));
    }
    let allowed_origins =
        AllowedOrigins::new(&allowed_origins).map_err(|error| UsageError(error.to_string()))?;
    if let Transport::Http(addr) = transport
        && !addr.ip().is_loopback()
        && !allow_remote
    {
        return Err(UsageError(format!(
            "--http {addr} is not a loopback address; add --allow-remote to expose the shop to the network"
        )));
    }
    let database_url = database_url_or_env(database_url, &data_dir, env)?;
    Ok(Command::Serve(Box::new(Options {
        data_dir: data_dir_or_env(data_dir, env_data_dir),
        database_url,
        transport,
        http_access: HttpAccess {
            allow_remote,
            allowed_origins,
        },
        auth,
    })))
}

fn unknown(flag: &str, inline: Option<String>) -> UsageError {
    match inline {
        Some(value) => UsageError(format!("unknown argument `{flag}={value}`")),
        None => UsageError(format!("unknown argument `{flag}`")),
    }
}

/// `seed-users --count N [--data-dir DIR | --database-url URL]`.
fn parse_seed_users(
    args: impl Iterator<Item = OsString>,
    env: &Env,
) -> Result<Command, UsageError> {
    let mut count = None;
    let store = parse_one_off(args, env, |flag, inline, args| match flag {
        "--count" => {
            let value = flag_value(flag, inline, args, "a number")?;
            let text = value.to_string_lossy();
            let n = text
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=crate::load_users::MAX_COUNT).contains(n))
                .ok_or_else(|| {
                    UsageError(format!(
                        "--count must be a whole number from 1 to {}, got `{text}`",
                        crate::load_users::MAX_COUNT
                    ))
                })?;
            count = Some(n);
            Ok(())
        }
        _ => Err(unknown(flag, inline)),
    })?;
    let Some(StoreOptions {
        data_dir,
        database_url,
    }) = store
    else {
        return Ok(Command::Help);
    };
    let count = count.ok_or_else(|| UsageError(format!("{SEED_USERS} needs --count N")))?;
    Ok(Command::SeedUsers(SeedUsersOptions {
        data_dir,
        database_url,
        count,
    }))
}

/// `rotate-signing-key [--data-dir DIR | --database-url URL]`.
fn parse_rotate_signing_key(
    args: impl Iterator<Item = OsString>,
    env: &Env,
) -> Result<Command, UsageError> {
    let store = parse_one_off(args, env, |flag, inline, _| Err(unknown(flag, inline)))?;
    Ok(store.map_or(Command::Help, Command::RotateSigningKey))
}

/// A one-off command's flags: the store's and `--help` here, every other
/// flag (with its inline value and the arguments after it) to `other`.
/// `None` when help was asked for.
fn parse_one_off<I: Iterator<Item = OsString>>(
    mut args: I,
    env: &Env,
    mut other: impl FnMut(&str, Option<String>, &mut I) -> Result<(), UsageError>,
) -> Result<Option<StoreOptions>, UsageError> {
    let mut store = StoreFlags::default();
    while let Some(arg) = args.next() {
        let (flag, inline) = split_flag(arg)?;
        if flag == "-h" || flag == "--help" {
            return Ok(None);
        }
        if !store.take(&flag, &inline, &mut args)? {
            other(&flag, inline, &mut args)?;
        }
    }
    store.resolve(env).map(Some)
}

/// The store flags a one-off command takes, as given.
#[derive(Default)]
struct StoreFlags {
    data_dir: Option<PathBuf>,
    database_url: Option<OsString>,
}

impl StoreFlags {
    /// Takes `flag` (and its value) if it chooses the store.
    fn take(
        &mut self,
        flag: &str,
        inline: &Option<String>,
        args: &mut impl Iterator<Item = OsString>,
    ) -> Result<bool, UsageError> {
        match flag {
            "--data-dir" => {
                let value = flag_value(flag, inline.clone(), args, "a directory")?;
                self.data_dir = Some(PathBuf::from(value));
            }
            "--database-url" => {
                self.database_url = Some(flag_value(flag, inline.clone(), args, "a URL")?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The store chosen, with the environment's values for what is missing.
    fn resolve(self, env: &Env) -> Result<StoreOptions, UsageError> {
        let database_url = database_url_or_env(self.database_url, &self.data_dir, env)?;
        Ok(StoreOptions {
            data_dir: data_dir_or_env(self.data_dir, env.data_dir.clone()),
            database_url,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn run(args: &[&str], env: Option<&str>) -> Result<Command, UsageError> {
        let env = Env {
            data_dir: env.map(OsString::from),
            ..Env::default()
        };
        parse(args.iter().map(OsString::from), &env)
    }

    fn run_with_env(args: &[&str], env: Env) -> Result<Command, UsageError> {
        parse(args.iter().map(OsString::from), &env)
    }

    fn serve(data_dir: Option<&str>, transport: Transport, allow_remote: bool) -> Command {
        Command::Serve(Box::new(Options {
            data_dir: data_dir.map(PathBuf::from),
            database_url: None,
            transport,
            http_access: HttpAccess {
                allow_remote,
                ..HttpAccess::default()
            },
            auth: None,
        }))
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
    fn http_takes_an_inherited_socket_by_its_descriptor() {
        assert_eq!(
            run(&["--http", "fd:3"], None),
            Ok(serve(None, Transport::HttpInherited(3), false))
        );
        for bad in ["fd:1", "fd:", "fd:three", "fd:-4"] {
            let error = run(&["--http", bad], None).unwrap_err();
            assert!(
                error.0.contains("inherited listening socket"),
                "{bad}: {error}"
            );
        }
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
    fn seed_users_takes_a_count_and_the_data_dir() {
        assert_eq!(
            run(
                &["seed-users", "--count", "500", "--data-dir", "d"],
                Some("/env")
            ),
            Ok(Command::SeedUsers(SeedUsersOptions {
                data_dir: Some("d".into()),
                database_url: None,
                count: 500,
            }))
        );
        assert_eq!(
            run(&["seed-users", "--count=3"], Some("/env")),
            Ok(Command::SeedUsers(SeedUsersOptions {
                data_dir: Some("/env".into()),
                database_url: None,
                count: 3,
            }))
        );
        for args in [
            &["seed-users"][..],
            &["seed-users", "--count"],
            &["seed-users", "--count", "0"],
            &["seed-users", "--count", "-1"],
            &["seed-users", "--count", "100001"],
            &["seed-users", "--count", "2", "--http"],
            &["--count", "2"],
        ] {
            assert!(run(args, None).is_err(), "{args:?} should be refused");
        }
        assert_eq!(run(&["seed-users", "--help"], None), Ok(Command::Help));
        assert!(USAGE.contains("seed-users --count N"));
    }

    #[test]
    fn rotate_signing_key_takes_the_store_and_nothing_else() {
        assert_eq!(
            run(&["rotate-signing-key", "--data-dir", "d"], Some("/env")),
            Ok(Command::RotateSigningKey(StoreOptions {
                data_dir: Some("d".into()),
                database_url: None,
            }))
        );
        assert_eq!(
            run(&["rotate-signing-key"], Some("/env")),
            Ok(Command::RotateSigningKey(StoreOptions {
                data_dir: Some("/env".into()),
                database_url: None,
            }))
        );
        for args in [
            &["rotate-signing-key", "--count", "2"][..],
            &["rotate-signing-key", "--http"],
            &["rotate-signing-key", "--data-dir"],
            &[
                "rotate-signing-key",
                "--data-dir",
                "d",
                "--database-url",
                "postgres://x/y",
            ],
        ] {
            assert!(run(args, None).is_err(), "{args:?} should be refused");
        }
        assert!(USAGE.contains("rotate-signing-key [--data-dir DIR"));
    }

    #[test]
    fn help_and_version_win() {
        assert_eq!(run(&["--http", "--help"], None), Ok(Command::Help));
        assert_eq!(run(&["-V"], None), Ok(Command::Version));
    }

    const ISSUER: &str = "http://127.0.0.1:9000";
    const RESOURCE: &str = "http://127.0.0.1:8848/mcp";

    fn auth_of(command: Result<Command, UsageError>) -> Option<AuthConfig> {
        match command {
            Ok(Command::Serve(options)) => options.auth,
            other => panic!("expected serve, got {other:?}"),
        }
    }

    #[test]
    fn sign_in_takes_the_issuer_and_the_resource_url_from_flags_or_environment() {
        let expected = Some(AuthConfig::new(ISSUER, RESOURCE).unwrap());
        let flags = [
            "--http",
            "--auth-issuer",
            ISSUER,
            "--resource-url",
            RESOURCE,
        ];
        assert_eq!(auth_of(run(&flags, None)), expected);
        let env = Env {
            auth_issuer: Some(ISSUER.into()),
            resource_url: Some(RESOURCE.into()),
            ..Env::default()
        };
        assert_eq!(auth_of(run_with_env(&["--http"], env.clone())), expected);
        // The flag wins over the environment.
        let other = "https://as.example";
        let mixed = run_with_env(&["--http", &format!("--auth-issuer={other}")], env.clone());
        assert_eq!(
            auth_of(mixed),
            Some(AuthConfig::new(other, RESOURCE).unwrap())
        );
        // Stdio ignores the environment: its client is the app that spawned it.
        assert_eq!(auth_of(run_with_env(&[], env)), None);
        assert_eq!(auth_of(run(&["--http"], None)), None);
    }

    #[test]
    fn sign_in_needs_both_urls_and_http() {
        for args in [
            &["--http", "--auth-issuer", ISSUER][..],
            &["--http", "--resource-url", RESOURCE],
            &["--auth-issuer", ISSUER, "--resource-url", RESOURCE],
            &[
                "--http",
                "--auth-issuer",
                "not a url",
                "--resource-url",
                RESOURCE,
            ],
            &["--http", "--auth-issuer", ISSUER, "--resource-url", "/mcp"],
        ] {
            assert!(run(args, None).is_err(), "{args:?} should be refused");
        }
        assert!(USAGE.contains("--auth-issuer URL"));
        assert!(USAGE.contains("--resource-url URL"));
        assert!(USAGE.contains("/healthz"));
    }

    #[test]
    fn allowed_origins_are_repeatable_checked_and_none_by_default() {
        let access_of = |command: Result<Command, UsageError>| match command {
            Ok(Command::Serve(options)) => options.http_access,
            other => panic!("expected serve, got {other:?}"),
        };
        assert_eq!(
            access_of(run(&["--http"], None)).allowed_origins,
            AllowedOrigins::default()
        );
        let access = access_of(run(
            &[
                "--http",
                "--allowed-origin",
                "https://app.example",
                "--allowed-origin=http://localhost:5173",
            ],
            None,
        ));
        assert_eq!(
            access.allowed_origins,
            AllowedOrigins::new(["https://app.example", "http://localhost:5173"]).unwrap()
        );
        let not_an_origin = run(
            &["--http", "--allowed-origin", "https://app.example/page"],
            None,
        );
        assert!(
            not_an_origin
                .unwrap_err()
                .0
                .contains("`https://app.example/page` is not a web origin")
        );
        assert!(run(&["--allowed-origin", "https://app.example"], None).is_err());
    }

    #[test]
    fn an_issuer_over_plain_http_to_another_machine_stops_the_shop_from_starting() {
        let error = run(
            &[
                "--http",
                "--auth-issuer",
                "http://as.example",
                "--resource-url",
                RESOURCE,
            ],
            None,
        )
        .unwrap_err();
        assert!(error.0.contains("use https"), "{error}");
    }

    #[test]
    fn database_url_comes_from_the_flag_or_the_environment_and_excludes_data_dir() {
        let env = Env {
            database_url: Some("postgres://env@db/shop".into()),
            ..Env::default()
        };
        let url_of = |command: Result<Command, UsageError>| match command {
            Ok(Command::Serve(options)) => options.database_url,
            Ok(Command::SeedUsers(options)) => options.database_url,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            url_of(run_with_env(
                &["--database-url", "postgres://a@h/db"],
                env.clone()
            )),
            Some("postgres://a@h/db".to_owned())
        );
        assert_eq!(
            url_of(run_with_env(&[], env.clone())),
            Some("postgres://env@db/shop".to_owned())
        );
        assert_eq!(
            url_of(run_with_env(&["--data-dir", "d"], env.clone())),
            None
        );
        assert_eq!(
            url_of(run_with_env(
                &[
                    "seed-users",
                    "--count",
                    "3",
                    "--database-url=postgres://b@h/db"
                ],
                Env::default()
            )),
            Some("postgres://b@h/db".to_owned())
        );
        assert!(
            run(
                &["--database-url", "postgres://a@h/db", "--data-dir", "d"],
                None
            )
            .is_err()
        );
        assert!(run(&["--database-url"], None).is_err());
        assert!(USAGE.contains("--database-url URL") && USAGE.contains(DATABASE_URL_ENV));
    }
}
