//! The app on the online shop, end to end: a private PostgreSQL cluster,
//! a real authorization server (oidc-provider) and `bitselect-mcp --http`
//! as its protected resource, and the app set to use that shop. A message
//! that needs the shop holds the run on "sign in to bitselect"; the system
//! browser is a script first on the app's PATH (`xdg-open`) that hands the
//! page to this test, which fills in the authorization server's login
//! form as a person would; the run goes on, the write stops on its card,
//! and once approved the order is in PostgreSQL for that user alone.
//! Restarted, the app is still signed in and opens no browser; with its
//! access token worn out, the refresh token gets a new one, again without
//! a browser.

mod support;

use std::error::Error;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::json;
use support::model::{ScriptedModel, text, tool_call};
use support::purchase::{IPHONE, seed_purchase};
use support::{RunningApp, configure_model, edit_settings};
use test_support::oauth::{AuthServer, log_in};
use test_support::ports::{HeldPort, INHERITED_FD};

type TestResult = Result<(), Box<dyn Error>>;

/// The core's secret slot for the shop's sign-in.
const SIGN_IN_SLOT: &str = "server/bitselect/oauth";

/// `bitselect-mcp --http` on PostgreSQL, accepting the authorization
/// server's tokens; killed when dropped.
struct OnlineShop {
    child: Child,
}

impl Drop for OnlineShop {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl OnlineShop {
    /// Starts it on `port`'s socket, which it inherits (`--http fd:3`).
    fn start(
        port: &HeldPort,
        database_url: &str,
        issuer: &str,
        resource: &str,
    ) -> Result<Self, Box<dyn Error>> {
        let binary = Path::new(support::app_binary()).with_file_name("bitselect-mcp");
        let mut command = Command::new(binary);
        port.inherit_std(&mut command);
        let mut child = command
            .args(["--http", &format!("fd:{INHERITED_FD}")])
            .args(["--database-url", database_url])
            .args(["--auth-issuer", issuer, "--resource-url", resource])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        let stderr = child.stderr.take().ok_or("the shop's stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        let mut shop = OnlineShop { child };
        loop {
            match lines.next().transpose()? {
                Some(line) if line.starts_with("bitselect-mcp listening on http://") => break,
                Some(_) => {}
                None => {
                    let status = shop.child.wait()?;
                    return Err(format!("bitselect-mcp exited before it listened: {status}").into());
                }
            }
        }
        // The rest of its log is drained so that it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Ok(shop)
    }
}

/// A stand-in for the system browser: `xdg-open` first on PATH, which
/// notes each page it is asked to open and hands it to the test through a
/// FIFO (the test plays the person at the browser).
struct Browser {
    dir: tempfile::TempDir,
}

impl Browser {
    fn new() -> Result<Self, Box<dyn Error>> {
        let dir = tempfile::tempdir()?;
        let fifo = dir.path().join("pages");
        let made = Command::new("mkfifo").arg(&fifo).status()?;
        if !made.success() {
            return Err("mkfifo failed".into());
        }
        let opener = dir.path().join("xdg-open");
        std::fs::write(
            &opener,
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{opened}'\nprintf '%s\\n' \"$1\" > '{fifo}' &\n",
                opened = dir.path().join("opened").display(),
                fifo = fifo.display(),
            ),
        )?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755))?;
        Ok(Browser { dir })
    }

    /// The app's PATH: this browser first, then the test's own.
    fn path(&self) -> std::ffi::OsString {
        let mut dirs = vec![self.dir.path().to_path_buf()];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        std::env::join_paths(dirs).unwrap_or_default()
    }

    /// Waits for the next page the app opens.
    fn next_page(&self) -> Result<String, Box<dyn Error>> {
        let mut page = String::new();
        std::fs::File::open(self.dir.path().join("pages"))?.read_to_string(&mut page)?;
        Ok(page.trim().to_string())
    }

    /// Every page the app asked to open so far.
    fn opened(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("opened"))
            .map(|text| text.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }
}

/// Sets the data directory's assistant to the model and the online shop.
fn configure_online_shop(data: &Path, model: &str, shop_url: &str) -> TestResult {
    configure_model(data, model)?;
    edit_settings(data, |settings| {
        settings.shop = ragent::settings::ShopConnection::Online {
            url: shop_url.to_owned(),
        };
    })
}

/// The sign-in the app keeps (no keyring here: the database fallback).
fn kept_sign_in(data: &Path) -> Result<serde_json::Value, Box<dyn Error>> {
    let store = ragent::store::Store::open(&data.join(bitselect_assistant::CORE_DB_FILE))?;
    let text = store
        .with_conn(|c| ragent::store::kv::secret(c, SIGN_IN_SLOT))?
        .ok_or("no sign-in kept")?;
    Ok(serde_json::from_str(&text)?)
}

fn wear_out_access_token(data: &Path) -> TestResult {
    let mut kept = kept_sign_in(data)?;
    kept["token_received_at"] = 1.into();
    let store = ragent::store::Store::open(&data.join(bitselect_assistant::CORE_DB_FILE))?;
    store.with_conn(|c| ragent::store::kv::set_secret(c, SIGN_IN_SLOT, &kept.to_string(), 0))?;
    Ok(())
}

fn access_token(kept: &serde_json::Value) -> String {
    kept["token_response"]["access_token"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn signed_in_to_the_online_shop_the_order_is_the_users_and_the_sign_in_outlives_a_restart()
-> TestResult {
    let pg = test_support::postgres::cluster();
    let database = pg.empty_database();
    let runtime = tokio::runtime::Runtime::new()?;
    let port = HeldPort::bind();
    let resource = format!("http://{}{}", port.addr(), bitselect::MCP_PATH);
    let auth = runtime.block_on(AuthServer::start(&[&resource], 600));
    let _shop = OnlineShop::start(&port, &pg.url(&database), &auth.issuer, &resource)?;

    // The shop seeded its demo user's orders on start: no one else's change.
    let seeded_orders: u32 = pg.psql(&database, "SELECT count(*) FROM orders").parse()?;
    let seeded_orders_plus_one = (seeded_orders + 1).to_string();
    let browser = Browser::new()?;
    let data = tempfile::tempdir()?;
    // The seed's cart step, then an order to a new shopper's own address.
    let into_the_cart = seed_purchase().remove(0);
    let model = ScriptedModel::start(vec![
        into_the_cart,
        tool_call(
            "call_order",
            "bitselect__create_order",
            json!({
                "items": [{"skuCode": IPHONE, "quantity": 1}],
                "receiverName": "王小明",
                "receiverPhone": "13800138000",
                "receiverAddress": "上海市浦东新区世纪大道 100 号"
            }),
        ),
        text("已下单，等你付款。"),
    ])?;
    configure_online_shop(data.path(), model.base_url(), &resource)?;
    let path = browser.path();
    let app = RunningApp::launch_with_env(data.path(), &[("PATH", path.as_os_str())])?;

    app.send_message("帮我买一台 iPhone 17 256GB 黑色")?;
    app.wait_for_text(
        "[data-testid=notice]",
        "bitselect 需要登录后才能使用。登录后，这次对话会自动继续。",
    )?;
    assert!(model.requests().is_empty(), "the run waits for the sign-in");
    let start = app.session.find("[data-testid=sign-in-start]")?;
    app.session.click(&start)?;
    let page = browser.next_page()?;
    assert!(
        page.starts_with(&auth.issuer),
        "the authorization server's page: {page}"
    );
    app.wait_for_text("[data-testid=sign-in-waiting]", "正在等待你在浏览器中登录")?;
    let back_to_the_app = runtime.block_on(log_in(&page, "alice"));
    runtime.block_on(reqwest::get(&back_to_the_app))?;
    app.wait_for_text("[data-testid=notice]", "已登录 bitselect（alice），继续。")?;

    for _ in 0..2 {
        let call = app.asking_call()?;
        app.decide(&call, "approve")?;
    }
    app.wait_for_text("[data-testid=message-assistant]", "已下单，等你付款。")?;
    let orders_of = |sub: &str| {
        pg.psql(
            &database,
            &format!(
                "SELECT count(*) FROM orders o JOIN users u ON u.id = o.user_id WHERE u.sub = '{sub}'"
            ),
        )
    };
    assert_eq!(orders_of("alice"), "1", "the order is alice's");
    assert_eq!(
        pg.psql(&database, "SELECT count(*) FROM orders"),
        seeded_orders_plus_one
    );
    assert_eq!(
        pg.psql(
            &database,
            "SELECT o.status FROM orders o JOIN users u ON u.id = o.user_id WHERE u.sub = 'alice'"
        ),
        "待支付"
    );
    let first = kept_sign_in(data.path())?;
    drop(app);

    // The app started again on the same data, asked about the cart, which
    // the shop can answer only for a signed-in shopper.
    let look_at_the_cart = |call_id: &str, answer: &str| -> TestResult {
        model.push_turn(tool_call(call_id, "bitselect__query_cart", json!({})));
        model.push_turn(text(answer));
        let app = RunningApp::launch_with_env(data.path(), &[("PATH", path.as_os_str())])?;
        app.send_message("看看我的购物车")?;
        app.wait_for_text("[data-testid=message-assistant]", answer)?;
        Ok(())
    };

    // Restarted: still signed in, and no browser.
    look_at_the_cart("call_look", "购物车是空的。")?;
    assert_eq!(browser.opened().len(), 1, "no browser after the restart");
    assert_eq!(
        access_token(&kept_sign_in(data.path())?),
        access_token(&first)
    );

    // The access token worn out: the refresh token gets a new one.
    wear_out_access_token(data.path())?;
    look_at_the_cart("call_again", "还是空的。")?;
    assert_eq!(browser.opened().len(), 1, "no browser for a refresh");
    assert_ne!(
        access_token(&kept_sign_in(data.path())?),
        access_token(&first)
    );
    Ok(())
}
