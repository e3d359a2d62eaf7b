//! The checkout capability over the standard's MCP binding, served at
//! [`super::names::UCP_MCP_PATH`] beside the shop's own tools at `/mcp`: the five tools
//! the binding names (`create_checkout`, `get_checkout`,
//! `update_checkout`, `complete_checkout`, `cancel_checkout`), each taking
//! `meta` (`ucp-agent` with the platform's profile, required;
//! `idempotency-key`, required to complete or cancel), `id` for an existing
//! checkout and `checkout` (the request's checkout object), and answering
//! the signed checkout as structured content. A failure is a tool error
//! whose structured content is the standard's error response.
//!
//! The tools act for the same user as the shop's own, and declare what
//! they do: reading is read-only, completing moves money
//! (`ragent/moves_money`), so a client's card asks the shopper for it.

use std::sync::Arc;

use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Extensions,
    Implementation, JsonObject, MetaObject, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use super::catalog;
use super::failure;
use super::names::{CART, CATALOG_LOOKUP, CATALOG_SEARCH, CHECKOUT, ORDER};
use super::negotiation::{Active, Agent, Negotiator};
use crate::callers::Callers;
use crate::error::{Result, ShopError};
use crate::server::{CHANGES_CART_META_KEY, MOVES_MONEY_META_KEY, UNDOABLE_META_KEY};
use crate::shop::{Shop, Written};

/// The checkout tools as an MCP server.
#[derive(Debug, Clone)]
pub struct UcpServer {
    shop: Shop,
    callers: Callers,
    /// The shop's origin, which a mandate is made out to; `None`: the
    /// request's `Host`.
    origin: Option<Arc<str>>,
    negotiator: Arc<Negotiator>,
    /// Shared by clones: the stateless service clones the server for every
    /// request.
    tools: Arc<ToolRouter<Self>>,
}

/// One tool of the binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operation {
    Create,
    Get,
    Update,
    Complete,
    Cancel,
    GetOrder,
    SearchCatalog,
    LookupCatalog,
    GetProduct,
    CreateCart,
    GetCart,
    UpdateCart,
    CancelCart,
}

const OPERATIONS: [Operation; 13] = [
    Operation::Create,
    Operation::Get,
    Operation::Update,
    Operation::Complete,
    Operation::Cancel,
    Operation::GetOrder,
    Operation::SearchCatalog,
    Operation::LookupCatalog,
    Operation::GetProduct,
    Operation::CreateCart,
    Operation::GetCart,
    Operation::UpdateCart,
    Operation::CancelCart,
];

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Self::Create => "create_checkout",
            Self::Get => "get_checkout",
            Self::Update => "update_checkout",
            Self::Complete => "complete_checkout",
            Self::Cancel => "cancel_checkout",
            Self::GetOrder => "get_order",
            Self::SearchCatalog => "search_catalog",
            Self::LookupCatalog => "lookup_catalog",
            Self::GetProduct => "get_product",
            Self::CreateCart => "create_cart",
            Self::GetCart => "get_cart",
            Self::UpdateCart => "update_cart",
            Self::CancelCart => "cancel_cart",
        }
    }

    /// The capability it is an operation of.
    fn capability(self) -> &'static str {
        match self {
            Self::GetOrder => ORDER,
            Self::SearchCatalog => CATALOG_SEARCH,
            Self::LookupCatalog | Self::GetProduct => CATALOG_LOOKUP,
            Self::CreateCart | Self::GetCart | Self::UpdateCart | Self::CancelCart => CART,
            _ => CHECKOUT,
        }
    }

    fn title(self) -> &'static str {
        match self {
            Self::Create => "创建结账",
            Self::Get => "查看结账",
            Self::Update => "更新结账",
            Self::Complete => "完成结账并付款",
            Self::Cancel => "取消结账",
            Self::GetOrder => "查看订单",
            Self::SearchCatalog => "搜索商品目录",
            Self::LookupCatalog => "按编号查商品",
            Self::GetProduct => "查看商品详情",
            Self::CreateCart => "设定购物车",
            Self::GetCart => "查看购物车",
            Self::UpdateCart => "更新购物车",
            Self::CancelCart => "清空购物车",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Self::Create => {
                "创建结账会话：line_items（item.id 为商品编码，quantity 为件数），可带 buyer、fulfillment（收货地址）、discounts.codes（优惠码）。返回商城签名的结账，含价格、优惠、运费与合计。"
            }
            Self::Get => "查看结账会话的当前状态与金额。",
            Self::Update => "用新的结账内容整体替换（line_items、buyer、fulfillment、discounts）。",
            Self::Complete => {
                "完成结账并付款：需要用户在确认卡片上批准后由应用签署的授权（checkout.ap2.checkout_mandate）；没有授权、授权不符或条款已变都会被拒绝，不会扣款。"
            }
            Self::Cancel => "取消结账会话；已完成或已取消的不能再取消。",
            Self::GetOrder => "查看结账下的订单：商品、件数与送达情况、合计，以及它来自哪次结账。",
            Self::SearchCatalog => {
                "搜索商品：catalog.query 用购物者的说法（中英文），可按 filters.categories（一级类目）和 filters.price（分）筛选，pagination.limit 为 1 到 50。每个型号一个商品，配置为其变体，价格以分计。"
            }
            Self::LookupCatalog => {
                "按编号查商品：catalog.ids 为型号编码或商品编码（SKU），返回它们所指的商品与配置。"
            }
            Self::GetProduct => {
                "查看一个商品的全部配置：catalog.id 为型号编码或其任一配置的商品编码。"
            }
            Self::CreateCart => {
                "把用户的购物车设为 cart.line_items 所列的商品与件数（每位用户一个购物车，与商城自己的购物车是同一个）。"
            }
            Self::GetCart => "查看用户的购物车：每行的现价、件数与小计，以及合计。",
            Self::UpdateCart => "把购物车整体替换为 cart.line_items 所列的商品与件数。",
            Self::CancelCart => "清空用户的购物车。",
        }
    }

    fn needs_id(self) -> bool {
        !matches!(
            self,
            Self::Create
                | Self::SearchCatalog
                | Self::LookupCatalog
                | Self::GetProduct
                | Self::CreateCart
        )
    }

    fn needs_cart(self) -> bool {
        matches!(self, Self::CreateCart | Self::UpdateCart)
    }

    fn is_catalog(self) -> bool {
        matches!(
            self,
            Self::SearchCatalog | Self::LookupCatalog | Self::GetProduct
        )
    }

    fn needs_checkout(self) -> bool {
        matches!(self, Self::Create | Self::Update)
    }

    /// The binding requires an idempotency key to complete or cancel.
    fn key_required(self) -> bool {
        matches!(self, Self::Complete | Self::Cancel)
    }

    fn input_schema(self) -> Arc<JsonObject> {
        let mut required = vec!["meta"];
        let mut properties = json!({
            "meta": {
                "type": "object",
                "title": "请求元数据",
                "properties": {
                    "ucp-agent": {
                        "type": "object",
                        "properties": { "profile": { "type": "string", "format": "uri" } },
                        "required": ["profile"],
                    },
                    "idempotency-key": { "type": "string", "minLength": 1, "maxLength": 128 },
                },
                "required": if self.key_required() {
                    json!(["ucp-agent", "idempotency-key"])
                } else {
                    json!(["ucp-agent"])
                },
            },
        });
        if self.needs_id() {
            properties["id"] = json!({ "type": "string", "title": "结账编号" });
            required.push("id");
        }
        if self.is_catalog() {
            properties["catalog"] = json!({ "type": "object", "title": "查询" });
            required.push("catalog");
        }
        if self.needs_cart() {
            properties["cart"] = json!({ "type": "object", "title": "购物车内容" });
            required.push("cart");
        }
        if self.needs_checkout() || self == Self::Complete {
            properties["checkout"] = json!({ "type": "object", "title": "结账内容" });
        }
        if self.needs_checkout() {
            required.push("checkout");
        }
        let schema = json!({ "type": "object", "properties": properties, "required": required });
        match schema {
            Value::Object(object) => Arc::new(object),
            _ => Arc::new(JsonObject::new()),
        }
    }

    fn tool(self) -> Tool {
        let read_only =
            matches!(self, Self::Get | Self::GetOrder | Self::GetCart) || self.is_catalog();
        let mut tool = Tool::new(self.name(), self.description(), self.input_schema())
            .with_title(self.title())
            .with_annotations(
                ToolAnnotations::with_title(self.title())
                    .read_only(read_only)
                    .destructive(matches!(
                        self,
                        Self::Complete | Self::Cancel | Self::CancelCart
                    ))
                    .idempotent(read_only)
                    .open_world(false),
            );
        let flags: &[&str] = match self {
            Self::Complete => &[MOVES_MONEY_META_KEY],
            // The shopper's own cart: another call can put a line back.
            Self::CreateCart | Self::UpdateCart | Self::CancelCart => {
                &[CHANGES_CART_META_KEY, UNDOABLE_META_KEY]
            }
            _ => &[],
        };
        if !flags.is_empty() {
            let mut meta = MetaObject::default();
            for flag in flags {
                meta.insert((*flag).to_owned(), Value::Bool(true));
            }
            tool = tool.with_meta(meta);
        }
        tool
    }
}

/// A tool call's arguments, read.
struct Arguments {
    agent: Agent,
    key: Option<String>,
    id: String,
    checkout: Value,
    catalog: Value,
    cart: Value,
}

fn read_arguments(operation: Operation, args: &JsonObject) -> Result<Arguments> {
    let meta = args.get("meta").unwrap_or(&Value::Null);
    let Some(profile) = meta["ucp-agent"]["profile"]
        .as_str()
        .filter(|profile| !profile.is_empty())
    else {
        return Err(ShopError::invalid(
            "meta.ucp-agent.profile",
            "每个请求都须在 meta 里给出平台的 profile",
        ));
    };
    let agent = Agent {
        profile: profile.to_owned(),
        version: meta["ucp-agent"]["version"].as_str().map(str::to_owned),
    };
    let key = meta["idempotency-key"].as_str().map(str::to_owned);
    if operation.key_required() && key.is_none() {
        return Err(ShopError::invalid(
            "meta.idempotency-key",
            "完成与取消结账须带幂等键",
        ));
    }
    let id = args
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if operation.needs_id() && id.is_empty() {
        return Err(ShopError::invalid("id", "须给出结账编号"));
    }
    let checkout = args.get("checkout").cloned().unwrap_or(Value::Null);
    if operation.needs_checkout() && !checkout.is_object() {
        return Err(ShopError::invalid("checkout", "须给出结账内容（对象）"));
    }
    if operation.needs_id() && checkout.get("id").is_some() {
        return Err(ShopError::invalid(
            "checkout.id",
            "结账编号放在顶层 id，checkout 里不能再有 id",
        ));
    }
    let catalog = args.get("catalog").cloned().unwrap_or(Value::Null);
    if operation.is_catalog() && !catalog.is_object() {
        return Err(ShopError::invalid("catalog", "须给出查询（对象）"));
    }
    let cart = args.get("cart").cloned().unwrap_or(Value::Null);
    if operation.needs_cart() && !cart.is_object() {
        return Err(ShopError::invalid("cart", "须给出购物车内容（对象）"));
    }
    Ok(Arguments {
        agent,
        key,
        id,
        checkout,
        catalog,
        cart,
    })
}

impl UcpServer {
    pub fn new(shop: Shop, callers: Callers, origin: Option<String>) -> Self {
        let mut tools = ToolRouter::new();
        for operation in OPERATIONS {
            tools.add_route(ToolRoute::new_dyn(
                operation.tool(),
                move |mut context: ToolCallContext<'_, Self>| {
                    let ext = context.request_context.extensions.clone();
                    let args = context.arguments.take().unwrap_or_default();
                    let server = context.service;
                    Box::pin(async move {
                        Ok::<_, ErrorData>(server.call(operation, &ext, &args).await.into())
                    })
                },
            ));
        }
        Self {
            shop,
            callers,
            origin: origin.map(Arc::from),
            negotiator: Arc::new(Negotiator::default()),
            tools: Arc::new(tools),
        }
    }

    async fn call(
        &self,
        operation: Operation,
        ext: &Extensions,
        args: &JsonObject,
    ) -> CallToolResult {
        let outcome = match read_arguments(operation, args) {
            Ok(arguments) => match self
                .negotiator
                .negotiate(&arguments.agent, operation.capability())
                .await
            {
                Ok(active) => self
                    .run(operation, ext, arguments, active)
                    .await
                    .map_err(|error| failure::of(&error)),
                Err(refused) => {
                    let (code, status) = refused.code_and_status();
                    Err(failure::error(status, code, refused.to_string()))
                }
            },
            Err(error) => Err(failure::of(&error)),
        };
        match outcome {
            Ok(written) => {
                let text = written.value.to_string();
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                result.structured_content = Some(written.value);
                result
            }
            Err(failure) => {
                let text = failure.body["messages"][0]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
                result.structured_content = Some(failure.body);
                result
            }
        }
    }

    async fn run(
        &self,
        operation: Operation,
        ext: &Extensions,
        arguments: Arguments,
        active: Active,
    ) -> Result<Written<Value>> {
        let acting = self.callers.acting(ext)?;
        let shop = self.shop.clone();
        let audience = self
            .origin
            .as_deref()
            .map(str::to_owned)
            .or_else(|| host_origin(ext));
        let call = move || {
            let shop = acting.shop(&shop)?.negotiated(active);
            let Arguments {
                key,
                id,
                checkout,
                catalog,
                cart,
                ..
            } = arguments;
            let read = |value| Written {
                value,
                replayed: false,
            };
            let key = key.as_deref();
            match operation {
                Operation::Create => shop.create_checkout(&checkout, key),
                Operation::Get => shop.get_checkout(&id).map(|value| Written {
                    value,
                    replayed: false,
                }),
                Operation::Update => shop.update_checkout(&id, &checkout, key),
                Operation::Cancel => shop.cancel_checkout(&id, key),
                Operation::CreateCart => shop.replace_ucp_cart(None, &cart, key),
                Operation::GetCart => shop.get_ucp_cart(&id).map(read),
                Operation::UpdateCart => shop.replace_ucp_cart(Some(&id), &cart, key),
                Operation::CancelCart => shop.cancel_ucp_cart(&id, key),
                Operation::SearchCatalog => catalog::search(&shop, &catalog).map(read),
                Operation::LookupCatalog => catalog::lookup(&shop, &catalog).map(read),
                Operation::GetProduct => catalog::get_product(&shop, &catalog).map(read),
                Operation::GetOrder => {
                    let origin = audience.ok_or_else(|| {
                        ShopError::invalid("Host", "请求没有 Host，无法给出订单的链接")
                    })?;
                    shop.get_checkout_order(&id, &origin).map(|value| Written {
                        value,
                        replayed: false,
                    })
                }
                Operation::Complete => {
                    let audience = audience.ok_or_else(|| {
                        ShopError::invalid("Host", "请求没有 Host，无法核对授权的对象")
                    })?;
                    let mandate = checkout["ap2"]["checkout_mandate"].as_str();
                    shop.complete_checkout(&id, mandate, &audience, key)
                }
            }
        };
        match tokio::task::spawn_blocking(call).await {
            Ok(outcome) => outcome,
            Err(join) => Err(ShopError::Corrupt(format!("工具调用异常中止：{join}"))),
        }
    }
}

/// `http://<Host>` of the HTTP request a call came in.
fn host_origin(ext: &Extensions) -> Option<String> {
    let parts = ext.get::<axum::http::request::Parts>()?;
    let host = parts.headers.get(axum::http::header::HOST)?.to_str().ok()?;
    Some(format!("http://{host}"))
}

impl ServerHandler for UcpServer {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let tool = request.name.clone();
        let user = self.callers.sub_for_log(&context.extensions);
        let call = ToolCallContext::new(self, request, context);
        let response = self.tools.call(call).await;
        tracing::info!(user = user.as_deref().unwrap_or("-"), tool = %tool, "commerce tool call");
        response
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<rmcp::model::ListToolsResult, ErrorData> {
        Ok(rmcp::model::ListToolsResult::with_all_items(
            self.tools.list_all(),
        ))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("bitselect-ucp", env!("CARGO_PKG_VERSION"))
                .with_title("比特严选（通用商务协议）"),
        )
    }
}

/// The binding as a stateless streamable HTTP service, to mount at
/// [`super::names::UCP_MCP_PATH`].
pub fn service(
    shop: Shop,
    callers: Callers,
    origin: Option<String>,
    config: StreamableHttpServerConfig,
) -> StreamableHttpService<UcpServer, LocalSessionManager> {
    let server = UcpServer::new(shop, callers, origin);
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
