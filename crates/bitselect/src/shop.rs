//! [`Shop`]: the domain's front door. Each call borrows a connection from
//! a small idle list (a new one when none is idle), runs in one
//! transaction and reads the injected clock once.
//!
//! A write runs its plan and commits it in one immediate transaction; its
//! preview runs the same plan in a read transaction and commits nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::{Notify, watch};

use rusqlite::Connection;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::addresses::{self, AddressOffer, SavedAddress};
use crate::after_sale::{self, AfterSaleList, AfterSaleView};
use crate::cart::{self, CartUpdate, CartView};
use crate::catalog::{self, SkuHit};
use crate::clock::{Clock, Millis, SystemClock};
use crate::coupons::{self, CouponReport};
use crate::error::{Result, ShopError};
use crate::idempotency;
use crate::known_users::KnownUsers;
use crate::load_users::{self, SeededUsers};
use crate::logistics::{self, Trace};
use crate::money::Fen;
use crate::order_events::{self, OwedEvent, Retry};
use crate::orders::{self, AddressChange, Cancellation, OrderList, OrderView, Payment};
use crate::params::{
    ApplyAfterSaleParams, CancelOrderParams, ChangeAddressParams, CreateOrderParams,
    PayOrderParams, QueryAfterSaleParams, QueryCouponsParams, QueryLogisticsParams,
    QueryOrderParams, SearchProductParams, SubmitTicketParams, UpdateCartItemParams,
};
use crate::payment_pages::{self, PageState, PaymentPage};
use crate::preview::{self, Preview};
use crate::product_search::{self, SearchResult};
use crate::search::SearchEngine;
use crate::seed;
#[cfg(feature = "service")]
use crate::store::postgres::PgStore;
use crate::store::sqlite_file::Db;
use crate::store::{Conn, Store, TxKind};
use crate::tickets::{self, Ticket};
use crate::ucp::cart as ucp_cart;
use crate::ucp::catalog::Catalogue;
use crate::ucp::checkout::{self as ucp_checkout, CheckoutRequest};
use crate::ucp::checkout_view;
use crate::ucp::complete;
use crate::ucp::devices::{self, BindingToken, Device};
use crate::ucp::negotiation::Active;
use crate::ucp::order_view;
use crate::ucp::signing_keys;
use crate::ucp::webhooks::{self, Delivery};
use crate::users::{self, Caller, UserConn};
use ap2::jws::{self, Jwk};

/// The database file's name inside the data directory.
pub const DB_FILE: &str = "shop.db";

/// The result of a write, and whether it is the stored first result of an
/// earlier call with the same idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written<T> {
    pub value: T,
    pub replayed: bool,
}

/// A caller's idempotency key, checked, with the hash of the call it keys.
fn keyed<'k>(
    tool: &str,
    params: &impl Serialize,
    key: Option<&'k str>,
) -> Result<Option<(&'k str, String)>> {
    match key {
        Some(key) => {
            idempotency::validate_key(key)?;
            Ok(Some((key, idempotency::args_hash(tool, params)?)))
        }
        None => Ok(None),
    }
}

/// Row counts, for diagnostics and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShopStats {
    pub models: i64,
    pub skus: i64,
    pub coupons: i64,
    pub held_coupons: i64,
    pub cart_lines: i64,
    pub orders: i64,
    pub order_lines: i64,
    pub parcels: i64,
    pub parcel_events: i64,
    pub after_sales: i64,
    pub tickets: i64,
}

/// The Bit Select shop over its SQLite database, acting for one caller.
/// Cheap to clone; clones share the file and the clock. [`Shop::open`] acts
/// for the demo user (the desktop app's one shopper); [`Shop::acting_for`]
/// gives a handle on the same file acting for another user.
#[derive(Debug, Clone)]
pub struct Shop {
    store: Store,
    /// The catalogue's text index, shared by this shop's clones.
    search: Arc<SearchEngine>,
    clock: Arc<dyn Clock>,
    caller: Caller,
    /// The commerce capabilities the platform calling negotiated; every
    /// one the shop has unless told otherwise.
    capabilities: Arc<Active>,
    /// Told when a call of this shop's clones owed a platform an order
    /// event, so that the sender need not wait for its next look.
    order_events: Arc<Notify>,
    /// How many tries of order events this shop's clones have recorded
    /// the outcome of: what a watcher awaits to know a try is settled.
    order_event_tries: Arc<watch::Sender<u64>>,
    /// The users this shop's clones resolved from signed-in subjects.
    known_users: Arc<KnownUsers>,
}

impl Shop {
    /// Opens the shop in `data_dir` (created if missing), migrating and, on
    /// first start, seeding `shop.db`.
    pub fn open(data_dir: impl AsRef<Path>) -> Result<Self> {
        Self::open_with_clock(data_dir, Arc::new(SystemClock))
    }

    /// Like [`Shop::open`], with the clock the shop reads "now" from.
    pub fn open_with_clock(data_dir: impl AsRef<Path>, clock: Arc<dyn Clock>) -> Result<Self> {
        let dir = data_dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|source| ShopError::DataDir {
            path: dir.to_owned(),
            source,
        })?;
        let db = Arc::new(Db::open(&dir.join(DB_FILE))?);
        let shop = Self::on_store(Store::Sqlite(db.clone()), clock)?;
        db.keep_daily_copy();
        Ok(shop)
    }

    /// The shop on the PostgreSQL database at `url`: its schema brought up
    /// to date and, on first start, seeded. Any number of shops (instances)
    /// may share one database.
    #[cfg(feature = "service")]
    pub fn open_postgres(url: &str) -> Result<Self> {
        Self::open_postgres_with_clock(url, Arc::new(SystemClock))
    }

    /// Like [`Shop::open_postgres`], with the clock the shop reads "now" from.
    #[cfg(feature = "service")]
    pub fn open_postgres_with_clock(url: &str, clock: Arc<dyn Clock>) -> Result<Self> {
        let store = Store::Postgres(Arc::new(PgStore::connect(url)?));
        Self::on_store(store, clock)
    }

    /// The shop on a store whose schema is current: seeded on first start,
    /// its catalogue indexed for search.
    fn on_store(store: Store, clock: Arc<dyn Clock>) -> Result<Self> {
        let seeded = store.run(TxKind::Write, |tx| {
            let seeded = seed::seed_once(tx, clock.now_ms())?;
            signing_keys::ensure(tx, clock.now_ms())?;
            Ok(seeded)
        })?;
        if seeded {
            store.loaded();
        }
        let search = Arc::new(SearchEngine::new());
        store.run(TxKind::Read, |tx| search.snapshot(tx).map(drop))?;
        Ok(Self {
            store,
            search,
            clock,
            caller: Caller::demo(),
            capabilities: Arc::new(Active::all()),
            order_events: Arc::new(Notify::new()),
            order_event_tries: Arc::new(watch::Sender::new(0)),
            known_users: Arc::new(KnownUsers::default()),
        })
    }

    /// The same shop acting for `caller`: every call sees and changes only
    /// that user's cart, coupons, orders, parcels, after-sales and tickets.
    pub fn acting_for(&self, caller: Caller) -> Self {
        Self {
            store: self.store.clone(),
            search: self.search.clone(),
            clock: self.clock.clone(),
            caller,
            capabilities: self.capabilities.clone(),
            order_events: self.order_events.clone(),
            order_event_tries: self.order_event_tries.clone(),
            known_users: self.known_users.clone(),
        }
    }

    /// The same shop answering a platform that negotiated `capabilities`:
    /// its checkouts are shaped by and name those.
    pub fn negotiated(&self, capabilities: Active) -> Self {
        Self {
            capabilities: Arc::new(capabilities),
            ..self.clone()
        }
    }

    /// Whom this handle acts for.
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// The user with this subject, if the shop has one.
    pub fn find_user(&self, sub: &str) -> Result<Option<Caller>> {
        self.read_shared(|conn, _| users::find(conn, sub))
    }

    /// The user with this subject, created on first sight (as a verified
    /// token's `sub` is): the way a per-request caller is resolved. Once
    /// found, remembered (see [`KnownUsers`]).
    pub fn user_for_subject(&self, sub: &str, display_name: &str) -> Result<Caller> {
        if let Some(caller) = self.known_users.get(sub) {
            return Ok(caller);
        }
        let caller = match self.find_user(sub)? {
            Some(caller) => caller,
            None => self.store.run(TxKind::Write, |tx| {
                users::find_or_create(tx, sub, display_name)
            })?,
        };
        self.known_users.remember(&caller);
        Ok(caller)
    }

    /// Creates `count` load-test users, each with cart lines and a coupon of
    /// their own (see [`load_users`]); users that exist are left as they are.
    pub fn seed_users(&self, count: u32) -> Result<SeededUsers> {
        let seeded = self
            .store
            .run(TxKind::Write, |tx| load_users::seed(tx, count, self.now()))?;
        self.store.loaded();
        Ok(seeded)
    }

    /// Where the shop keeps its data unless told otherwise:
    /// `<user data dir>/bitselect`.
    pub fn default_data_dir() -> Option<PathBuf> {
        dirs::data_dir().map(|d| d.join("bitselect"))
    }

    /// The SQLite file the shop keeps its data in.
    pub fn db_path(&self) -> Option<&Path> {
        match &self.store {
            Store::Sqlite(db) => Some(db.path()),
            #[cfg(feature = "service")]
            Store::Postgres(_) => None,
        }
    }

    /// The shop shed a call a moment ago because its database is too slow
    /// for the calls coming in (never on SQLite, whose calls do not queue
    /// for connections).
    pub fn overloaded(&self) -> bool {
        match &self.store {
            Store::Sqlite(_) => false,
            #[cfg(feature = "service")]
            Store::Postgres(pg) => pg.overloaded(),
        }
    }

    /// Where the shop keeps its data, for logs: the SQLite file, or the
    /// PostgreSQL server and database (never a password).
    pub fn store_description(&self) -> String {
        match &self.store {
            Store::Sqlite(db) => db.path().display().to_string(),
            #[cfg(feature = "service")]
            Store::Postgres(pg) => pg.target().to_owned(),
        }
    }

    pub fn now(&self) -> Millis {
        self.clock.now_ms()
    }

    /// A connection of its own to the shop's database, for inspection.
    pub fn connection(&self) -> Result<Connection> {
        match &self.store {
            Store::Sqlite(db) => db.open_connection(),
            #[cfg(feature = "service")]
            Store::Postgres(_) => Err(ShopError::Store(
                "这个商城在 PostgreSQL 上，没有 SQLite 连接".to_owned(),
            )),
        }
    }

    /// Runs reads for the caller in one deferred transaction: a consistent
    /// snapshot.
    fn read<T>(&self, f: impl Fn(&UserConn<'_>, Millis) -> Result<T>) -> Result<T> {
        self.read_shared(|conn, now| f(&UserConn::new(conn, self.caller.id()), now))
    }

    /// Runs reads of what every user shares (the catalogue, the users).
    fn read_shared<T>(&self, f: impl Fn(&dyn Conn, Millis) -> Result<T>) -> Result<T> {
        self.store.run(TxKind::Read, |tx| f(tx, self.now()))
    }

    /// Runs a write in one immediate transaction, honouring `key`: a repeat
    /// returns the stored first result; a failure stores nothing.
    fn write<P, T>(
        &self,
        tool: &'static str,
        params: &P,
        key: Option<&str>,
        f: impl Fn(&UserConn<'_>, Millis) -> Result<T>,
    ) -> Result<Written<T>>
    where
        P: Serialize,
        T: Serialize + DeserializeOwned,
    {
        let keyed = keyed(tool, params, key)?;
        self.store.run(TxKind::Write, |tx| {
            let acting = UserConn::new(tx, self.caller.id());
            // Read the clock inside the write, so times follow commit order.
            let now = self.now();
            if let Some((key, hash)) = &keyed
                && let Some(first) = idempotency::lookup(&acting, key, tool, hash)?
            {
                tracing::info!(
                    tool,
                    key,
                    "replaying the first result of an idempotent call"
                );
                return Ok(Written {
                    value: serde_json::from_str(&first)?,
                    replayed: true,
                });
            }
            let value = f(&acting, now)?;
            if let Some((key, hash)) = &keyed {
                let result = serde_json::to_string(&value)?;
                idempotency::store(&acting, key, tool, hash, &result, now)?;
            }
            Ok(Written {
                value,
                replayed: false,
            })
        })
    }

    /// The merchant's public signing keys, newest first: what its UCP
    /// profile publishes and a signed checkout verifies against.
    pub fn signing_keys(&self) -> Result<Vec<Jwk>> {
        self.read_shared(signing_keys::published)
    }

    /// `checkout` signed by the merchant: `ap2.merchant_authorization`, a
    /// detached JWS over the checkout without its `ap2`, set in it.
    pub fn sign_checkout(&self, checkout: serde_json::Value) -> Result<serde_json::Value> {
        let key = self.read_shared(|conn, _| signing_keys::signer(conn))?;
        Ok(jws::sign_checkout(&key, checkout)?)
    }

    /// Starts a checkout session with the lines, buyer, destinations and
    /// discount codes of `body` (the platform's create request); answers
    /// the signed checkout. With `key`, a repeat of the same body answers
    /// the first checkout again, byte for byte; another body is refused.
    pub fn create_checkout(
        &self,
        body: &serde_json::Value,
        key: Option<&str>,
    ) -> Result<Written<serde_json::Value>> {
        self.write("ucp_create_checkout", body, key, |conn, now| {
            let request = CheckoutRequest::from_body(body)?;
            let session = ucp_checkout::create(conn, now, &request)?;
            checkout_view::signed(conn, now, &session, &self.capabilities)
        })
    }

    /// The user's checkout session `id` as it stands now, signed.
    pub fn get_checkout(&self, id: &str) -> Result<serde_json::Value> {
        self.read(|conn, now| {
            checkout_view::signed(conn, now, &ucp_checkout::get(conn, id)?, &self.capabilities)
        })
    }

    /// Replaces an open session's inputs with `body`'s (the platform's
    /// update request); `key` as for [`Shop::create_checkout`].
    pub fn update_checkout(
        &self,
        id: &str,
        body: &serde_json::Value,
        key: Option<&str>,
    ) -> Result<Written<serde_json::Value>> {
        let keyed = serde_json::json!({ "id": id, "body": body });
        self.write("ucp_update_checkout", &keyed, key, |conn, now| {
            let request = CheckoutRequest::from_body(body)?;
            let session = ucp_checkout::update(conn, now, id, &request)?;
            checkout_view::signed(conn, now, &session, &self.capabilities)
        })
    }

    /// Cancels an open session; `key` as for [`Shop::create_checkout`].
    pub fn cancel_checkout(
        &self,
        id: &str,
        key: Option<&str>,
    ) -> Result<Written<serde_json::Value>> {
        self.write("ucp_cancel_checkout", &id, key, |conn, now| {
            let session = ucp_checkout::cancel(conn, now, id)?;
            checkout_view::signed(conn, now, &session, &self.capabilities)
        })
    }

    /// Completes the caller's checkout `id` with the shopper's mandate
    /// (`presentation`, the request's `ap2.checkout_mandate`), made out to
    /// `audience` (the shop's origin): places and pays the order. With
    /// `key`, a repeat answers the first receipt again.
    pub fn complete_checkout(
        &self,
        id: &str,
        presentation: Option<&str>,
        audience: &str,
        key: Option<&str>,
    ) -> Result<Written<serde_json::Value>> {
        let keyed = serde_json::json!({ "id": id, "mandate": presentation });
        let written = self.write("ucp_complete_checkout", &keyed, key, |conn, now| {
            complete::complete(conn, now, id, presentation, audience, &self.capabilities)
        })?;
        if self.capabilities.order_webhook().is_some() {
            self.order_events.notify_one();
        }
        Ok(written)
    }

    /// Wakes the order events' sender when a call owed a platform one.
    pub fn order_events_owed(&self) -> Arc<Notify> {
        self.order_events.clone()
    }

    /// Leases the next order event due, with its body and the key to sign
    /// it with, if any is due.
    pub fn claim_order_event(&self) -> Result<Option<Delivery>> {
        self.store.run(TxKind::Write, |tx| {
            let now = self.now();
            let Some(event) = order_events::claim(tx, now)? else {
                return Ok(None);
            };
            let body = webhooks::body(&UserConn::new(tx, event.user), now, &event)?;
            let key = signing_keys::signer(tx)?;
            Ok(Some(Delivery { event, body, key }))
        })
    }

    /// Records what became of a try of `event`: delivered (`Ok`), or not
    /// (`Err` with why), when it is tried again, or that it is given up.
    pub fn settle_order_event(
        &self,
        event: &OwedEvent,
        outcome: std::result::Result<(), String>,
    ) -> Result<Option<Retry>> {
        let settled = self.store.run(TxKind::Write, |tx| {
            let now = self.now();
            match &outcome {
                Ok(()) => order_events::delivered(tx, now, event.id).map(|()| None),
                Err(why) => order_events::failed(tx, now, event.id, event.attempt, why).map(Some),
            }
        })?;
        self.order_event_tries.send_modify(|tries| *tries += 1);
        Ok(settled)
    }

    /// The number of order event tries whose outcome is recorded, changing
    /// with each one.
    pub fn order_event_tries(&self) -> watch::Receiver<u64> {
        self.order_event_tries.subscribe()
    }

    /// Runs `change` of one of the caller's orders and owes its platform
    /// an event when it was placed by a subscribed checkout.
    fn write_order_change<P, T>(
        &self,
        tool: &'static str,
        params: &P,
        key: Option<&str>,
        change: impl Fn(&UserConn<'_>, Millis) -> Result<(T, String)>,
    ) -> Result<Written<T>>
    where
        P: Serialize,
        T: Serialize + DeserializeOwned,
    {
        let owed = std::sync::atomic::AtomicBool::new(false);
        let written = self.write(tool, params, key, |conn, now| {
            let (value, order_no) = change(conn, now)?;
            let subscribed = order_events::changed(conn, now, &order_no)?;
            owed.store(subscribed, std::sync::atomic::Ordering::Relaxed);
            Ok(value)
        })?;
        if owed.load(std::sync::atomic::Ordering::Relaxed) {
            self.order_events.notify_one();
        }
        Ok(written)
    }

    /// The caller's order `order_no`, placed by a checkout, as the
    /// standard's order object, its permalink at `origin`.
    pub fn get_checkout_order(&self, order_no: &str, origin: &str) -> Result<serde_json::Value> {
        self.read(|conn, now| order_view::render(conn, now, order_no, origin))
    }

    /// The caller's cart as the standard's cart.
    pub fn get_ucp_cart(&self, id: &str) -> Result<serde_json::Value> {
        self.read(|conn, _| ucp_cart::get(conn, id))
    }

    /// Sets the caller's cart lines to `request`'s (a create when `id` is
    /// `None`); `key` as for [`Shop::create_checkout`].
    pub fn replace_ucp_cart(
        &self,
        id: Option<&str>,
        request: &serde_json::Value,
        key: Option<&str>,
    ) -> Result<Written<serde_json::Value>> {
        let keyed = serde_json::json!({ "id": id, "cart": request });
        self.write("ucp_replace_cart", &keyed, key, |conn, now| {
            ucp_cart::replace(conn, now, id, request)
        })
    }

    /// Empties the caller's cart `id`; `key` as for [`Shop::create_checkout`].
    pub fn cancel_ucp_cart(
        &self,
        id: &str,
        key: Option<&str>,
    ) -> Result<Written<serde_json::Value>> {
        self.write("ucp_cancel_cart", &id, key, |conn, now| {
            ucp_cart::cancel(conn, now, id)
        })
    }

    /// Binds the shopper's device key `jwk` to the caller; `token` is the
    /// signed-in request's access token (`None` in a shop without
    /// sign-in), which must be fresh and never used to bind before.
    pub fn bind_device(&self, jwk: &Jwk, token: Option<BindingToken<'_>>) -> Result<Device> {
        self.store.run(TxKind::Write, |tx| {
            let conn = UserConn::new(tx, self.caller.id());
            devices::bind(&conn, self.now(), jwk, token)
        })
    }

    /// Revokes the caller's device key `id`: nothing it signs from now on
    /// completes a checkout.
    pub fn revoke_device(&self, id: &str) -> Result<()> {
        self.store.run(TxKind::Write, |tx| {
            let conn = UserConn::new(tx, self.caller.id());
            devices::revoke(&conn, self.now(), id)
        })
    }

    /// Starts signing with a new key; the others stay published for one
    /// checkout lifetime, so checkouts already signed still verify.
    pub fn rotate_signing_key(&self) -> Result<Jwk> {
        self.store
            .run(TxKind::Write, |tx| signing_keys::rotate(tx, self.now()))
            .map(|key| key.public_jwk())
    }

    /// The stored first result of a `tool` call with `key` and these
    /// arguments, if there is one: what sending it again would return,
    /// found without running the call. A key used with other arguments is
    /// refused as the write would refuse it.
    pub fn replay<P, T>(
        &self,
        tool: &'static str,
        params: &P,
        key: &str,
    ) -> Result<Option<Written<T>>>
    where
        P: Serialize,
        T: DeserializeOwned,
    {
        let Some((key, hash)) = keyed(tool, params, Some(key))? else {
            return Ok(None);
        };
        let first = self.read(|conn, _| idempotency::lookup(conn, key, tool, &hash))?;
        first
            .map(|first| {
                Ok(Written {
                    value: serde_json::from_str(&first)?,
                    replayed: true,
                })
            })
            .transpose()
    }

    pub fn search_product(&self, p: &SearchProductParams) -> Result<SearchResult> {
        self.read_shared(|conn, _| product_search::search(conn, &self.search, p))
    }

    /// One SKU by code, if it exists.
    pub fn sku(&self, sku_code: &str) -> Result<Option<SkuHit>> {
        self.read_shared(|conn, _| catalog::find_sku(conn, &catalog::normalize_code(sku_code)))
    }

    pub fn query_cart(&self) -> Result<CartView> {
        self.read(|conn, _| cart::view(conn))
    }

    pub fn query_coupons(&self, p: &QueryCouponsParams) -> Result<CouponReport> {
        self.read(|conn, now| coupons::report(conn, now, p))
    }

    pub fn query_order(&self, p: &QueryOrderParams) -> Result<OrderList> {
        self.read(|conn, now| orders::query(conn, now, p))
    }

    pub fn query_logistics(&self, p: &QueryLogisticsParams) -> Result<Trace> {
        self.read(|conn, _| logistics::query(conn, p))
    }

    pub fn query_after_sale(&self, p: &QueryAfterSaleParams) -> Result<AfterSaleList> {
        self.read(|conn, _| after_sale::query(conn, p))
    }

    pub fn update_cart_item(
        &self,
        p: &UpdateCartItemParams,
        key: Option<&str>,
    ) -> Result<Written<CartUpdate>> {
        self.write("update_cart_item", p, key, |conn, now| {
            cart::update(conn, now, p)
        })
    }

    pub fn create_order(
        &self,
        p: &CreateOrderParams,
        key: Option<&str>,
    ) -> Result<Written<OrderView>> {
        self.write("create_order", p, key, |conn, now| {
            orders::create(conn, now, p)
        })
    }

    /// The caller's saved addresses (the distinct receivers of their
    /// orders), the most recently used first.
    pub fn saved_addresses(&self) -> Result<Vec<SavedAddress>> {
        self.read(|conn, _| addresses::saved(conn))
    }

    /// The saved addresses `create_order` would ask the shopper to choose
    /// from for `p`; `None` when it has nothing to ask.
    pub fn address_offer(&self, p: &CreateOrderParams) -> Result<Option<AddressOffer>> {
        self.read(|conn, now| addresses::to_offer(conn, now, p))
    }

    /// `create_order` of `p` sent to the saved address `address_id`. The
    /// key is stored against `p` as the caller sent it, so the same call
    /// sent again with its key returns this order, answered or not.
    pub fn create_order_to(
        &self,
        p: &CreateOrderParams,
        address_id: &str,
        key: Option<&str>,
    ) -> Result<Written<OrderView>> {
        self.write("create_order", p, key, |conn, now| {
            orders::create(conn, now, &addresses::sent_to(conn, p, address_id)?)
        })
    }

    pub fn pay_order(&self, p: &PayOrderParams, key: Option<&str>) -> Result<Written<Payment>> {
        self.write("pay_order", p, key, |conn, now| orders::pay(conn, now, p))
    }

    /// Opens a payment page for the caller to pay `amount` for `order_no`
    /// in the browser.
    pub fn open_payment_page(&self, order_no: &str, amount: Fen) -> Result<PaymentPage> {
        self.store.run(TxKind::Write, |tx| {
            payment_pages::open(
                &UserConn::new(tx, self.caller.id()),
                self.now(),
                order_no,
                amount,
            )
        })
    }

    /// The payment page `id` while it can be shown, whoever asks: the
    /// browser that opens it carries no sign-in.
    pub fn payment_page(&self, id: &str) -> Result<Option<PaymentPage>> {
        self.read_shared(|conn, now| payment_pages::find(conn, now, id))
    }

    /// The shopper presses "pay" on page `id`.
    pub fn pay_on_page(&self, id: &str) -> Result<Option<PaymentPage>> {
        self.store.run(TxKind::Write, |tx| {
            payment_pages::pay_on(tx, self.now(), id)
        })
    }

    /// What the caller's `pay_order` round finds of page `id`.
    pub fn payment_page_state(&self, id: &str) -> Result<PageState> {
        self.read(|conn, now| payment_pages::state(conn, now, id))
    }

    /// `pay_order` taking the payment made on page `id`: the order is paid
    /// and the page's payment taken in one transaction, keyed like any
    /// `pay_order`.
    pub fn pay_order_on_page(
        &self,
        p: &PayOrderParams,
        page_id: &str,
        key: Option<&str>,
    ) -> Result<Written<Payment>> {
        self.write("pay_order", p, key, |conn, now| {
            let payment = orders::pay(conn, now, p)?;
            payment_pages::take(
                conn,
                now,
                page_id,
                &payment.order_no,
                payment.paid_amount_fen,
            )?;
            Ok(payment)
        })
    }

    pub fn cancel_order(
        &self,
        p: &CancelOrderParams,
        key: Option<&str>,
    ) -> Result<Written<Cancellation>> {
        self.write_order_change("cancel_order", p, key, |conn, now| {
            let cancellation = orders::cancel(conn, now, p)?;
            let order_no = cancellation.order_no.clone();
            Ok((cancellation, order_no))
        })
    }

    pub fn change_address(
        &self,
        p: &ChangeAddressParams,
        key: Option<&str>,
    ) -> Result<Written<AddressChange>> {
        self.write_order_change("change_address", p, key, |conn, now| {
            Ok((orders::change_address(conn, now, p)?, p.order_no.clone()))
        })
    }

    pub fn apply_after_sale(
        &self,
        p: &ApplyAfterSaleParams,
        key: Option<&str>,
    ) -> Result<Written<AfterSaleView>> {
        self.write_order_change("apply_after_sale", p, key, |conn, now| {
            Ok((after_sale::apply(conn, now, p)?, p.order_no.clone()))
        })
    }

    pub fn submit_ticket(
        &self,
        p: &SubmitTicketParams,
        key: Option<&str>,
    ) -> Result<Written<Ticket>> {
        self.write("submit_ticket", p, key, |conn, now| {
            tickets::submit(conn, now, p)
        })
    }

    pub fn preview_update_cart_item(&self, p: &UpdateCartItemParams) -> Result<Preview> {
        self.read(|conn, now| preview::cart(conn, &cart::plan_update(conn, now, p)?))
    }

    /// `create_order`'s preview for a caller the shop cannot ask mid-call:
    /// the order goes where the arguments or the latest order say.
    pub fn preview_create_order(&self, p: &CreateOrderParams) -> Result<Preview> {
        self.read(|conn, now| {
            preview::create_order(conn, &orders::plan_create(conn, now, p)?, None)
        })
    }

    /// `create_order`'s preview for a caller the shop can ask mid-call:
    /// when `create_order` would ask which saved address to use, the
    /// preview offers the same addresses and names none as chosen.
    pub fn preview_create_order_asking(&self, p: &CreateOrderParams) -> Result<Preview> {
        self.read(|conn, now| {
            let plan = orders::plan_create(conn, now, p)?;
            let offer = addresses::offer_for(conn, p, &plan)?;
            preview::create_order(conn, &plan, offer.as_ref())
        })
    }

    pub fn preview_pay_order(&self, p: &PayOrderParams) -> Result<Preview> {
        self.read(|conn, now| preview::pay_order(conn, &orders::plan_pay(conn, now, p)?))
    }

    pub fn preview_cancel_order(&self, p: &CancelOrderParams) -> Result<Preview> {
        self.read(|conn, now| preview::cancel_order(conn, &orders::plan_cancel(conn, now, p)?))
    }

    pub fn preview_change_address(&self, p: &ChangeAddressParams) -> Result<Preview> {
        self.read(|conn, now| {
            preview::change_address(conn, &orders::plan_change_address(conn, now, p)?)
        })
    }

    pub fn preview_apply_after_sale(&self, p: &ApplyAfterSaleParams) -> Result<Preview> {
        self.read(|conn, now| {
            preview::apply_after_sale(conn, &after_sale::plan_apply(conn, now, p)?)
        })
    }

    /// How many rows each table holds.
    pub fn stats(&self) -> Result<ShopStats> {
        self.read(|conn, _| {
            let count = |table: &str| -> Result<i64> {
                conn.query_row(
                    &format!("SELECT COUNT(*) FROM {table}"),
                    crate::store::params![],
                    |row| row.get(0),
                )
            };
            Ok(ShopStats {
                models: count("product")?,
                skus: count("sku")?,
                coupons: count("coupon")?,
                held_coupons: count("user_coupon")?,
                cart_lines: count("cart_item")?,
                orders: count("orders")?,
                order_lines: count("order_item")?,
                parcels: count("parcel")?,
                parcel_events: count("parcel_event")?,
                after_sales: count("after_sale")?,
                tickets: count("ticket")?,
            })
        })
    }
}

/// The standard's catalogue answers come from the shop's own search.
impl Catalogue for Shop {
    fn search(&self, params: &SearchProductParams) -> Result<SearchResult> {
        self.search_product(params)
    }

    fn sku(&self, code: &str) -> Result<Option<SkuHit>> {
        Shop::sku(self, code)
    }
}
