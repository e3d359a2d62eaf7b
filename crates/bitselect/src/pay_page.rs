//! The simulated payment page the online shop serves itself:
//! `GET /pay/<id>` shows the order number, the amount and a "pay" button;
//! `POST /pay/<id>` is the press of that button. An unknown or expired id
//! answers 404. The page is what a `pay_order` URL-mode request opens in
//! the shopper's browser; the call sent again then finds it paid
//! ([`crate::payment_pages`]).
//!
//! No sign-in: a browser has no bearer token, so the page's random id is
//! what lets one in, as with a real payment provider's checkout link. The
//! page sets no cookies, loads nothing, may not be framed and is not cached.

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::money::format_rmb;
use crate::payment_pages::{PAY_PAGE_PREFIX, PaymentPage};
use crate::shop::Shop;

/// The routes of the pages, for the HTTP server's router.
pub fn routes(shop: Shop) -> axum::Router {
    axum::Router::new()
        .route(
            &format!("{PAY_PAGE_PREFIX}{{id}}"),
            axum::routing::get(show).post(pay),
        )
        .with_state(shop)
}

async fn show(State(shop): State<Shop>, Path(id): Path<String>) -> Response {
    answer(tokio::task::spawn_blocking(move || shop.payment_page(&id)).await)
}

async fn pay(State(shop): State<Shop>, Path(id): Path<String>) -> Response {
    answer(tokio::task::spawn_blocking(move || shop.pay_on_page(&id)).await)
}

fn answer(
    looked_up: Result<crate::error::Result<Option<PaymentPage>>, tokio::task::JoinError>,
) -> Response {
    match looked_up {
        Ok(Ok(Some(page))) => html(StatusCode::OK, &render(&page)),
        Ok(Ok(None)) => html(
            StatusCode::NOT_FOUND,
            &document(
                "支付页面不存在",
                "<p>这个支付页面不存在或已过期。请回到比特严选助手重新发起支付。</p>",
            ),
        ),
        Ok(Err(error)) => {
            tracing::error!(%error, "the payment page could not be read");
            html(
                StatusCode::INTERNAL_SERVER_ERROR,
                &document(
                    "暂时无法支付",
                    "<p>商城暂时无法打开支付页面，请稍后再试。</p>",
                ),
            )
        }
        Err(join) => {
            tracing::error!(%join, "the payment page's lookup stopped");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

fn html(status: StatusCode, body: &str) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
            ),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_FRAME_OPTIONS, "DENY"),
        ],
        body.to_owned(),
    )
        .into_response()
}

/// The page for `page`: with the button while it can be paid on.
fn render(page: &PaymentPage) -> String {
    let order_no = escape(&page.order_no);
    let amount = format_rmb(page.amount);
    let facts = format!(
        r#"<p>订单号 <strong id="order-no">{order_no}</strong></p>
<p class="amount">应付 <strong id="amount">{amount}</strong></p>"#
    );
    let state = if page.paid_at.is_some() {
        r#"<p id="status" class="done">已付款。请回到比特严选助手，点击「完成」。</p>"#.to_owned()
    } else if page.payable() {
        r#"<form method="post"><button id="pay" type="submit">支付</button></form>"#.to_owned()
    } else {
        format!(
            r#"<p id="status">该订单当前为「{}」，无需支付。</p>"#,
            escape(&page.order_status)
        )
    };
    document(
        &format!("支付订单 {order_no}"),
        &format!(
            "{facts}\n{state}\n<p class=\"note\">这是比特严选的模拟支付页面，不会真实扣款。</p>"
        ),
    )
}

fn document(title: &str, body: &str) -> String {
    format!(
        r#"<!doctype html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>比特严选 · {title}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #1d1d1f; }}
.amount strong {{ font-size: 1.6rem; }}
button {{ font: inherit; padding: 0.6rem 2.4rem; border-radius: 0.5rem; border: none; background: #1677ff; color: white; cursor: pointer; }}
.done {{ color: #127c2e; }}
.note {{ color: #6e6e73; font-size: 0.85rem; }}
@media (prefers-color-scheme: dark) {{ body {{ background: #1d1d1f; color: #f5f5f7; }} }}
</style>
</head>
<body>
<main>
<h1>比特严选收银台</h1>
{body}
</main>
</body>
</html>
"#
    )
}

/// Text made safe to put in HTML.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            other => out.push(other),
        }
    }
    out
}
