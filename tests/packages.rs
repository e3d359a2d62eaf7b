//! The packages `tauri build` makes: the .deb installs with its dependencies,
//! and the installed app starts the shop it carries, so that a search reaches
//! the page; the .rpm carries the same files and declares what it needs.
//!
//! These install software system-wide, so `cargo test` leaves them out:
//! scripts/test-packages builds the packages and runs them with `--ignored`.

mod support;

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;
use support::model::{ScriptedModel, text, tool_call};
use support::{RunningApp, configure_model};

type TestResult = Result<(), Box<dyn Error>>;

/// The package name the bundler derives from the product name.
const PACKAGE: &str = "bit-select-assistant";
const INSTALLED_APP: &str = "/usr/bin/bitselect-assistant";
const INSTALLED_SHOP: &str = "/usr/bin/bitselect-mcp";
const DESKTOP_ENTRY: &str = "/usr/share/applications/Bit Select Assistant.desktop";

#[test]
#[ignore = "installs the .deb system-wide; run by scripts/test-packages"]
fn the_installed_deb_starts_its_shop_and_a_search_reaches_the_page() -> TestResult {
    let deb = bundle("deb", ".deb")?;
    let fields = output("dpkg-deb", &["-f".as_ref(), deb.as_os_str()])?;
    for field in [
        "Package: bit-select-assistant",
        "Maintainer: Bit Select <dev@bitselect.app>",
        "Section: utils",
        "Recommends: fonts-noto-cjk",
    ] {
        assert!(
            fields.contains(field),
            "{field:?} in the control file:\n{fields}"
        );
    }
    for library in ["libwebkit2gtk-4.1-0", "libgtk-3-0"] {
        assert!(fields.contains(library), "depends on {library}:\n{fields}");
    }

    let installed = Installed::deb(&deb)?;
    assert!(
        Path::new(INSTALLED_SHOP).is_file(),
        "the shop came with the app"
    );
    // The app's own shop is the lean build: stdio over SQLite, no HTTP
    // service, and it says so rather than failing some other way.
    let http = Command::new(INSTALLED_SHOP)
        .args(["--http", "127.0.0.1:0"])
        .output()?;
    let said = String::from_utf8_lossy(&http.stderr);
    assert_eq!(http.status.code(), Some(2), "{said}");
    assert!(said.contains("needs the shop's service build"), "{said}");
    let entry = std::fs::read_to_string(DESKTOP_ENTRY)?;
    assert!(entry.contains("Exec=bitselect-assistant"), "{entry}");
    assert!(entry.contains("Icon=bitselect-assistant"), "{entry}");
    assert!(entry.contains("Name[zh_CN]=比特严选助手"), "{entry}");

    let data = tempfile::tempdir()?;
    let model = ScriptedModel::start(vec![
        tool_call(
            "call_search",
            "bitselect__search_product",
            json!({"keyword": "Vision Pro 256GB"}),
        ),
        text("找到了 Apple Vision Pro 256GB。"),
    ])?;
    configure_model(data.path(), model.base_url())?;
    let app = RunningApp::launch_binary(Path::new(INSTALLED_APP), data.path())?;
    app.send_message("搜一下 Vision Pro")?;
    // The chip shows the shop's own answer, the model with its
    // configurations: the installed shop is running.
    app.wait_for_text("[data-testid=tool-chip]", "Apple Vision Pro")?;
    app.wait_for_text("[data-testid=tool-chip]", "256GB")?;
    app.wait_for_text("[data-testid=message-assistant]", "找到了")?;
    let chip = app.session.find("[data-testid=tool-chip]")?;
    assert_eq!(
        app.session.attribute(&chip, "data-status")?.as_deref(),
        Some("succeeded")
    );
    assert!(
        data.path().join("shop").join("shop.db").is_file(),
        "the shop keeps its data beside the app's"
    );
    drop(app);

    // The installed app checks the mandates it kept, offline: none here.
    let verified = std::process::Command::new(INSTALLED_APP)
        .arg("--data-dir")
        .arg(data.path())
        .arg("--verify-mandates")
        .output()?;
    let report = String::from_utf8_lossy(&verified.stdout);
    assert!(verified.status.success(), "{report}");
    assert_eq!(report.trim(), "no mandates kept");

    installed.remove()?;
    assert!(!Path::new(INSTALLED_APP).exists(), "the app was removed");
    assert!(!Path::new(INSTALLED_SHOP).exists(), "the shop was removed");
    Ok(())
}

#[test]
#[ignore = "reads the .rpm that scripts/test-packages builds"]
fn the_rpm_carries_the_app_and_the_shop_and_declares_what_it_needs() -> TestResult {
    let rpm = bundle("rpm", ".rpm")?;
    let files = output("rpm", &["-qpl".as_ref(), rpm.as_os_str()])?;
    for file in [INSTALLED_APP, INSTALLED_SHOP, DESKTOP_ENTRY] {
        assert!(
            files.lines().any(|line| line == file),
            "{file} in:\n{files}"
        );
    }
    assert!(
        files.contains("/usr/share/icons/hicolor/128x128/apps/bitselect-assistant.png"),
        "an icon in:\n{files}"
    );
    let requires = output("rpm", &["-qpR".as_ref(), rpm.as_os_str()])?;
    for library in ["libwebkit2gtk-4.1.so.0", "libgtk-3.so.0"] {
        assert!(
            requires.contains(library),
            "requires {library}:\n{requires}"
        );
    }
    let info = output("rpm", &["-qpi".as_ref(), rpm.as_os_str()])?;
    assert!(
        info.contains("Name        : bit-select-assistant"),
        "{info}"
    );
    assert!(info.contains("asks before it acts"), "{info}");
    Ok(())
}

/// The one package of `kind` that `tauri build` made for this version.
fn bundle(kind: &str, extension: &str) -> Result<PathBuf, Box<dyn Error>> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = target.join("dist/bundle").join(kind);
    let found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|error| format!("{}: {error}; run scripts/test-packages", dir.display()))?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            name.ends_with(extension) && name.contains(env!("CARGO_PKG_VERSION"))
        })
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(format!(
            "expected one {extension} in {}, found {found:?}",
            dir.display()
        )
        .into()),
    }
}

/// Runs a command and returns what it printed, failing on a bad exit.
fn output(program: &str, args: &[&std::ffi::OsStr]) -> Result<String, Box<dyn Error>> {
    let out = Command::new(program).args(args).output()?;
    if !out.status.success() {
        return Err(format!(
            "{program} {args:?}: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8(out.stdout)?)
}

/// Runs a command as root (through sudo when the test is not root).
fn as_root(program: &str, args: &[&std::ffi::OsStr]) -> Result<String, Box<dyn Error>> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        output(program, args)
    } else {
        let mut all: Vec<&std::ffi::OsStr> = vec!["-n".as_ref(), program.as_ref()];
        all.extend_from_slice(args);
        output("sudo", &all)
    }
}

/// The package installed by this test; removed when dropped, so that a
/// failing test does not leave it behind.
struct Installed {
    removed: bool,
}

impl Installed {
    fn deb(deb: &Path) -> Result<Installed, Box<dyn Error>> {
        let status = Command::new("dpkg-query")
            .args(["-W", "-f=${Status}", PACKAGE])
            .output()?;
        if String::from_utf8_lossy(&status.stdout).contains("install ok installed") {
            return Err(format!(
                "{PACKAGE} is already installed here; this test installs and removes it, so remove it first"
            )
            .into());
        }
        // apt, not dpkg: it pulls in the declared dependencies. It takes a
        // file for a package name unless the path has a slash in front.
        let path = deb.canonicalize()?;
        as_root(
            "env",
            &[
                "DEBIAN_FRONTEND=noninteractive".as_ref(),
                "apt-get".as_ref(),
                "install".as_ref(),
                "-y".as_ref(),
                "-qq".as_ref(),
                path.as_os_str(),
            ],
        )?;
        Ok(Installed { removed: false })
    }

    fn remove(mut self) -> Result<(), Box<dyn Error>> {
        self.removed = true;
        purge()
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        if !self.removed
            && let Err(error) = purge()
        {
            eprintln!("could not remove {PACKAGE}: {error}");
        }
    }
}

fn purge() -> Result<(), Box<dyn Error>> {
    as_root(
        "env",
        &[
            "DEBIAN_FRONTEND=noninteractive".as_ref(),
            "apt-get".as_ref(),
            "purge".as_ref(),
            "-y".as_ref(),
            "-qq".as_ref(),
            PACKAGE.as_ref(),
        ],
    )?;
    Ok(())
}
