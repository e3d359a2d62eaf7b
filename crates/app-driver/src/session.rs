//! A small W3C WebDriver client, enough to drive the app through tauri-driver.

use std::time::Duration;

use serde_json::{Value, json};

/// The W3C key under which element references travel.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

#[derive(Debug, thiserror::Error)]
pub enum WebDriverError {
    #[error("webdriver request {what} failed: {source}")]
    Http {
        what: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("webdriver answered {what} with {error}: {message}")]
    Remote {
        what: String,
        error: String,
        message: String,
    },
    #[error("webdriver answered {what} with an unexpected body: {body}")]
    Unexpected { what: String, body: Value },
}

pub type Result<T> = std::result::Result<T, WebDriverError>;

/// One WebDriver session: one running app window.
pub struct Session {
    http: reqwest::blocking::Client,
    base: String,
    id: String,
}

#[derive(Debug, Clone)]
pub struct Element(String);

impl Session {
    /// Starts the app at `application` with `args` and waits for its window.
    pub fn start(driver_url: &str, application: &str, args: &[String]) -> Result<Session> {
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|source| WebDriverError::Http {
                what: "client".into(),
                source,
            })?;
        let capabilities = json!({
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "wry",
                    "tauri:options": { "application": application, "args": args }
                }
            }
        });
        let value = send(
            "new session",
            http.post(format!("{driver_url}/session"))
                .json(&capabilities),
        )?;
        let id = value["sessionId"]
            .as_str()
            .ok_or_else(|| WebDriverError::Unexpected {
                what: "new session".into(),
                body: value.clone(),
            })?
            .to_owned();
        let session = Session {
            http,
            base: format!("{driver_url}/session/{id}"),
            id,
        };
        // Element look-ups wait on the driver's side for the page to render them.
        session.command(
            "set timeouts",
            "timeouts",
            json!({ "implicit": 15_000, "script": 30_000 }),
        )?;
        Ok(session)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    fn command(&self, what: &str, path: &str, body: Value) -> Result<Value> {
        let request = self.http.post(format!("{}/{path}", self.base)).json(&body);
        send(what, request)
    }

    fn query(&self, what: &str, path: &str) -> Result<Value> {
        let request = self.http.get(format!("{}/{path}", self.base));
        send(what, request)
    }

    /// The first element matching a CSS selector, waiting for it to appear.
    pub fn find(&self, css: &str) -> Result<Element> {
        let value = self.command(
            &format!("find {css}"),
            "element",
            json!({ "using": "css selector", "value": css }),
        )?;
        element_of(&value).ok_or_else(|| WebDriverError::Unexpected {
            what: format!("find {css}"),
            body: value,
        })
    }

    /// The first element inside `parent` matching a CSS selector.
    pub fn find_in(&self, parent: &Element, css: &str) -> Result<Element> {
        let value = self.command(
            &format!("find {css} in element"),
            &format!("element/{}/element", parent.0),
            json!({ "using": "css selector", "value": css }),
        )?;
        element_of(&value).ok_or_else(|| WebDriverError::Unexpected {
            what: format!("find {css}"),
            body: value,
        })
    }

    /// Every element matching a CSS selector; waits the implicit wait for
    /// the first one to appear, so use [`Session::count`] to tell absence.
    pub fn find_all(&self, css: &str) -> Result<Vec<Element>> {
        let value = self.command(
            &format!("find all {css}"),
            "elements",
            json!({ "using": "css selector", "value": css }),
        )?;
        Ok(value
            .as_array()
            .map(|items| items.iter().filter_map(element_of).collect())
            .unwrap_or_default())
    }

    /// How many elements match a CSS selector right now, asked in the page:
    /// unlike a find, it answers at once when there is none.
    pub fn count(&self, css: &str) -> Result<usize> {
        let value = self.execute(
            "return document.querySelectorAll(arguments[0]).length;",
            json!([css]),
        )?;
        value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| WebDriverError::Unexpected {
                what: format!("count {css}"),
                body: value,
            })
    }

    pub fn attribute(&self, element: &Element, name: &str) -> Result<Option<String>> {
        let value = self.query(
            &format!("attribute {name}"),
            &format!("element/{}/attribute/{name}", element.0),
        )?;
        Ok(value.as_str().map(str::to_owned))
    }

    /// Types `text` into an input or text area.
    pub fn type_into(&self, element: &Element, text: &str) -> Result<()> {
        self.command(
            "send keys",
            &format!("element/{}/value", element.0),
            json!({ "text": text }),
        )?;
        Ok(())
    }

    /// Empties an input or text area.
    pub fn clear(&self, element: &Element) -> Result<()> {
        self.command("clear", &format!("element/{}/clear", element.0), json!({}))?;
        Ok(())
    }

    /// Presses and releases each key of `keys` (text, or W3C key codes such
    /// as `"\u{E007}"` for Enter) on whatever element has focus, as a user's
    /// keyboard does: nothing is focused or clicked first.
    pub fn press_keys(&self, keys: &str) -> Result<()> {
        let actions: Vec<Value> = keys
            .chars()
            .flat_map(|key| {
                let key = key.to_string();
                [
                    json!({ "type": "keyDown", "value": key }),
                    json!({ "type": "keyUp", "value": key }),
                ]
            })
            .collect();
        self.command(
            "perform key actions",
            "actions",
            json!({ "actions": [{ "type": "key", "id": "keyboard", "actions": actions }] }),
        )?;
        Ok(())
    }

    pub fn text(&self, element: &Element) -> Result<String> {
        let value = self.query("element text", &format!("element/{}/text", element.0))?;
        Ok(value.as_str().unwrap_or_default().to_owned())
    }

    pub fn click(&self, element: &Element) -> Result<()> {
        self.command("click", &format!("element/{}/click", element.0), json!({}))?;
        Ok(())
    }

    pub fn title(&self) -> Result<String> {
        let value = self.query("title", "title")?;
        Ok(value.as_str().unwrap_or_default().to_owned())
    }

    /// Runs `script` in the page; `arguments` are available to it as `arguments`.
    pub fn execute(&self, script: &str, arguments: Value) -> Result<Value> {
        self.command(
            "execute script",
            "execute/sync",
            json!({ "script": script, "args": arguments }),
        )
    }

    /// Runs an async script: it must call `arguments[arguments.length - 1](result)`.
    pub fn execute_async(&self, script: &str, arguments: Value) -> Result<Value> {
        self.command(
            "execute async script",
            "execute/async",
            json!({ "script": script, "args": arguments }),
        )
    }

    /// A PNG of the window.
    pub fn screenshot(&self) -> Result<Vec<u8>> {
        use base64::Engine as _;
        let value = self.query("screenshot", "screenshot")?;
        let encoded = value.as_str().unwrap_or_default();
        base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|_| WebDriverError::Unexpected {
                what: "screenshot".into(),
                body: json!("not base64"),
            })
    }

    /// Ends the session, which closes the app.
    pub fn close(mut self) -> Result<()> {
        self.end()
    }

    /// Ends the session, which closes the app; later calls do nothing.
    pub fn end(&mut self) -> Result<()> {
        if self.id.is_empty() {
            return Ok(());
        }
        self.id.clear();
        send("delete session", self.http.delete(&self.base)).map(|_| ())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.end();
    }
}

fn element_of(value: &Value) -> Option<Element> {
    value[ELEMENT_KEY].as_str().map(|id| Element(id.to_owned()))
}

fn send(what: &str, request: reqwest::blocking::RequestBuilder) -> Result<Value> {
    let response = request.send().map_err(|source| WebDriverError::Http {
        what: what.to_owned(),
        source,
    })?;
    let body: Value = response.json().map_err(|source| WebDriverError::Http {
        what: what.to_owned(),
        source,
    })?;
    let value = body.get("value").cloned().unwrap_or(Value::Null);
    if let Some(error) = value.get("error").and_then(Value::as_str) {
        return Err(WebDriverError::Remote {
            what: what.to_owned(),
            error: error.to_owned(),
            message: value["message"].as_str().unwrap_or_default().to_owned(),
        });
    }
    Ok(value)
}
