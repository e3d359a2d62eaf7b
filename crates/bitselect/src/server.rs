//! The MCP face of the shop: nineteen tools on an rmcp tool router, the
//! thirteen of the product and a read-only `preview_*` tool for each write
//! but `submit_ticket`, named in the write's definition `_meta`. The reads
//! and `submit_ticket` are declared here; the writes and their previews
//! once each, in the table of `writes.rs`.
//!
//! Each tool method is thin: parse the arguments, run the domain call on a
//! blocking thread (SQLite is synchronous), map the outcome. Bad arguments
//! and refusals become tool errors (`isError: true`) with a message a model
//! can act on, never protocol errors, so the model sees them and can recover.

use std::fmt::Display;
use std::sync::Arc;
use std::time::Instant;

use rmcp::handler::server::common::{schema_for_input, schema_for_type};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
    ExperimentalCapabilities, Extensions, Implementation, JsonObject, MetaObject,
    RequestMetaObject, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::asking;
use crate::callers::Callers;
use crate::error::{Result, ShopError};
use crate::idempotency::META_KEY;
use crate::params::{
    CreateOrderParams, PayOrderParams, QueryAfterSaleParams, QueryCartParams, QueryCouponsParams,
    QueryLogisticsParams, QueryOrderParams, SearchProductParams, SubmitTicketParams,
};

use crate::shop::{Shop, Written};

mod asked;
mod writes;

/// Set in a result's `_meta` when it is the stored first result of a call
/// with the same idempotency key.
pub const REPLAYED_META_KEY: &str = "ragent/idempotent_replay";

/// Set to `true` in the `_meta` of the definition of every tool that places
/// an order or moves money (pays, refunds), so a client can refuse to let
/// such a call ever skip the user's confirmation, whatever its settings.
pub const MOVES_MONEY_META_KEY: &str = "ragent/moves_money";

/// Set to `true` in the `_meta` of the definition of the write that changes
/// the shopping cart, so a client can group it with its kind.
pub const CHANGES_CART_META_KEY: &str = "ragent/changes_cart";

/// Set to `true` in the `_meta` of the definition of a write that another
/// call can undo (a cart line put back, an address changed again), so a
/// client need not warn that it cannot be undone.
pub const UNDOABLE_META_KEY: &str = "ragent/undoable";

/// Set in the `_meta` of a write tool's definition to the name of the
/// read-only tool of this server that previews it: it takes the same
/// arguments and answers with what the write would do now (see
/// [`crate::preview::Preview`]), for the confirmation card.
pub const PREVIEW_META_KEY: &str = "ragent/preview";

/// What a write touches, as its definition's `_meta` declares.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Touches {
    /// The cart: a line can be put back as it was.
    Cart,
    /// An order's address, which can be changed again before shipping.
    Address,
    /// Places an order or moves money.
    Money,
}

/// The definition `_meta` of a write tool: the tool that previews it, and
/// whether it changes the cart or places an order or moves money, and
/// whether another call can undo it.
fn write_meta(preview: &str, touches: Touches) -> MetaObject {
    let mut meta = MetaObject::default();
    meta.insert(
        PREVIEW_META_KEY.to_owned(),
        Value::String(preview.to_owned()),
    );
    let flags: &[&str] = match touches {
        Touches::Cart => &[CHANGES_CART_META_KEY, UNDOABLE_META_KEY],
        Touches::Address => &[UNDOABLE_META_KEY],
        Touches::Money => &[MOVES_MONEY_META_KEY],
    };
    for key in flags {
        meta.insert((*key).to_owned(), Value::Bool(true));
    }
    meta
}

const INSTRUCTIONS: &str = "比特严选（Bit Select）电子产品商城。金额字段成对给出：…Fen 为整数分，\
同名字段为两位小数的元字符串，计算时请用 …Fen。下单只能从购物车下：先 search_product 找到 \
skuCode，再 update_cart_item 加入购物车，然后 create_order。写操作（加购、下单、支付、取消、\
改地址、售后、工单）会先请用户确认。除 submit_ticket 外，每个写操作都有参数完全相同的只读预览工具 \
preview_<写操作名>，返回该写操作现在会做什么（商品、金额、地址、不能执行的原因），不做任何修改。";

/// The input schema of a tool, from its argument struct. The derived schema
/// always is an object; should rmcp's stricter check ever disagree, fall back
/// to the unchecked schema rather than fail the whole server.
fn input_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    let schema = schema_for_input::<T>().unwrap_or_else(|error| {
        tracing::error!(%error, "input schema did not validate");
        schema_for_type::<T>()
    });
    // Some model APIs insist on `properties` even for a tool without arguments.
    if schema.contains_key("properties") {
        return schema;
    }
    let mut schema = schema.as_ref().clone();
    schema.insert("properties".to_owned(), Value::Object(JsonObject::new()));
    Arc::new(schema)
}

/// The shop as an MCP server, acting for the users its [`Callers`] say.
#[derive(Debug, Clone)]
pub struct ShopServer {
    shop: Shop,
    callers: Callers,
    /// The origin the shop's payment pages are served at (the online
    /// shop), where `pay_order` sends a client that shows pages.
    pay_pages: Option<Arc<str>>,
    /// Shared by clones: a stateless HTTP service clones the server for
    /// every request, and building the routes again (each tool's name
    /// checked into a map) took about an eighth of a call's CPU.
    tool_router: Arc<ToolRouter<Self>>,
}

fn success<T: Serialize + Display>(written: Written<T>) -> CallToolResult {
    let structured = match serde_json::to_value(&written.value) {
        Ok(value) => value,
        Err(error) => return failure(&ShopError::from(error)),
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(written.value.to_string())]);
    result.structured_content = Some(structured);
    if written.replayed {
        let mut meta = MetaObject::default();
        meta.insert(REPLAYED_META_KEY.to_owned(), Value::Bool(true));
        result.meta = Some(meta);
    }
    result
}

fn failure(error: &ShopError) -> CallToolResult {
    // The call's own log line (`call_tool`) carries the code; the message
    // may quote arguments, so it is only for debugging.
    if error.is_caller_error() {
        tracing::debug!(code = error.code(), %error, "tool call refused");
    } else if matches!(error, ShopError::Unavailable(_)) {
        tracing::warn!(%error, "tool call met an unavailable database");
    } else {
        tracing::error!(%error, "tool call failed inside the shop");
    }
    // A refusal, or a call worth sending again, says so itself.
    let message = if error.is_caller_error() || matches!(error, ShopError::Unavailable(_)) {
        error.to_string()
    } else {
        format!(
            "商城内部错误，本次操作未完成：{error}。请稍后重试，或用 submit_ticket 转人工客服。"
        )
    };
    // The text is the model's; the structured error carries the shopper's
    // sentence for the card and the model's next step beside it.
    let mut result = CallToolResult::error(vec![ContentBlock::text(message)]);
    let mut structured = json!({
        "error": { "code": error.code(), "message": error.for_shopper() }
    });
    if let Some(hint) = error.hint() {
        structured["error"]["hint"] = Value::from(hint);
    }
    result.structured_content = Some(structured);
    result
}

/// Reads a tool's arguments, turning serde's complaint into an argument error.
fn parse<P: DeserializeOwned>(args: JsonObject) -> Result<P> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        ShopError::invalid(
            "arguments",
            format!("{e}。请按工具的 inputSchema 传参（字段名为 camelCase，不要多余字段）"),
        )
    })
}

/// The caller's idempotency key from the request `_meta`, if any.
fn idempotency_key(meta: &RequestMetaObject) -> Result<Option<String>> {
    match meta.get(META_KEY) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(key)) => Ok(Some(key.clone())),
        Some(other) => Err(ShopError::invalid(
            META_KEY,
            format!("_meta 中的幂等键必须是字符串，收到 {other}"),
        )),
    }
}

impl ShopServer {
    /// Runs a domain call for the call's user on the blocking pool and maps
    /// its outcome.
    async fn run<T, F>(&self, ext: &Extensions, f: F) -> CallToolResult
    where
        T: Serialize + Display + Send + 'static,
        F: FnOnce(&Shop) -> Result<Written<T>> + Send + 'static,
    {
        match self.domain(ext, f).await {
            Ok(written) => success(written),
            Err(error) => failure(&error),
        }
    }

    /// Runs a domain call for the call's user on the blocking pool.
    async fn domain<T, F>(&self, ext: &Extensions, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Shop) -> Result<T> + Send + 'static,
    {
        let acting = self.callers.acting(ext)?;
        let shop = self.shop.clone();
        let call = move || f(&acting.shop(&shop)?);
        match tokio::task::spawn_blocking(call).await {
            Ok(outcome) => outcome,
            Err(join) => Err(ShopError::Corrupt(format!("工具调用异常中止：{join}"))),
        }
    }

    async fn create(
        &self,
        ext: Extensions,
        meta: RequestMetaObject,
        args: JsonObject,
    ) -> CallToolResult {
        self.write(ext, meta, args, |shop, p: CreateOrderParams, key| {
            shop.create_order(&p, key)
        })
        .await
    }

    async fn pay(
        &self,
        ext: Extensions,
        meta: RequestMetaObject,
        args: JsonObject,
    ) -> CallToolResult {
        self.write(ext, meta, args, |shop, p: PayOrderParams, key| {
            shop.pay_order(&p, key)
        })
        .await
    }

    /// `create_order`: a client that can be asked chooses the address
    /// among the saved ones when the call names none and several are saved.
    async fn create_order(&self, call: writes::Call) -> CallToolResponse {
        let (ext, meta, args) = (call.ext, call.meta, call.args);
        if !asking::may_ask(&call.context) {
            return self.create(ext, meta, args).await.into();
        }
        match call.answer {
            None => self.ask_for_address(ext, meta, args).await,
            Some((responses, state)) => {
                self.create_as_answered(ext, meta, args, &responses, state.as_deref())
                    .await
            }
        }
    }

    /// `pay_order`: on the online shop's payment page for a client that
    /// shows pages, after the shopper's yes for one that can be asked.
    async fn pay_order(&self, call: writes::Call) -> CallToolResponse {
        let (ext, meta, args, answer) = (call.ext, call.meta, call.args, call.answer);
        if let Some(origin) = self.pay_pages.clone()
            && asking::shows_pages(&call.context)
        {
            return self.pay_on_page(ext, meta, args, answer, &origin).await;
        }
        if !asking::may_ask(&call.context) {
            return self.pay(ext, meta, args).await.into();
        }
        self.pay_after_asking(ext, meta, args, answer).await
    }

    async fn read<P, T, F>(&self, ext: Extensions, args: JsonObject, f: F) -> CallToolResult
    where
        P: DeserializeOwned + Send + 'static,
        T: Serialize + Display + Send + 'static,
        F: FnOnce(&Shop, P) -> Result<T> + Send + 'static,
    {
        match parse::<P>(args) {
            Ok(params) => {
                self.run(&ext, move |shop| {
                    f(shop, params).map(|value| Written {
                        value,
                        replayed: false,
                    })
                })
                .await
            }
            Err(error) => failure(&error),
        }
    }

    async fn write<P, T, F>(
        &self,
        ext: Extensions,
        meta: RequestMetaObject,
        args: JsonObject,
        f: F,
    ) -> CallToolResult
    where
        P: DeserializeOwned + Send + 'static,
        T: Serialize + Display + Send + 'static,
        F: FnOnce(&Shop, P, Option<&str>) -> Result<Written<T>> + Send + 'static,
    {
        let parsed = idempotency_key(&meta).and_then(|key| Ok((key, parse::<P>(args)?)));
        match parsed {
            Ok((key, params)) => {
                self.run(&ext, move |shop| f(shop, params, key.as_deref()))
                    .await
            }
            Err(error) => failure(&error),
        }
    }
}

#[tool_router]
impl ShopServer {
    /// A server whose every call acts for the user `shop` acts for.
    pub fn new(shop: Shop) -> Self {
        let callers = Callers::Fixed(shop.caller().clone());
        Self::with_callers(shop, callers)
    }

    pub fn with_callers(shop: Shop, callers: Callers) -> Self {
        Self {
            shop,
            callers,
            pay_pages: None,
            tool_router: Arc::new(Self::tool_router() + writes::router()),
        }
    }

    /// The same server for the online shop, whose payment pages are served
    /// at `origin` (`https://shop.example.com`: the pages are
    /// `<origin>/pay/<id>`, [`crate::pay_page`]): a client that shows pages
    /// pays on one; any other keeps the form.
    pub fn with_payment_pages(mut self, origin: &str) -> Self {
        self.pay_pages = Some(Arc::from(origin.trim_end_matches('/')));
        self
    }

    pub fn shop(&self) -> &Shop {
        &self.shop
    }

    /// 搜索商品：关键词用购物者的说法即可（中英文，懂同义词，如“降噪耳机”“轻薄笔记本”“smart watch”），也可按类目、标签、价格区间（元）、商品编码或型号编码筛选，可排序，最多返回 50 个型号。每个型号一行，内含它的配置（SKU）和价格区间；配置的 skuCode 用于加购物车和下单，available=false 的配置（已下架或无货）不能购买。没有结果时会说明搜过哪些词并给出相近的类目。
    #[tool(
        name = "search_product",
        title = "搜索商品",
        input_schema = input_schema::<SearchProductParams>(),
        annotations(
            title = "搜索商品",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn search_product(&self, ext: Extensions, args: JsonObject) -> CallToolResult {
        self.read(ext, args, |shop, p: SearchProductParams| {
            shop.search_product(&p)
        })
        .await
    }

    /// 查看购物车：每行的加入时价格与现价、价格变化、库存、能否下单（已下架/无货/库存不足）和小计，以及合计与可下单合计。
    #[tool(
        name = "query_cart",
        title = "查看购物车",
        input_schema = input_schema::<QueryCartParams>(),
        annotations(
            title = "查看购物车",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn query_cart(&self, ext: Extensions, args: JsonObject) -> CallToolResult {
        self.read(ext, args, |shop, _: QueryCartParams| shop.query_cart())
            .await
    }

    /// 查看优惠券：把用户持有的每张券按给定金额（amount，和/或 categoryAmounts 各类目金额，单位元）试算，不给金额时按购物车中可下单的商品试算；逐张说明能否使用、能优惠多少，不能用时说明原因（已使用、已过期、未达门槛、类目不符）。
    #[tool(
        name = "query_coupons",
        title = "查看优惠券",
        input_schema = input_schema::<QueryCouponsParams>(),
        annotations(
            title = "查看优惠券",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn query_coupons(&self, ext: Extensions, args: JsonObject) -> CallToolResult {
        self.read(ext, args, |shop, p: QueryCouponsParams| {
            shop.query_coupons(&p)
        })
        .await
    }

    /// 查询订单：给 orderNo 返回该订单全部信息（状态、下单/支付/发货/签收/取消时间、商品行、金额与优惠、运单号、收货人、7 天无理由退货和 15 天换货的剩余天数、可用操作）；不给则按下单时间倒序列出最近几个订单，可按状态筛选。
    #[tool(
        name = "query_order",
        title = "查询订单",
        input_schema = input_schema::<QueryOrderParams>(),
        annotations(
            title = "查询订单",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn query_order(&self, ext: Extensions, args: JsonObject) -> CallToolResult {
        self.read(ext, args, |shop, p: QueryOrderParams| shop.query_order(&p))
            .await
    }

    /// 查询物流：按运单号（或订单号）返回物流轨迹，最新在前。只能查询用户自己订单上的运单号，其他运单号会被拒绝。
    #[tool(
        name = "query_logistics",
        title = "查询物流",
        input_schema = input_schema::<QueryLogisticsParams>(),
        annotations(
            title = "查询物流",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn query_logistics(&self, ext: Extensions, args: JsonObject) -> CallToolResult {
        self.read(ext, args, |shop, p: QueryLogisticsParams| {
            shop.query_logistics(&p)
        })
        .await
    }

    /// 查询售后进度：按售后单号或订单号查询，都不填则列出全部售后单。
    #[tool(
        name = "query_after_sale",
        title = "查询售后进度",
        input_schema = input_schema::<QueryAfterSaleParams>(),
        annotations(
            title = "查询售后进度",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn query_after_sale(&self, ext: Extensions, args: JsonObject) -> CallToolResult {
        self.read(ext, args, |shop, p: QueryAfterSaleParams| {
            shop.query_after_sale(&p)
        })
        .await
    }

    /// 转人工客服：提交一张工单，写清问题和用户诉求，可关联订单号。用于工具无法处理的情况（如超过售后期的质量问题、投诉）。
    #[tool(
        name = "submit_ticket",
        title = "转人工客服",
        input_schema = input_schema::<SubmitTicketParams>(),
        // Open world: the conversation goes to a person outside the shop's
        // system. Not destructive: it only adds a ticket, and neither changes
        // nor refunds anything itself.
        annotations(
            title = "转人工客服",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn submit_ticket(
        &self,
        ext: Extensions,
        meta: RequestMetaObject,
        args: JsonObject,
    ) -> CallToolResult {
        self.write(ext, meta, args, |shop, p: SubmitTicketParams, key| {
            shop.submit_ticket(&p, key)
        })
        .await
    }
}

/// What became of a call, for its log line: `ok`, the refusal's code, or
/// `protocol_error` when it got no tool result at all.
fn outcome(response: &std::result::Result<CallToolResponse, ErrorData>) -> String {
    let result = match response {
        Ok(CallToolResponse::Complete(result)) => result,
        Ok(_) => return "ok".to_owned(),
        Err(_) => return "protocol_error".to_owned(),
    };
    if result.is_error != Some(true) {
        return "ok".to_owned();
    }
    result
        .structured_content
        .as_ref()
        .and_then(|content| content["error"]["code"].as_str())
        .unwrap_or("error")
        .to_owned()
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ShopServer {
    /// Every call through the router, with one log line: who (the subject),
    /// which tool, the outcome and how long it took. Never the arguments or
    /// any token: those may hold what the log must not keep.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let started = Instant::now();
        let tool = request.name.clone();
        let user = self.callers.sub_for_log(&context.extensions);
        let call = ToolCallContext::new(self, request, context);
        let response = self.tool_router.call(call).await;
        tracing::info!(
            user = user.as_deref().unwrap_or("-"),
            tool = %tool,
            outcome = %outcome(&response),
            ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "tool call"
        );
        response
    }

    fn get_info(&self) -> ServerConfig {
        // Declares that write tools honour `_meta["ragent/idempotency_key"]`:
        // the agent core re-sends an interrupted call only to such servers.
        let mut experimental = ExperimentalCapabilities::new();
        experimental.insert(META_KEY.to_owned(), JsonObject::new());
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_experimental_with(experimental)
                .enable_tools()
                .build(),
        )
        .with_server_info(
            Implementation::new("bitselect", env!("CARGO_PKG_VERSION")).with_title("比特严选商城"),
        )
        .with_instructions(INSTRUCTIONS)
    }
}
