//! What the end-to-end tests share: the driver, a WebDriver session on the
//! built app, and a data directory of its own for every app run.

#![allow(dead_code)] // each test binary uses a different part of this

pub mod model;
pub mod purchase;
pub mod words;

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the app and everything it started may take to exit once its
/// session ends (the core stops its runs and its servers first).
const APP_EXIT: Duration = Duration::from_secs(30);

pub use app_driver::processes;
pub use app_driver::{Element, Session, TauriDriver};

/// The app binary cargo built for these tests.
pub fn app_binary() -> &'static str {
    env!("CARGO_BIN_EXE_bitselect-assistant")
}

/// Set to `1`, the screenshots the docs show are replaced by this run's.
pub const UPDATE_DOC_SCREENSHOTS: &str = "BITSELECT_UPDATE_DOC_SCREENSHOTS";

/// Where the tests' screenshots go: the build folder, not the source tree.
pub fn screenshot_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots")
}

/// The app running in a window of its own, on its own data directory.
/// Dropping it ends the session and fails the test if anything the app
/// started (the app, its shop, WebKit's processes) is still alive after
/// [`APP_EXIT`].
pub struct RunningApp {
    pub session: Session,
    pub data_dir: PathBuf,
    /// Stopped after the session: the app must close before the driver stops.
    driver: Option<TauriDriver>,
    /// In the environment of every process this run started.
    mark: String,
    /// The app binary the session launched.
    binary: PathBuf,
}

impl Drop for RunningApp {
    fn drop(&mut self) {
        let ended = self.session.end();
        // WebKitWebDriver ends a session by closing its page, and the app
        // (whose window outlives its page) is ended only if the driver's
        // link to it is still up when the driver stops, which is a race:
        // the app was found alive, reparented, minutes later. So the
        // harness ends the app it launched, as a desktop ends a program
        // (SIGTERM), before the driver stops; whatever the app started
        // (its shop, WebKit's helpers) must then end with it, or the
        // leftover check below fails the test.
        let app: Vec<processes::Process> = processes::marked_with(&self.mark)
            .into_iter()
            .filter(|process| processes::runs(process, &self.binary))
            .collect();
        processes::terminate(&app);
        processes::wait_for_exit(app, APP_EXIT);
        drop(self.driver.take());
        let leaked = leftovers(&self.mark);
        if leaked.is_empty() {
            return;
        }
        processes::kill(&leaked);
        let listed: Vec<String> = leaked.iter().map(ToString::to_string).collect();
        // A test already failing says why; this would only abort it.
        if !std::thread::panicking() {
            panic!(
                "still running {APP_EXIT:?} after the session ended ({ended:?}), now killed:\n{}",
                listed.join("\n")
            );
        }
    }
}

/// The processes with `mark` still alive once each had [`APP_EXIT`] to exit.
pub fn leftovers(mark: &str) -> Vec<processes::Process> {
    processes::wait_for_exit(processes::marked_with(mark), APP_EXIT);
    // Looked up again: one may have started another on its way out.
    processes::wait_for_exit(processes::marked_with(mark), Duration::ZERO)
}

/// Answers once the page set its `interactive` mark (ui/src/interactive.ts):
/// it has applied the stored language and opened the latest chat.
const WAIT_UNTIL_INTERACTIVE: &str = r#"
const [done] = arguments;
if (performance.getEntriesByName("interactive").length > 0) { done(true); return; }
new PerformanceObserver((list, observer) => {
  if (list.getEntriesByName("interactive").length > 0) { observer.disconnect(); done(true); }
}).observe({ type: "mark", buffered: true });
"#;

/// Answers once the card call with the given id no longer asks: the page
/// has taken the decision in, and a later card can be told from this one.
const WAIT_UNTIL_DECIDED: &str = r#"
const [callId, done] = arguments;
const decided = () => {
  const call = document.querySelector(`[data-testid=card-call][data-call-id="${callId}"]`);
  return !call || call.dataset.status !== "asking";
};
if (decided()) { done(true); return; }
const observer = new MutationObserver(() => {
  if (decided()) { observer.disconnect(); done(true); }
});
observer.observe(document.body, { subtree: true, childList: true, attributes: true });
"#;

const WAIT_FOR_FOCUS: &str = r#"
const [callId, testid, done] = arguments;
const look = () => {
  const active = document.activeElement;
  const call = active && active.closest("[data-testid=card-call]");
  if (active && active.dataset.testid === testid && call && call.dataset.callId === callId) done(true);
  else setTimeout(look, 50);
};
look();
"#;

impl RunningApp {
    pub fn launch(data_dir: &Path) -> Result<RunningApp, Box<dyn std::error::Error>> {
        RunningApp::launch_with_env(data_dir, &[])
    }

    /// [`RunningApp::launch`] with these environment variables changed for
    /// the app (a desktop session's PATH, another SHELL).
    pub fn launch_with_env(
        data_dir: &Path,
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Result<RunningApp, Box<dyn std::error::Error>> {
        let shop = Path::new(app_binary()).with_file_name("bitselect-mcp");
        if !shop.is_file() {
            return Err(format!(
                "{} is missing: the app starts it; build it with `cargo build -p bitselect` (scripts/test does)",
                shop.display()
            )
            .into());
        }
        RunningApp::start(Path::new(app_binary()), data_dir, env)
    }

    /// Launches a given app binary, such as the one a package installed.
    pub fn launch_binary(
        binary: &Path,
        data_dir: &Path,
    ) -> Result<RunningApp, Box<dyn std::error::Error>> {
        RunningApp::start(binary, data_dir, &[])
    }

    fn start(
        binary: &Path,
        data_dir: &Path,
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Result<RunningApp, Box<dyn std::error::Error>> {
        let mark = processes::new_run_mark();
        let mut marked = env.to_vec();
        marked.push((processes::RUN_MARK_VAR, std::ffi::OsStr::new(&mark)));
        let driver = TauriDriver::start_with_env(&marked)?;
        let args = vec!["--data-dir".to_owned(), data_dir.display().to_string()];
        let session = Session::start(driver.url(), &binary.display().to_string(), &args)?;
        let app = RunningApp {
            session,
            data_dir: data_dir.to_path_buf(),
            driver: Some(driver),
            mark,
            binary: binary.to_path_buf(),
        };
        // The page draws itself once in the system's language and again in
        // the one the core keeps: a test acts once it settled, as a person
        // would, so no element it holds is replaced under it.
        app.session
            .execute_async(WAIT_UNTIL_INTERACTIVE, serde_json::json!([]))
            .map_err(|error| format!("waiting for the page to be interactive: {error}"))?;
        Ok(app)
    }

    /// The live processes this run started: the app, its shop, WebKit's.
    pub fn processes(&self) -> Vec<processes::Process> {
        processes::marked_with(&self.mark)
    }

    /// Writes a screenshot into the build folder ([`screenshot_dir`]) and
    /// returns its path.
    pub fn save_screenshot(&self, name: &str) -> Result<PathBuf, Box<dyn std::error::Error>> {
        let dir = screenshot_dir();
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, self.session.screenshot()?)?;
        Ok(path)
    }
}

/// Waits, in the page, until an element matching `selector` contains
/// `needle` in its text: a DOM observer answers as soon as it does.
const WAIT_FOR_TEXT: &str = r#"
const [selector, needle, done] = arguments;
const found = () => Array.from(document.querySelectorAll(selector))
  .some((element) => (element.textContent || "").includes(needle));
if (found()) { done(true); return; }
const observer = new MutationObserver(() => {
  if (found()) { observer.disconnect(); done(true); }
});
observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
"#;

impl RunningApp {
    /// Types a chat message and sends it.
    pub fn send_message(&self, text: &str) -> Result<(), Box<dyn std::error::Error>> {
        let input = self.session.find("[data-testid=composer-input]")?;
        self.session.type_into(&input, text)?;
        let send = self.session.find("[data-testid=send]")?;
        self.session.click(&send)?;
        Ok(())
    }

    /// Waits until some element matching `selector` shows `needle`.
    pub fn wait_for_text(
        &self,
        selector: &str,
        needle: &str,
    ) -> Result<(), Box<dyn std::error::Error>> {
        self.session
            .execute_async(WAIT_FOR_TEXT, serde_json::json!([selector, needle]))
            .map_err(|error| format!("waiting for {selector:?} to show {needle:?}: {error}"))?;
        Ok(())
    }

    /// Waits until some element matches `selector` (without the implicit
    /// wait's limit: as long as a script may run).
    pub fn wait_for_element(&self, selector: &str) -> Result<(), Box<dyn std::error::Error>> {
        // Every element's text contains the empty string.
        self.wait_for_text(selector, "")
    }

    /// The call on a card that waits for the user's decision (the first, if
    /// several), waiting for one to appear.
    pub fn asking_call(&self) -> Result<Element, Box<dyn std::error::Error>> {
        Ok(self
            .session
            .find("[data-testid=card-call][data-status=asking]")?)
    }

    /// Clicks a decision (`approve`, `deny`) on a card call, then waits
    /// until the page shows the call decided, so that the next
    /// [`RunningApp::asking_call`] finds the next card, not this one.
    pub fn decide(&self, call: &Element, testid: &str) -> Result<(), Box<dyn std::error::Error>> {
        let call_id = self
            .session
            .attribute(call, "data-call-id")?
            .ok_or("a card call without its id")?;
        let button = self
            .session
            .find_in(call, &format!("[data-testid={testid}]"))?;
        self.session.click(&button)?;
        self.wait_until_decided(&call_id)
    }

    /// The first click on approve of a call the shop says cannot run: it
    /// only arms approving, and this waits until the button says so; a
    /// [`RunningApp::decide`] then approves.
    pub fn arm_approve(&self, call: &Element) -> Result<(), Box<dyn std::error::Error>> {
        let call_id = self
            .session
            .attribute(call, "data-call-id")?
            .ok_or("a card call without its id")?;
        let approve = self.session.find_in(call, "[data-testid=approve]")?;
        self.session.click(&approve)?;
        self.session.find(&format!(
            "[data-call-id=\"{call_id}\"] [data-testid=approve][data-armed=true]"
        ))?;
        Ok(())
    }

    /// Waits until the page shows the card call `call_id` decided.
    pub fn wait_until_decided(&self, call_id: &str) -> Result<(), Box<dyn std::error::Error>> {
        self.session
            .execute_async(WAIT_UNTIL_DECIDED, serde_json::json!([call_id]))
            .map_err(|error| format!("waiting for call {call_id} to be decided: {error}"))?;
        Ok(())
    }

    /// Screenshots `<name>-light.png` and `<name>-dark.png` into the build
    /// folder; copies them to docs/screenshots only when asked to
    /// ([`UPDATE_DOC_SCREENSHOTS`], scripts/screenshots), so a test run
    /// leaves the tracked files alone. Leaves the light theme on.
    pub fn screenshots_for_docs(&self, name: &str) -> Result<(), Box<dyn std::error::Error>> {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/screenshots");
        let update_docs = std::env::var_os(UPDATE_DOC_SCREENSHOTS).is_some_and(|v| v == "1");
        for theme in ["light", "dark"] {
            self.force_theme(theme)?;
            let taken = self.save_screenshot(&format!("{name}-{theme}"))?;
            if update_docs {
                std::fs::copy(&taken, docs.join(format!("{name}-{theme}.png")))?;
            }
        }
        self.force_theme("light")
    }

    /// Waits until keyboard focus is on the element with `testid` inside
    /// the card call `call_id` (focus moves without a DOM change to observe,
    /// so this looks every 50 ms).
    pub fn wait_for_focus(
        &self,
        call_id: &str,
        testid: &str,
    ) -> Result<(), Box<dyn std::error::Error>> {
        if let Err(error) = self
            .session
            .execute_async(WAIT_FOR_FOCUS, serde_json::json!([call_id, testid]))
        {
            let focused = self.session.execute(
                "const a = document.activeElement; return a ? a.outerHTML.slice(0, 300) : null;",
                serde_json::json!([]),
            )?;
            return Err(format!(
                "waiting for focus on {testid} of call {call_id}: {error}; focus is on {focused}"
            )
            .into());
        }
        Ok(())
    }

    /// Sets the page's theme, as the settings screen does.
    pub fn force_theme(&self, theme: &str) -> Result<(), Box<dyn std::error::Error>> {
        // Answers once two frames have been drawn with the new theme.
        self.session.execute_async(
            "const [theme, done] = arguments;
             document.documentElement.dataset.theme = theme;
             requestAnimationFrame(() => requestAnimationFrame(() => done(true)));",
            serde_json::json!([theme]),
        )?;
        Ok(())
    }
}

/// Points a data directory's assistant at a model before the app starts,
/// through the core's own settings store, with the page in Chinese (what
/// the tests read), whatever the machine's language.
pub fn configure_model(data_dir: &Path, base_url: &str) -> Result<(), Box<dyn std::error::Error>> {
    configure(data_dir, base_url, Some(ragent::settings::Language::ZhCn))
}

/// Points a data directory's assistant at a model, with the page in
/// `language` (`None`: the system's, as on a fresh data directory).
pub fn configure(
    data_dir: &Path,
    base_url: &str,
    language: Option<ragent::settings::Language>,
) -> Result<(), Box<dyn std::error::Error>> {
    edit_settings(data_dir, |settings| {
        settings.model.base_url = base_url.to_owned();
        settings.model.model = "scripted".to_owned();
        settings.appearance.language = language;
    })
}

/// Changes a data directory's settings before the app starts, through the
/// core's own settings store.
pub fn edit_settings(
    data_dir: &Path,
    edit: impl FnOnce(&mut ragent::settings::Settings),
) -> Result<(), Box<dyn std::error::Error>> {
    test_support::settings::edit_settings(&data_dir.join(bitselect_assistant::CORE_DB_FILE), edit)?;
    Ok(())
}

/// The shop the app's server keeps in its data directory, opened beside it.
pub fn shop_of(data_dir: &Path) -> Result<bitselect::Shop, Box<dyn std::error::Error>> {
    Ok(bitselect::Shop::open(
        data_dir.join(bitselect_assistant::SHOP_DIR),
    )?)
}

/// How many of `sku` the shop's cart holds (0 when it is not there).
pub fn cart_quantity(data_dir: &Path, sku: &str) -> Result<i64, Box<dyn std::error::Error>> {
    let cart = shop_of(data_dir)?.query_cart()?;
    Ok(cart
        .lines
        .iter()
        .filter(|line| line.sku_code == sku)
        .map(|line| line.quantity)
        .sum())
}

/// How many orders the shop holds.
pub fn order_count(data_dir: &Path) -> Result<i64, Box<dyn std::error::Error>> {
    let count =
        shop_of(data_dir)?
            .connection()?
            .query_row("SELECT count(*) FROM orders", [], |row| row.get(0))?;
    Ok(count)
}

/// The newest order, as the shop shows it.
pub fn newest_order(data_dir: &Path) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let listed = serde_json::to_value(
        shop_of(data_dir)?.query_order(&bitselect::params::QueryOrderParams::default())?,
    )?;
    Ok(listed["orders"][0].clone())
}
