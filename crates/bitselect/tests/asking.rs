//! The shop asking the shopper mid-call (MCP 2026-07-28 `input_required`),
//! seen from a client: `create_order` asks which saved address; the online
//! shop hands `pay_order` over to its payment page while the stdio shop
//! keeps the form; only a client that can be asked is asked.

mod support;

use bitselect::Shop;
use pretty_assertions::assert_eq;
use rmcp::model::{CallToolRequestParams, InputRequiredResult};
use serde_json::{Value, json};
use support::asking::*;
use support::client::{connect, ok, text};
use support::oauth::{Stack, StackOptions};
use support::*;
use test_support::sign_in::sign_in;

const ADDRESS: &str = "choose_address";

fn one_iphone() -> Value {
    json!({"items": [{"skuCode": IPHONE_17, "quantity": 1}]})
}

/// The options of the address question: (id, title).
fn options(question: &Value) -> Vec<(String, String)> {
    question["requestedSchema"]["properties"]["address"]["oneOf"]
        .as_array()
        .expect("the address field offers options")
        .iter()
        .map(|o| {
            (
                o["const"].as_str().unwrap().to_owned(),
                o["title"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn orders(shop: &Shop) -> i64 {
    shop.stats().unwrap().orders
}

#[tokio::test]
async fn create_order_asks_which_saved_address_and_places_the_order_at_the_one_chosen() {
    let t = shop_with_two_addresses();
    let client = connect_modern(t.shop.clone(), Shows::Forms).await;
    let request = keyed_request("create_order", one_iphone(), "call-1");

    let asked = asked(call_once(&client, request.clone()).await);
    let question = question(&asked, ADDRESS);
    assert_eq!(question["mode"], "form");
    assert!(
        question["message"]
            .as_str()
            .unwrap()
            .contains("应付 ¥6,799.00"),
        "{question}"
    );
    let offered = options(&question);
    assert_eq!(
        offered.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(),
        [
            "李雷 137****7000 北京市海淀区中关村大街 1 号",
            "张明 138****8000 上海市浦东新区张江镇科苑路 88 号 3 号楼 501 室"
        ]
    );
    assert_eq!(orders(&t.shop), 9, "nothing placed while it asks");
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 2);

    let seed_address = &offered[1].0;
    let answer = json!({"action": "accept", "content": {"address": seed_address}});
    let retry = answered(&request, &asked, ADDRESS, answer);
    let placed = completed(call_once(&client, retry.clone()).await);
    let order = ok(&placed).clone();
    assert_eq!(order["receiver"]["name"], "张明");
    assert_eq!(order["orderNo"], "88240");
    assert_eq!(orders(&t.shop), 10);
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 1);

    // The same call sent again, answered or not, is the same order.
    for again in [retry, request] {
        let replayed = completed(call_once(&client, again).await);
        assert_eq!(ok(&replayed), &order);
        assert_eq!(
            replayed.meta.as_ref().unwrap()["ragent/idempotent_replay"],
            true
        );
    }
    assert_eq!(orders(&t.shop), 10, "one order");
}

#[tokio::test]
async fn the_order_preview_says_the_shopper_will_choose_the_address_when_the_order_will_ask() {
    let t = shop_with_two_addresses();
    let client = connect_modern(t.shop.clone(), Shows::Forms).await;
    let preview = completed(
        call_once(
            &client,
            keyed_request("preview_create_order", one_iphone(), "p-1"),
        )
        .await,
    );
    let preview = ok(&preview);
    assert!(
        preview.get("address").is_none(),
        "no address chosen yet: {preview}"
    );
    let choices: Vec<&str> = preview["addressChoices"]
        .as_array()
        .expect("the addresses it will offer")
        .iter()
        .map(|a| a["receiverAddress"].as_str().unwrap())
        .collect();
    assert_eq!(
        choices,
        [
            "北京市海淀区中关村大街 1 号",
            "上海市浦东新区张江镇科苑路 88 号 3 号楼 501 室"
        ]
    );
    assert!(
        text(&completed(
            call_once(
                &client,
                keyed_request("preview_create_order", one_iphone(), "p-2")
            )
            .await
        ))
        .contains("下单时商城会请用户从 2 个已保存地址中选择"),
        "the model reads it too"
    );

    // A client that cannot be asked: the order goes to the latest receiver,
    // and the preview says so.
    let legacy = connect(t.shop.clone()).await;
    let preview = support::client::call(&legacy, "preview_create_order", one_iphone()).await;
    let preview = ok(&preview);
    assert_eq!(preview["address"]["receiverName"], "李雷");
    assert!(preview.get("addressChoices").is_none(), "{preview}");
}

#[tokio::test]
async fn declining_or_cancelling_the_address_question_places_no_order_and_says_so() {
    let t = shop_with_two_addresses();
    let client = connect_modern(t.shop.clone(), Shows::Forms).await;
    for (action, key) in [("decline", "call-d"), ("cancel", "call-c")] {
        let request = keyed_request("create_order", one_iphone(), key);
        let asked = asked(call_once(&client, request.clone()).await);
        let retry = answered(&request, &asked, ADDRESS, json!({"action": action}));
        let result = completed(call_once(&client, retry).await);
        assert_ne!(result.is_error, Some(true));
        assert!(
            text(&result).contains("未下单"),
            "{action}: {}",
            text(&result)
        );
    }
    assert_eq!(orders(&t.shop), 9);
    assert_eq!(cart_quantity(&t.shop, IPHONE_17), 2);
}

#[tokio::test]
async fn an_answer_naming_an_address_the_shopper_does_not_have_places_nothing() {
    let t = shop_with_two_addresses();
    let client = connect_modern(t.shop.clone(), Shows::Forms).await;
    let request = keyed_request("create_order", one_iphone(), "call-x");
    let asked = asked(call_once(&client, request.clone()).await);
    let answer = json!({"action": "accept", "content": {"address": "not-an-address"}});
    let result = completed(call_once(&client, answered(&request, &asked, ADDRESS, answer)).await);
    assert_eq!(support::client::refused(&result), "UNKNOWN_SAVED_ADDRESS");
    assert_eq!(orders(&t.shop), 9);
}

#[tokio::test]
async fn no_question_with_one_address_a_named_receiver_or_a_2025_client() {
    // The seed's one receiver: placed at once.
    let t = open_shop();
    t.shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
    let client = connect_modern(t.shop.clone(), Shows::Forms).await;
    let placed =
        completed(call_once(&client, keyed_request("create_order", one_iphone(), "a")).await);
    assert_eq!(ok(&placed)["receiver"]["name"], "张明");

    // A receiver named in the arguments.
    let t = shop_with_two_addresses();
    let client = connect_modern(t.shop.clone(), Shows::Forms).await;
    let named = json!({
        "items": [{"skuCode": IPHONE_17, "quantity": 1}],
        "receiverName": "王芳", "receiverPhone": "13900139000",
        "receiverAddress": "广州市天河区体育西路 100 号"
    });
    let placed = completed(call_once(&client, keyed_request("create_order", named, "b")).await);
    assert_eq!(ok(&placed)["receiver"]["name"], "王芳");

    // A client on 2025-11-25, which cannot be asked: the latest receiver.
    let legacy = connect(t.shop.clone()).await;
    let placed = support::client::call(&legacy, "create_order", one_iphone()).await;
    assert_eq!(ok(&placed)["receiver"]["name"], "王芳");
    assert_eq!(orders(&t.shop), 11);
}

// The online shop's payment page (URL mode), over HTTP with a token.

const PAYMENT: &str = "confirm_payment";

/// An online shop on `store` with a signed-in shopper who has an unpaid
/// order for one iPhone 17, and a 2026-07-28 client of hers that shows
/// forms and pages.
struct OnlineShopper {
    stack: Stack,
    client: ModernClient,
    order_no: String,
}

async fn online_shopper(store: TestStore, login: &str) -> OnlineShopper {
    let stack = Stack::start(StackOptions {
        store,
        ..StackOptions::default()
    })
    .await;
    let order_no = unpaid_order_of(&stack, login).await;
    let token = sign_in(&stack.auth.issuer, login, &stack.resource)
        .await
        .access_token;
    let client = http_modern(stack.addr, Some(&token), Shows::FormsAndPages).await;
    OnlineShopper {
        stack,
        client,
        order_no,
    }
}

/// An unpaid order of one iPhone 17 for the user `login` of the stack's
/// shop, placed through the domain (on the blocking pool: a PostgreSQL
/// store blocks on a runtime of its own).
async fn unpaid_order_of(stack: &Stack, login: &str) -> String {
    let (shop, login) = (stack.shop.shop.clone(), login.to_owned());
    tokio::task::spawn_blocking(move || {
        let user = shop.user_for_subject(&login, &login).unwrap();
        let shop = shop.acting_for(user);
        shop.update_cart_item(&add(IPHONE_17, 1), None).unwrap();
        shop.create_order(&to_li_lei(&[(IPHONE_17, 1)]), None)
            .unwrap()
            .value
            .order_no
    })
    .await
    .unwrap()
}

fn pay_request(order_no: &str, key: &str) -> CallToolRequestParams {
    keyed_request("pay_order", json!({"orderNo": order_no}), key)
}

fn page_url(asked: &InputRequiredResult) -> String {
    let question = question(asked, PAYMENT);
    assert_eq!(question["mode"], "url", "{question}");
    question["url"].as_str().expect("the page's URL").to_owned()
}

async fn status_of(stack: &Stack, login: &str, order_no: &str) -> String {
    let shop = stack.shop.shop.clone();
    let (login, order_no) = (login.to_owned(), order_no.to_owned());
    tokio::task::spawn_blocking(move || {
        let user = shop.find_user(&login).unwrap().expect("the user");
        let found = shop.acting_for(user).query_order(&one_order(&order_no));
        found.unwrap().orders[0].status.clone()
    })
    .await
    .unwrap()
}

async fn get(url: &str) -> (u16, String) {
    let response = reqwest::get(url).await.expect("the page answers");
    (response.status().as_u16(), response.text().await.unwrap())
}

async fn press_pay(url: &str) -> (u16, String) {
    let response = reqwest::Client::new()
        .post(url)
        .send()
        .await
        .expect("the page answers");
    (response.status().as_u16(), response.text().await.unwrap())
}

async fn the_page_is_paid_on_and_the_call_sent_again_pays_once(store: TestStore) {
    let s = online_shopper(store, "alice").await;
    let request = pay_request(&s.order_no, "pay-1");
    let asked = asked(call_once(&s.client, request.clone()).await);
    let url = page_url(&asked);
    assert!(
        url.starts_with(&format!("http://{}/pay/", s.stack.addr)),
        "the shop's own page: {url}"
    );
    let message = question(&asked, PAYMENT)["message"].clone();
    assert!(message.as_str().unwrap().contains("¥6,799.00"), "{message}");

    let (status, page) = get(&url).await;
    assert_eq!(status, 200);
    assert!(page.contains(&s.order_no), "{page}");
    assert!(page.contains("¥6,799.00"), "{page}");
    assert!(page.contains(r#"id="pay""#), "a pay button: {page}");

    // Back before paying on the page: asked again, nothing paid.
    let visited = json!({"action": "accept"});
    let early = answered(&request, &asked, PAYMENT, visited.clone());
    let again = support::asking::asked(call_once(&s.client, early).await);
    assert_eq!(page_url(&again), url, "the same page");
    let message = question(&again, PAYMENT)["message"].clone();
    assert!(
        message.as_str().unwrap().contains("还没有付款"),
        "{message}"
    );
    assert_eq!(status_of(&s.stack, "alice", &s.order_no).await, "待支付");

    let (status, paid_page) = press_pay(&url).await;
    assert_eq!(status, 200);
    assert!(paid_page.contains("已付款"), "{paid_page}");
    assert_eq!(
        status_of(&s.stack, "alice", &s.order_no).await,
        "待支付",
        "the page only records the payment; the call takes it"
    );

    let retry = answered(&request, &again, PAYMENT, visited);
    let paid = completed(call_once(&s.client, retry.clone()).await);
    assert_eq!(ok(&paid)["order"]["status"], "已支付待发货");
    assert_eq!(ok(&paid)["paidAmountFen"], 679_900);
    assert_eq!(
        status_of(&s.stack, "alice", &s.order_no).await,
        "已支付待发货"
    );

    let replayed = completed(call_once(&s.client, retry).await);
    assert_eq!(ok(&replayed), ok(&paid), "the same call sent again");
    assert_eq!(
        replayed.meta.as_ref().unwrap()["ragent/idempotent_replay"],
        true
    );
    let other_key = pay_request(&s.order_no, "pay-2");
    let refused = completed(call_once(&s.client, other_key).await);
    assert_eq!(
        support::client::refused(&refused),
        "ORDER_STATUS",
        "paid once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_online_shop_hands_pay_order_over_to_its_page_and_pays_once_it_is_paid_on() {
    the_page_is_paid_on_and_the_call_sent_again_pays_once(TestStore::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_payment_page_on_postgresql_pays_once_it_is_paid_on() {
    the_page_is_paid_on_and_the_call_sent_again_pays_once(TestStore::Postgres).await;
}

async fn a_page_never_paid_on_pays_nothing_and_another_users_page_is_not_theirs(store: TestStore) {
    let s = online_shopper(store, "alice").await;
    let request = pay_request(&s.order_no, "pay-1");
    let asked = asked(call_once(&s.client, request.clone()).await);
    let url = page_url(&asked);

    // Declined: not paid, and the model is told so.
    let declined = answered(&request, &asked, PAYMENT, json!({"action": "decline"}));
    let result = completed(call_once(&s.client, declined).await);
    assert!(text(&result).contains("未扣款"), "{}", text(&result));
    assert_eq!(status_of(&s.stack, "alice", &s.order_no).await, "待支付");

    // Bob pays on Alice's page and sends its state with his own order.
    let bob_order = unpaid_order_of(&s.stack, "bob").await;
    let bob_token = sign_in(&s.stack.auth.issuer, "bob", &s.stack.resource)
        .await
        .access_token;
    let bob = http_modern(s.stack.addr, Some(&bob_token), Shows::FormsAndPages).await;
    assert_eq!(press_pay(&url).await.0, 200);
    let page_id = url.rsplit('/').next().unwrap();
    let mut stolen = pay_request(&bob_order, "bob-1");
    stolen.input_responses = Some(
        [(PAYMENT.to_owned(), json!({"action": "accept"}))]
            .into_iter()
            .collect(),
    );
    stolen.request_state = Some(format!("bitselect/paypage/v1:{page_id}:{bob_order}"));
    let refused = completed(call_once(&bob, stolen).await);
    assert_eq!(support::client::refused(&refused), "UNKNOWN_PAYMENT_PAGE");
    assert_eq!(status_of(&s.stack, "bob", &bob_order).await, "待支付");

    // Unknown and expired pages answer 404.
    assert_eq!(
        get(&format!("http://{}/pay/{}", s.stack.addr, "0".repeat(32)))
            .await
            .0,
        404
    );
    assert_eq!(
        get(&format!("http://{}/pay/not-a-page", s.stack.addr))
            .await
            .0,
        404
    );
    s.stack.shop.clock.advance(16 * MINUTE);
    assert_eq!(get(&url).await.0, 404);
    assert_eq!(press_pay(&url).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_never_paid_on_pays_nothing_and_another_users_page_id_is_not_theirs() {
    a_page_never_paid_on_pays_nothing_and_another_users_page_is_not_theirs(TestStore::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgresql_another_users_page_id_is_not_theirs_either() {
    a_page_never_paid_on_pays_nothing_and_another_users_page_is_not_theirs(TestStore::Postgres)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_page_is_replaced_by_a_new_one_when_the_call_comes_back() {
    let s = online_shopper(TestStore::Sqlite, "alice").await;
    let request = pay_request(&s.order_no, "pay-1");
    let asked = asked(call_once(&s.client, request.clone()).await);
    let first = page_url(&asked);
    s.stack.shop.clock.advance(16 * MINUTE);
    let back = answered(&request, &asked, PAYMENT, json!({"action": "accept"}));
    let again = support::asking::asked(call_once(&s.client, back).await);
    let second = page_url(&again);
    assert_ne!(second, first);
    let message = question(&again, PAYMENT)["message"].clone();
    assert!(message.as_str().unwrap().contains("已过期"), "{message}");
    assert_eq!(press_pay(&second).await.0, 200);
    let paid = answered(&request, &again, PAYMENT, json!({"action": "accept"}));
    let result = completed(call_once(&s.client, paid).await);
    assert_eq!(ok(&result)["order"]["status"], "已支付待发货");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_shows_only_forms_gets_the_payment_form_from_the_online_shop() {
    let stack = Stack::start(StackOptions::default()).await;
    let order_no = unpaid_order_of(&stack, "alice").await;
    let token = sign_in(&stack.auth.issuer, "alice", &stack.resource)
        .await
        .access_token;
    let client = http_modern(stack.addr, Some(&token), Shows::Forms).await;
    let asked = asked(call_once(&client, pay_request(&order_no, "pay-1")).await);
    assert_eq!(question(&asked, PAYMENT)["mode"], "form");
}

#[tokio::test]
async fn the_stdio_shop_keeps_the_payment_form_for_a_client_that_shows_pages_too() {
    let t = open_shop();
    let client = connect_modern(t.shop.clone(), Shows::FormsAndPages).await;
    let asked = asked(call_once(&client, pay_request("88236", "pay-1")).await);
    assert_eq!(question(&asked, PAYMENT)["mode"], "form");
}
