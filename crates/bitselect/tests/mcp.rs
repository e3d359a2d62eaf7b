//! The shop through MCP: in-process over `tokio::io::duplex`, the built
//! binary over stdio as a child process, and the binary over streamable HTTP.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Stdio;
use std::time::Duration;

use bitselect::Shop;
use bitselect::server::PREVIEW_META_KEY;
use pretty_assertions::assert_eq;
use rmcp::ServiceExt;
use rmcp::model::{JsonObject, Tool};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};
use support::client::*;
use support::*;
use tokio::io::{AsyncBufReadExt, BufReader};

const BIN: &str = env!("CARGO_BIN_EXE_bitselect-mcp");

/// What a tool's definition declares: its annotations and whether its
/// `_meta` says it places an order or moves money.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Declared {
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
    moves_money: bool,
}

/// A read tool, with its title.
fn read_tool(title: &str) -> (String, Declared) {
    let declared = Declared {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
        moves_money: false,
    };
    (title.to_owned(), declared)
}

/// A write tool, with its title: (destructive, idempotent, openWorld, moves
/// money).
fn write_tool(
    title: &str,
    (destructive, idempotent, open_world, moves_money): (bool, bool, bool, bool),
) -> (String, Declared) {
    let declared = Declared {
        read_only: false,
        destructive,
        idempotent,
        open_world,
        moves_money,
    };
    (title.to_owned(), declared)
}

/// Every tool's declaration. A change here is a change of what the user is
/// asked before a call: make it on purpose.
fn expected_declarations() -> BTreeMap<&'static str, (String, Declared)> {
    BTreeMap::from([
        ("search_product", read_tool("搜索商品")),
        ("query_cart", read_tool("查看购物车")),
        ("query_coupons", read_tool("查看优惠券")),
        ("query_order", read_tool("查询订单")),
        ("query_logistics", read_tool("查询物流")),
        ("query_after_sale", read_tool("查询售后进度")),
        // The previews of the writes: read-only, the write's arguments.
        (
            "preview_update_cart_item",
            read_tool("预览：加入/修改购物车"),
        ),
        ("preview_create_order", read_tool("预览：提交订单")),
        ("preview_pay_order", read_tool("预览：支付订单")),
        ("preview_cancel_order", read_tool("预览：取消订单")),
        ("preview_change_address", read_tool("预览：修改收货地址")),
        ("preview_apply_after_sale", read_tool("预览：申请售后")),
        // (destructive, idempotent, openWorld, moves money)
        (
            "update_cart_item",
            write_tool("加入/修改购物车", (true, false, false, false)),
        ),
        (
            "create_order",
            write_tool("提交订单", (true, false, false, true)),
        ),
        (
            "pay_order",
            write_tool("支付订单", (true, true, false, true)),
        ),
        (
            "cancel_order",
            write_tool("取消订单", (true, true, false, true)),
        ),
        (
            "change_address",
            write_tool("修改收货地址", (true, true, false, false)),
        ),
        (
            "apply_after_sale",
            write_tool("申请售后", (true, false, false, true)),
        ),
        (
            "submit_ticket",
            write_tool("转人工客服", (false, false, true, false)),
        ),
    ])
}

/// Whether a tool definition's `_meta` says it moves money. Anything but
/// the JSON `true` counts as no.
fn declares_moving_money(tool: &Tool) -> bool {
    tool.meta
        .as_ref()
        .and_then(|meta| meta.get("ragent/moves_money"))
        == Some(&Value::Bool(true))
}

/// Every tool is listed once with the annotations the design asks for, and
/// every argument carries a card label.
fn assert_tool_definitions(tools: &[Tool]) {
    let expected = expected_declarations();
    let mut seen = BTreeMap::new();
    for tool in tools {
        let a = tool.annotations.as_ref().expect("annotations");
        let title = a.title.as_deref().expect("annotation title");
        let declared = Declared {
            read_only: a.read_only_hint.expect("readOnlyHint"),
            destructive: a.destructive_hint.expect("destructiveHint"),
            idempotent: a.idempotent_hint.expect("idempotentHint"),
            open_world: a.open_world_hint.expect("openWorldHint"),
            moves_money: declares_moving_money(tool),
        };
        seen.insert(tool.name.as_ref(), (title.to_owned(), declared));
        assert_eq!(tool.title.as_deref(), Some(title), "{}", tool.name);
        assert!(
            tool.description.as_ref().is_some_and(|d| d.len() > 20),
            "{}",
            tool.name
        );
        let schema = &tool.input_schema;
        assert_eq!(schema.get("type"), Some(&json!("object")), "{}", tool.name);
        assert_eq!(
            schema.get("additionalProperties"),
            Some(&json!(false)),
            "{} refuses unknown fields",
            tool.name
        );
        let properties = schema["properties"].as_object().expect("properties");
        for (name, property) in properties {
            let label = property.get("title").and_then(Value::as_str);
            assert!(
                label.is_some_and(|l| !l.is_ascii()),
                "{}.{name} needs a Chinese title, has {property}",
                tool.name
            );
            assert!(
                property.get("description").is_some(),
                "{}.{name}",
                tool.name
            );
        }
    }
    assert_eq!(seen.len(), tools.len(), "no tool is listed twice");
    assert_eq!(seen, expected);
}

// ---- in-process over duplex -------------------------------------------------

#[tokio::test]
async fn the_nineteen_tools_are_listed_with_honest_annotations() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_tool_definitions(&tools);
    let create = tools.iter().find(|t| t.name == "create_order").unwrap();
    let item = &create.input_schema["properties"]["items"]["items"];
    assert_eq!(item["properties"]["skuCode"]["title"], "商品编码");
    assert_eq!(item["properties"]["quantity"]["title"], "数量");
    assert_eq!(item["properties"]["quantity"]["minimum"], 1);
    let cart = tools.iter().find(|t| t.name == "update_cart_item").unwrap();
    assert_eq!(
        cart.input_schema["properties"]["action"]["oneOf"],
        json!([
            {"const": "add", "title": "加入购物车", "type": "string"},
            {"const": "decrease", "title": "减少数量", "type": "string"},
            {"const": "remove", "title": "移出购物车", "type": "string"}
        ])
    );
    client.cancel().await.unwrap();
}

/// The `const` values of every enum in a schema, each with its title;
/// panics on an enum value without one.
fn enum_values_with_titles(schema: &Value, path: &str, found: &mut Vec<(String, String)>) {
    match schema {
        Value::Object(map) => {
            assert!(
                !map.contains_key("enum"),
                "{path} lists enum values without titles: {schema}"
            );
            if let Some(constant) = map.get("const") {
                let title = map.get("title").and_then(Value::as_str);
                let title = title.unwrap_or_else(|| panic!("{path}: {constant} has no title"));
                found.push((format!("{path}={constant}"), title.to_owned()));
            }
            for (key, value) in map {
                enum_values_with_titles(value, &format!("{path}.{key}"), found);
            }
        }
        Value::Array(items) => {
            for item in items {
                enum_values_with_titles(item, path, found);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn every_enum_value_in_the_input_schemas_has_a_title() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    let tools = client.list_all_tools().await.unwrap();
    let mut found = Vec::new();
    for tool in &tools {
        enum_values_with_titles(
            &Value::Object(tool.input_schema.as_ref().clone()),
            &tool.name,
            &mut found,
        );
    }
    let titles: BTreeMap<String, String> = found.into_iter().collect();
    for (value, title) in [
        (
            "update_cart_item.properties.action.oneOf=\"decrease\"",
            "减少数量",
        ),
        ("apply_after_sale.properties.type.oneOf=\"换货\"", "换货"),
        (
            "search_product.properties.sort.anyOf.oneOf=\"price_asc\"",
            "价格从低到高",
        ),
        (
            "query_order.properties.status.anyOf.oneOf=\"已签收\"",
            "已签收",
        ),
        (
            "submit_ticket.properties.topic.anyOf.oneOf=\"物流问题\"",
            "物流问题",
        ),
    ] {
        assert_eq!(
            titles.get(value).map(String::as_str),
            Some(title),
            "{value}"
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn enum_arguments_accept_the_same_strings_as_before() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    for (tool, args) in [
        (
            "search_product",
            json!({"keyword": "iPhone", "sort": "price_desc"}),
        ),
        ("query_order", json!({"status": "已签收"})),
        ("query_after_sale", json!({})),
    ] {
        ok(&call(&client, tool, args).await);
    }
    let preview = call(
        &client,
        "preview_apply_after_sale",
        json!({"orderNo": "88231", "skuCode": "MG6W4CH/A", "type": "exchange", "reason": "颜色不合适"}),
    )
    .await;
    assert_eq!(
        ok(&preview)["summary"]
            .as_str()
            .map(|s| s.starts_with("申请换货")),
        Some(true)
    );
    let wrong = call(
        &client,
        "update_cart_item",
        json!({"skuCode": "MG6W4CH/A", "action": "加入购物车", "quantity": 1}),
    )
    .await;
    assert_eq!(
        refused(&wrong),
        "INVALID_ARGUMENT",
        "a title is not a value"
    );
    client.cancel().await.unwrap();
}

/// The preview a write names in its `_meta`, if any.
fn preview_named(tool: &Tool) -> Option<&str> {
    tool.meta
        .as_ref()
        .and_then(|meta| meta.get(PREVIEW_META_KEY))
        .and_then(Value::as_str)
}

#[tokio::test]
async fn every_write_names_a_read_only_preview_with_its_very_input_schema() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    let tools = client.list_all_tools().await.unwrap();
    let by_name: BTreeMap<&str, &Tool> = tools.iter().map(|t| (t.name.as_ref(), t)).collect();
    let mut previewed = BTreeSet::new();
    for tool in &tools {
        let Some(preview) = preview_named(tool) else {
            continue;
        };
        previewed.insert(tool.name.as_ref());
        let target = by_name
            .get(preview)
            .unwrap_or_else(|| panic!("{} names {preview}, which is not listed", tool.name));
        let a = target.annotations.as_ref().expect("annotations");
        assert_eq!(a.read_only_hint, Some(true), "{preview}");
        assert_eq!(a.destructive_hint, Some(false), "{preview}");
        assert_eq!(a.idempotent_hint, Some(true), "{preview}");
        assert_eq!(a.open_world_hint, Some(false), "{preview}");
        assert_eq!(target.input_schema, tool.input_schema, "{preview}");
        assert!(preview_named(target).is_none(), "a preview has no preview");
        // Merged with the other declarations, not in place of them.
        assert_eq!(
            declares_moving_money(tool),
            [
                "create_order",
                "pay_order",
                "cancel_order",
                "apply_after_sale"
            ]
            .contains(&tool.name.as_ref()),
            "{}",
            tool.name
        );
    }
    assert_eq!(
        previewed,
        BTreeSet::from([
            "apply_after_sale",
            "cancel_order",
            "change_address",
            "create_order",
            "pay_order",
            "update_cart_item"
        ])
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_preview_answers_with_structured_content_and_text_and_changes_nothing() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    ok(&call(
        &client,
        "update_cart_item",
        json!({"skuCode": "MG6W4CH/A", "action": "add", "quantity": 1}),
    )
    .await);
    let before = t.shop.stats().unwrap();
    let args =
        json!({"items": [{"skuCode": "MG6W4CH/A", "quantity": 1}], "couponCode": "SHOP-5000-300"});
    let first = call(&client, "preview_create_order", args.clone()).await;
    let preview = ok(&first);
    assert_eq!(preview["summary"], "提交订单：1 件商品，应付 ¥6,499.00");
    assert_eq!(preview["lines"][0]["name"], "iPhone 17");
    assert_eq!(preview["lines"][0]["spec"], "256GB 黑色");
    assert_eq!(preview["lines"][0]["unitPriceFen"], 679_900);
    assert_eq!(
        preview["totals"],
        json!([
            {"kind": "goods", "label": "商品金额", "amountFen": 679_900},
            {"kind": "discount", "label": "店铺满减券（SHOP-5000-300）", "amountFen": -30_000},
            {"kind": "pay", "label": "应付", "amountFen": 649_900}
        ])
    );
    assert!(text(&first).contains("应付：¥6,499.00"), "{}", text(&first));
    let again = call(&client, "preview_create_order", args.clone()).await;
    assert_eq!(
        serde_json::to_string(&again.structured_content).unwrap(),
        serde_json::to_string(&first.structured_content).unwrap(),
        "the same shop and arguments give the same bytes"
    );
    assert_eq!(t.shop.stats().unwrap(), before);
    let placed = call(&client, "create_order", args).await;
    assert_eq!(
        ok(&placed)["payAmountFen"],
        preview["totals"][2]["amountFen"]
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_preview_of_an_unknown_order_is_the_error_the_write_gives() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    for (write, args) in [
        ("pay_order", json!({"orderNo": "99999"})),
        ("cancel_order", json!({"orderNo": "99999"})),
        (
            "change_address",
            json!({"orderNo": "99999", "receiverName": "李雷"}),
        ),
        (
            "apply_after_sale",
            json!({"orderNo": "99999", "skuCode": "MG6W4CH/A", "type": "换货", "reason": "尺寸不合适"}),
        ),
        (
            "update_cart_item",
            json!({"skuCode": "NOPE-1", "action": "add", "quantity": 1}),
        ),
        (
            "create_order",
            json!({"items": [{"skuCode": "NOPE-1", "quantity": 1}]}),
        ),
        (
            "update_cart_item",
            json!({"skuCode": "MG6W4CH/A", "action": "buy"}),
        ),
    ] {
        let preview = call(&client, &format!("preview_{write}"), args.clone()).await;
        let written = call(&client, write, args).await;
        assert_eq!(preview.is_error, Some(true), "{write}");
        assert_eq!(
            preview.structured_content, written.structured_content,
            "{write}"
        );
        assert_eq!(text(&preview), text(&written), "{write}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn every_tool_that_places_an_order_or_moves_money_is_destructive_and_says_so() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    let tools = client.list_all_tools().await.unwrap();
    let money: BTreeSet<&str> = tools
        .iter()
        .filter(|tool| declares_moving_money(tool))
        .map(|tool| tool.name.as_ref())
        .collect();
    assert_eq!(
        money,
        BTreeSet::from([
            "apply_after_sale",
            "cancel_order",
            "create_order",
            "pay_order"
        ])
    );
    for tool in tools.iter().filter(|tool| declares_moving_money(tool)) {
        let a = tool.annotations.as_ref().expect("annotations");
        assert_eq!(a.destructive_hint, Some(true), "{}", tool.name);
        assert_eq!(a.read_only_hint, Some(false), "{}", tool.name);
    }
    client.cancel().await.unwrap();
}

/// The tools whose definition's `_meta` sets `key` to `true`.
fn declaring<'a>(tools: &'a [rmcp::model::Tool], key: &str) -> BTreeSet<&'a str> {
    tools
        .iter()
        .filter(|tool| {
            tool.meta
                .as_ref()
                .and_then(|meta| meta.get(key))
                .and_then(|v| v.as_bool())
                == Some(true)
        })
        .map(|tool| tool.name.as_ref())
        .collect()
}

#[tokio::test]
async fn only_the_cart_write_says_it_changes_the_cart() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        declaring(&tools, "ragent/changes_cart"),
        BTreeSet::from(["update_cart_item"])
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn only_the_cart_and_address_writes_say_another_call_can_undo_them() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        declaring(&tools, "ragent/undoable"),
        BTreeSet::from(["change_address", "update_cart_item"])
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_server_declares_that_it_honours_idempotency_keys() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    let info = client.peer_info().expect("server info");
    let experimental = info
        .capabilities
        .experimental
        .as_ref()
        .expect("experimental");
    assert_eq!(
        experimental.get("ragent/idempotency_key"),
        Some(&JsonObject::new())
    );
    assert!(info.capabilities.tools.is_some());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_seed_purchase_through_the_tools() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    let added = call(
        &client,
        "update_cart_item",
        json!({"skuCode": IPHONE_17, "action": "add", "quantity": 1}),
    )
    .await;
    assert_eq!(ok(&added)["quantity"], 1);
    let placed = call(
        &client,
        "create_order",
        json!({"items": [{"skuCode": IPHONE_17, "quantity": 1}]}),
    )
    .await;
    let order = ok(&placed);
    assert_eq!(order["status"], "待支付");
    assert_eq!(order["orderNo"], "88239");
    assert_eq!(order["payAmountFen"], 679_900);
    assert_eq!(order["payAmount"], "6799.00");
    assert!(
        text(&placed).contains("订单 88239｜待支付"),
        "{}",
        text(&placed)
    );

    let found = call(&client, "search_product", json!({"skuCodes": [IPHONE_17]})).await;
    assert_eq!(ok(&found)["items"][0]["skus"][0]["stock"], 9);
    let cart = call(&client, "query_cart", json!({})).await;
    let lines = ok(&cart)["lines"].as_array().unwrap();
    assert!(lines.iter().all(|l| l["skuCode"] != IPHONE_17));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn every_read_tool_answers_with_structured_content_and_text() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;

    let search = call(
        &client,
        "search_product",
        json!({"keyword": "AirTag", "limit": 2}),
    )
    .await;
    assert_eq!(ok(&search)["returned"], 2);
    assert!(text(&search).contains("AirTag"));

    let cart = call(&client, "query_cart", json!({})).await;
    assert_eq!(ok(&cart)["lines"].as_array().unwrap().len(), 5);

    let coupons = call(
        &client,
        "query_coupons",
        json!({"amount": "6799.00", "categoryAmounts": {"手机": 6799}}),
    )
    .await;
    assert_eq!(ok(&coupons)["bestCode"], "SHOP-5000-300");
    assert!(text(&coupons).contains("NEW-1000-100"));

    let order = call(&client, "query_order", json!({"orderNo": "88231"})).await;
    let windows = &ok(&order)["orders"][0]["afterSaleWindows"];
    assert_eq!(windows["returnDaysLeft"], 4);
    assert_eq!(windows["exchangeDaysLeft"], 12);

    let recent = call(&client, "query_order", json!({})).await;
    assert_eq!(ok(&recent)["orders"].as_array().unwrap().len(), 5);

    let parcel = call(
        &client,
        "query_logistics",
        json!({"trackingNo": "BIT9100000234"}),
    )
    .await;
    assert_eq!(ok(&parcel)["events"].as_array().unwrap().len(), 2);

    let progress = call(&client, "query_after_sale", json!({"orderNo": "88232"})).await;
    assert_eq!(ok(&progress)["afterSales"][0]["status"], "处理中");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn every_write_tool_changes_the_shop_and_says_what_it_did() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;

    let pay = call(&client, "pay_order", json!({"orderNo": "88236"})).await;
    assert_eq!(ok(&pay)["order"]["status"], "已支付待发货");

    let address = call(
        &client,
        "change_address",
        json!({"orderNo": "88236", "receiverAddress": "上海市静安区南京西路 1 号"}),
    )
    .await;
    assert_eq!(
        ok(&address)["receiver"]["address"],
        "上海市静安区南京西路 1 号"
    );

    let cancel = call(
        &client,
        "cancel_order",
        json!({"orderNo": "88236", "reason": "买错了"}),
    )
    .await;
    assert_eq!(ok(&cancel)["refundAmountFen"], 49_800);
    assert_eq!(ok(&cancel)["order"]["status"], "已取消");

    let after_sale = call(
        &client,
        "apply_after_sale",
        json!({"orderNo": "88233", "skuCode": "MDH74CH/A", "type": "换货", "reason": "键盘按键失灵"}),
    )
    .await;
    assert_eq!(ok(&after_sale)["afterSaleNo"], "AS88233001");

    let ticket = call(
        &client,
        "submit_ticket",
        json!({"topic": "物流问题", "orderNo": "88234", "description": "物流两天没有更新，请帮忙催一下"}),
    )
    .await;
    assert_eq!(ok(&ticket)["ticketNo"], "TK000001");

    let removed = call(
        &client,
        "update_cart_item",
        json!({"skuCode": "MDF44FE/A", "action": "remove"}),
    )
    .await;
    assert_eq!(ok(&removed)["removed"], true);
    assert_eq!(t.shop.stats().unwrap().cart_lines, 4);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn refusals_are_tool_errors_a_model_can_act_on() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    let delisted = call(
        &client,
        "update_cart_item",
        json!({"skuCode": IPHONE_16_DELISTED, "action": "add", "quantity": 1}),
    )
    .await;
    assert_eq!(refused(&delisted), "SKU_DELISTED");
    assert!(text(&delisted).contains(IPHONE_16_DELISTED));

    let not_in_cart = call(
        &client,
        "create_order",
        json!({"items": [{"skuCode": IPHONE_17, "quantity": 1}]}),
    )
    .await;
    assert_eq!(refused(&not_in_cart), "NOT_IN_CART");
    assert!(text(&not_in_cart).contains("请先调用 update_cart_item"));
    // Two voices: the shopper's sentence for the card, the model's next step.
    let error = &not_in_cart.structured_content.as_ref().unwrap()["error"];
    assert_eq!(error["message"], "购物车里没有 iPhone 17 256GB 黑色");
    assert_eq!(
        error["hint"],
        "请先调用 update_cart_item（action=add，skuCode=MG6W4CH/A）加入购物车"
    );

    let foreign = call(&client, "query_logistics", json!({"trackingNo": "SF0001"})).await;
    assert_eq!(refused(&foreign), "UNKNOWN_TRACKING_NO");

    let shipped = call(&client, "cancel_order", json!({"orderNo": "88234"})).await;
    assert_eq!(refused(&shipped), "ORDER_STATUS");
    assert!(text(&shipped).contains("已发货"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn bad_arguments_are_tool_errors_and_the_server_keeps_answering() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    let cases = [
        (
            "update_cart_item",
            json!({"skuCode": IPHONE_17, "action": "add", "quantity": 0}),
        ),
        (
            "update_cart_item",
            json!({"skuCode": IPHONE_17, "action": "explode", "quantity": 1}),
        ),
        (
            "update_cart_item",
            json!({"skuCode": IPHONE_17, "action": "add", "quantity": -1}),
        ),
        (
            "update_cart_item",
            json!({"sku": IPHONE_17, "action": "add", "quantity": 1}),
        ),
        ("create_order", json!({"items": "everything"})),
        (
            "create_order",
            json!({"items": [{"skuCode": IPHONE_17, "quantity": 1}], "discount": 100}),
        ),
        ("search_product", json!({"minPrice": 10.005})),
        ("search_product", json!({"limit": 1000})),
        ("query_cart", json!({"all": true})),
        ("query_coupons", json!({"amount": "lots"})),
        (
            "apply_after_sale",
            json!({"orderNo": "88231", "skuCode": IPHONE_17, "type": "refund_please", "reason": "坏了坏了"}),
        ),
        ("query_logistics", json!({})),
    ];
    for (tool, arguments) in cases {
        let result = call(&client, tool, arguments.clone()).await;
        assert_eq!(refused(&result), "INVALID_ARGUMENT", "{tool} {arguments}");
        assert!(!text(&result).is_empty());
    }
    let after = call(&client, "query_cart", json!({})).await;
    ok(&after);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn query_coupons_refuses_amounts_too_large_for_the_shop_instead_of_failing_inside() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    // 1,200 keys that trim to one category, each 9999999999999 yuan.
    let amounts: JsonObject = (0..1_200)
        .map(|spaces| {
            (
                format!("{}平板", " ".repeat(spaces)),
                json!(9_999_999_999_999_u64),
            )
        })
        .collect();
    let result = call(
        &client,
        "query_coupons",
        json!({ "categoryAmounts": amounts }),
    )
    .await;
    assert_eq!(refused(&result), "INVALID_ARGUMENT");
    assert!(text(&result).contains("金额过大"), "{}", text(&result));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_repeated_meta_key_returns_the_first_result_and_places_one_order() {
    let t = open_shop();
    let client = connect(t.shop.clone()).await;
    call(
        &client,
        "update_cart_item",
        json!({"skuCode": IPHONE_17, "action": "add", "quantity": 2}),
    )
    .await;
    let arguments = json!({"items": [{"skuCode": IPHONE_17, "quantity": 1}]});
    let first = call_keyed(
        &client,
        "create_order",
        arguments.clone(),
        json!("call_abc"),
    )
    .await;
    let again = call_keyed(&client, "create_order", arguments, json!("call_abc")).await;
    assert_eq!(ok(&again), ok(&first));
    assert_eq!(text(&again), text(&first));
    assert!(first.meta.is_none());
    assert_eq!(
        again
            .meta
            .as_ref()
            .and_then(|m| m.get("ragent/idempotent_replay")),
        Some(&json!(true))
    );
    assert_eq!(t.shop.stats().unwrap().orders, 9);
    assert_eq!(stock(&t.shop, IPHONE_17), 9);

    let other =
        json!({"items": [{"skuCode": IPHONE_17, "quantity": 1}], "couponCode": "SHOP-5000-300"});
    let conflict = call_keyed(&client, "create_order", other, json!("call_abc")).await;
    assert_eq!(refused(&conflict), "IDEMPOTENCY_CONFLICT");

    let not_a_string =
        call_keyed(&client, "pay_order", json!({"orderNo": "88236"}), json!(42)).await;
    assert_eq!(refused(&not_a_string), "INVALID_ARGUMENT");
    assert_eq!(t.shop.stats().unwrap().orders, 9);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn concurrent_create_order_calls_over_separate_connections_never_oversell() {
    let t = open_shop();
    t.shop
        .update_cart_item(&add(VISION_PRO_3_LEFT, 9), None)
        .unwrap();
    let mut clients = Vec::new();
    for _ in 0..10 {
        clients.push(connect(t.shop.clone()).await);
    }
    let mut calls = tokio::task::JoinSet::new();
    for client in clients {
        calls.spawn(async move {
            let result = call(
                &client,
                "create_order",
                json!({"items": [{"skuCode": VISION_PRO_3_LEFT, "quantity": 1}]}),
            )
            .await;
            client.cancel().await.unwrap();
            result
        });
    }
    let results = calls.join_all().await;
    let placed = results.iter().filter(|r| r.is_error == Some(false)).count();
    assert_eq!(placed, 3);
    for result in results.iter().filter(|r| r.is_error == Some(true)) {
        let code = refused(result);
        assert!(
            ["INSUFFICIENT_STOCK", "OUT_OF_STOCK"].contains(&code.as_str()),
            "{code}"
        );
    }
    assert_eq!(stock(&t.shop, VISION_PRO_3_LEFT), 0);
}

// ---- the binary ---------------------------------------------------------------

#[tokio::test]
async fn the_binary_serves_stdio_to_a_client_in_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = tokio::process::Command::new(BIN);
    command.arg("--data-dir").arg(dir.path());
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.unwrap();

    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 19);
    assert_tool_definitions(&tools);

    let found = call(
        &client,
        "search_product",
        json!({"keyword": "iPhone 17", "limit": 3}),
    )
    .await;
    assert_eq!(ok(&found)["items"][0]["spuCode"], "IPHONE-17");

    let added = call(
        &client,
        "update_cart_item",
        json!({"skuCode": IPHONE_17, "action": "add", "quantity": 1}),
    )
    .await;
    ok(&added);
    let placed = call(
        &client,
        "create_order",
        json!({"items": [{"skuCode": IPHONE_17, "quantity": 1}]}),
    )
    .await;
    assert_eq!(ok(&placed)["status"], "待支付");
    client.cancel().await.unwrap();

    // The same database, opened directly, saw the purchase.
    let shop = Shop::open(dir.path()).unwrap();
    assert_eq!(stock(&shop, IPHONE_17), 9);
    assert_eq!(cart_quantity(&shop, IPHONE_17), 0);
}

#[test]
fn the_binary_serves_requests_read_from_a_file_and_answers_into_a_file() {
    // Stdin and stdout that are not pipes (a file, a terminal) are served
    // through tokio's stdio rather than polled as pipes.
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("requests.jsonl");
    let answers = dir.path().join("answers.jsonl");
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "file", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "search_product", "arguments": {"skuCodes": [IPHONE_17]}}}),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&requests, text).unwrap();

    let status = std::process::Command::new(BIN)
        .arg("--data-dir")
        .arg(dir.path().join("shop"))
        .stdin(std::fs::File::open(&requests).unwrap())
        .stdout(std::fs::File::create(&answers).unwrap())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "the server ended at the end of its input");

    let answered: Vec<Value> = std::fs::read_to_string(&answers)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let found = answered.iter().find(|a| a["id"] == 2).unwrap();
    assert_eq!(
        found["result"]["structuredContent"]["items"][0]["skus"][0]["config"],
        "256GB 黑色"
    );
}

#[tokio::test]
async fn the_binary_serves_streamable_http_on_a_free_loopback_port() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(BIN)
        .arg("--http")
        .arg("127.0.0.1:0")
        .env("BITSELECT_DATA_DIR", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("bitselect-mcp listening on ") {
                return url.to_owned();
            }
        }
        panic!("the server exited before it was ready");
    })
    .await
    .expect("ready line");
    // Keep draining stderr so the child never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });

    let client = ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 19);
    let found = call(
        &client,
        "search_product",
        json!({"skuCodes": [VISION_PRO_3_LEFT]}),
    )
    .await;
    assert_eq!(ok(&found)["items"][0]["skus"][0]["stock"], 3);
    let refusal = call(
        &client,
        "update_cart_item",
        json!({"skuCode": AIRPODS_NO_STOCK, "action": "add", "quantity": 1}),
    )
    .await;
    assert_eq!(refused(&refusal), "OUT_OF_STOCK");
    client.cancel().await.unwrap();
    child.kill().await.unwrap();
    assert!(dir.path().join("shop.db").exists());
}

/// mimalloc's arenas are aligned to huge pages: with the kernel's
/// transparent huge pages on, an instance held four times the memory.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_service_runs_without_transparent_huge_pages() {
    let dir = tempfile::tempdir().unwrap();
    let (child, _addr, _stderr) =
        shop_process::spawn_shop(&["--data-dir".as_ref(), dir.path().as_os_str()]).await;
    let pid = child.id().unwrap();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let huge_pages = status
        .lines()
        .find_map(|line| line.strip_prefix("THP_enabled:"))
        .expect("the kernel reports THP_enabled");
    assert_eq!(huge_pages.trim(), "0");
}

#[test]
fn the_binary_prints_help_and_rejects_bad_flags_with_status_2() {
    let help = std::process::Command::new(BIN)
        .arg("--help")
        .output()
        .unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("--data-dir DIR"));

    let bad = std::process::Command::new(BIN)
        .arg("--frobnicate")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown argument `--frobnicate`"));
    assert!(bad.stdout.is_empty(), "stdout stays clean");

    let remote = std::process::Command::new(BIN)
        .args(["--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(remote.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&remote.stderr).contains("--allow-remote"));
}
