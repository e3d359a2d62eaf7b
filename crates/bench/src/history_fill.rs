//! A session with a history of a given length, written through the core's
//! store as the agent itself would have: turns of a question, a read call,
//! its result and an answer, with the call's record and status history.

use std::path::Path;

use ragent::llm::ToolCallRequest;
use ragent::protocol::CallRisk;
use ragent::store::calls::{self, BatchRecord, BatchState, CallUpdate, NewCall};
use ragent::store::messages::{self, NewMessage, Role};
use ragent::store::{Store, StoreError, sessions};
use ragent::toolcall::CallStatus;
use serde_json::json;

use crate::BenchError;
use crate::shop::{IPHONE, SHOP_SERVER};

/// A search result about the size a real one has.
fn search_result(turn: usize) -> String {
    format!(
        "找到 1 个商品：Apple iPhone 17 256GB 黑色（编码 {IPHONE}，型号 IPHONE-17），\
         售价 6999.00 元，库存 120，在售。标签：5G、A19、全网通、拍照。规格：6.3 英寸 \
         ProMotion 显示屏，256GB 存储，4800 万像素双摄。第 {turn} 次查询。\
         {{\"items\":[{{\"skuCode\":\"{IPHONE}\",\"priceFen\":699900,\"price\":\"6999.00\",\"stock\":120}}]}}"
    )
}

/// Appends `count` messages to a new session and returns its id.
pub fn fill_session(db_path: &Path, count: usize, now: i64) -> Result<String, BenchError> {
    let store = Store::open(db_path)?;
    let session_id = uuid_like(now, count);
    store.with_tx(|tx| {
        sessions::create(tx, &session_id, "历史对话", now)?;
        let mut written = 0;
        let mut turn = 0;
        while written < count {
            let left = count - written;
            let user = format!("第 {turn} 个问题：iPhone 17 现在多少钱，有货吗？");
            append(tx, &session_id, Role::User, &user, &[], None, now)?;
            written += 1;
            if left >= 4 {
                write_call_turn(tx, &session_id, turn, now)?;
                written += 2;
            }
            if left >= 2 {
                let answer = "iPhone 17 256GB 黑色现价 6999.00 元，有货，需要我加入购物车吗？";
                append(tx, &session_id, Role::Assistant, answer, &[], None, now)?;
                written += 1;
            }
            turn += 1;
        }
        Ok::<_, StoreError>(())
    })?;
    Ok(session_id)
}

fn uuid_like(now: i64, count: usize) -> String {
    format!("bench-{now}-{count}-{}", std::process::id())
}

fn append(
    conn: &rusqlite::Connection,
    session_id: &str,
    role: Role,
    content: &str,
    tool_calls: &[ToolCallRequest],
    result_of: Option<(&str, &str)>,
    now: i64,
) -> Result<i64, StoreError> {
    messages::append(
        conn,
        &NewMessage {
            session_id,
            run_id: Some("history"),
            role,
            content,
            tool_calls,
            tool_call_id: result_of.map(|(model_id, _)| model_id),
            call_id: result_of.map(|(_, call_id)| call_id),
        },
        now,
    )
}

/// An assistant message asking for a read, the call's record through
/// `succeeded`, and the result message.
fn write_call_turn(
    conn: &rusqlite::Connection,
    session_id: &str,
    turn: usize,
    now: i64,
) -> Result<(), StoreError> {
    let model_id = format!("hist_{turn}");
    let call_id = format!("{session_id}-call-{turn}");
    let arguments = json!({"skuCodes": [IPHONE]});
    let request = ToolCallRequest {
        id: model_id.clone(),
        name: format!("{SHOP_SERVER}__search_product"),
        arguments: arguments.to_string(),
    };
    let message_id = append(
        conn,
        session_id,
        Role::Assistant,
        "",
        std::slice::from_ref(&request),
        None,
        now,
    )?;
    let batch = BatchRecord {
        reply_id: format!("{call_id}-batch"),
        session_id: session_id.to_string(),
        run_id: "history".into(),
        assistant_message_id: message_id,
        state: BatchState::Executing,
        created_at: now,
        expires_at: now,
    };
    let call = NewCall {
        id: call_id.clone(),
        model_call_id: model_id.clone(),
        qualified_name: request.name.clone(),
        server: Some(SHOP_SERVER.into()),
        tool: Some("search_product".into()),
        title: Some("搜索商品".into()),
        description: None,
        proposed_arguments: request.arguments.clone(),
        arguments: Some(arguments),
        schema: None,
        destructive: false,
        definition_changed: false,
        can_change: false,
        trusted: true,
        declares_read_only: true,
        risk: CallRisk::Reads,
        preview_tool: None,
    };
    calls::insert_batch(conn, &batch, std::slice::from_ref(&call), now)?;
    let result = search_result(turn);
    for to in [
        CallStatus::Allowed,
        CallStatus::Running,
        CallStatus::Succeeded,
    ] {
        let update = CallUpdate {
            output: (to == CallStatus::Succeeded).then(|| result.clone()),
            is_error: (to == CallStatus::Succeeded).then_some(false),
            ..CallUpdate::default()
        };
        calls::move_call(conn, calls::get_call(conn, &call_id)?, to, &update, now)?;
    }
    append(
        conn,
        session_id,
        Role::Tool,
        &result,
        &[],
        Some((&model_id, &call_id)),
        now,
    )?;
    calls::set_batch_state(conn, &batch.reply_id, BatchState::Done)
}
