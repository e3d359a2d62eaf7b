//! The shop's SQLite schema, as versioned migrations (`PRAGMA user_version`):
//! beside the PostgreSQL one (`postgres_schema.rs`); a test holds the two
//! to the same tables and columns.

/// Each entry moves the schema one version up; entry `i` leads to version
/// `i + 1`. Never edit a released entry: append a new one.
pub(super) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE product (
    spu_code     TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    category     TEXT NOT NULL,
    sub_category TEXT NOT NULL,
    brand        TEXT NOT NULL,
    brand_owner  TEXT NOT NULL,
    status       TEXT NOT NULL,
    specs        TEXT NOT NULL,   -- JSON object shared by every SKU of the model
    tags         TEXT NOT NULL    -- JSON array of strings
);

CREATE TABLE sku (
    sku_code  TEXT PRIMARY KEY,
    spu_code  TEXT NOT NULL REFERENCES product (spu_code),
    name      TEXT NOT NULL,
    specs     TEXT NOT NULL,      -- JSON object: what differs from sibling SKUs
    price_fen INTEGER NOT NULL CHECK (price_fen >= 0),
    stock     INTEGER NOT NULL CHECK (stock >= 0),
    status    TEXT NOT NULL CHECK (status IN ('在售', '已下架'))
);
CREATE INDEX sku_by_spu ON sku (spu_code);

CREATE TABLE coupon (
    code           TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('满减', '折扣')),
    threshold_fen  INTEGER NOT NULL CHECK (threshold_fen >= 0),
    amount_off_fen INTEGER,       -- 满减: fen off
    pay_percent    INTEGER,       -- 折扣: 92 = pay 92 %
    category       TEXT,          -- NULL: every category
    valid_from     INTEGER NOT NULL,
    valid_to       INTEGER NOT NULL,
    CHECK ((kind = '满减' AND amount_off_fen IS NOT NULL)
        OR (kind = '折扣' AND pay_percent BETWEEN 1 AND 99))
);

-- The demo user's coupons (version 2 gives them a user column).
CREATE TABLE user_coupon (
    code       TEXT PRIMARY KEY REFERENCES coupon (code),
    status     TEXT NOT NULL CHECK (status IN ('未使用', '已使用')),
    order_no   TEXT,
    claimed_at INTEGER NOT NULL,
    used_at    INTEGER
);

CREATE TABLE cart_item (
    sku_code        TEXT PRIMARY KEY REFERENCES sku (sku_code),
    quantity        INTEGER NOT NULL CHECK (quantity > 0),
    added_price_fen INTEGER NOT NULL,
    added_at        INTEGER NOT NULL
);

CREATE TABLE orders (
    order_no         TEXT PRIMARY KEY,
    status           TEXT NOT NULL
                     CHECK (status IN ('待支付', '已支付待发货', '已发货', '已签收', '已取消')),
    total_fen        INTEGER NOT NULL,
    discount_fen     INTEGER NOT NULL,
    pay_fen          INTEGER NOT NULL,
    coupon_code      TEXT,
    receiver_name    TEXT NOT NULL,
    receiver_phone   TEXT NOT NULL,
    receiver_address TEXT NOT NULL,
    tracking_no      TEXT UNIQUE,
    created_at       INTEGER NOT NULL,
    paid_at          INTEGER,
    shipped_at       INTEGER,
    received_at      INTEGER,
    cancelled_at     INTEGER
);
CREATE INDEX orders_by_created ON orders (created_at);

CREATE TABLE order_item (
    order_no  TEXT NOT NULL REFERENCES orders (order_no),
    line_no   INTEGER NOT NULL,
    sku_code  TEXT NOT NULL,
    sku_name  TEXT NOT NULL,
    price_fen INTEGER NOT NULL,
    quantity  INTEGER NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (order_no, line_no)
);

CREATE TABLE parcel (
    tracking_no TEXT PRIMARY KEY,
    order_no    TEXT NOT NULL REFERENCES orders (order_no)
);

CREATE TABLE parcel_event (
    tracking_no TEXT NOT NULL REFERENCES parcel (tracking_no),
    seq         INTEGER NOT NULL,
    at          INTEGER NOT NULL,
    location    TEXT NOT NULL,
    description TEXT NOT NULL,
    PRIMARY KEY (tracking_no, seq)
);

CREATE TABLE after_sale (
    after_sale_no TEXT PRIMARY KEY,
    order_no      TEXT NOT NULL REFERENCES orders (order_no),
    sku_code      TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('退货退款', '换货')),
    reason        TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('处理中', '已完成')),
    created_at    INTEGER NOT NULL,
    finished_at   INTEGER
);
-- One open request per order line, enforced by the database as well.
CREATE UNIQUE INDEX after_sale_one_open ON after_sale (order_no, sku_code)
    WHERE status = '处理中';

CREATE TABLE ticket (
    ticket_no   TEXT PRIMARY KEY,
    order_no    TEXT REFERENCES orders (order_no),
    topic       TEXT NOT NULL,
    description TEXT NOT NULL,
    status      TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);

-- Write tools' idempotency keys: a repeat returns the stored first result.
CREATE TABLE idempotency (
    key        TEXT PRIMARY KEY,
    tool       TEXT NOT NULL,
    args_hash  TEXT NOT NULL,
    result     TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE shop_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"#,
    USERS_MIGRATION,
    SEARCH_MIGRATION,
    PAYMENT_PAGE_MIGRATION,
    CATALOGUE_VERSION_MIGRATION,
    UCP_MIGRATION,
    ORDER_EVENTS_MIGRATION,
];
/// Version 2: users. Every row of a cart, coupon held, order, parcel,
/// after-sale, ticket and idempotency key belongs to a user; what a version 1
/// database holds goes to the demo user (id 1). The tables are rebuilt rather
/// than altered so that `user_id` is `NOT NULL` with no default: no row falls
/// to the demo user by omission. Order lines and parcel events belong to
/// their order and parcel, and are only reached through them.
const USERS_MIGRATION: &str = r#"
CREATE TABLE users (
    id           INTEGER PRIMARY KEY,
    sub          TEXT NOT NULL UNIQUE,  -- the subject an access token names
    display_name TEXT NOT NULL
);
INSERT INTO users (id, sub, display_name) VALUES (1, 'demo', '演示用户');

CREATE TABLE user_coupon_v2 (
    user_id    INTEGER NOT NULL REFERENCES users (id),
    code       TEXT NOT NULL REFERENCES coupon (code),
    status     TEXT NOT NULL CHECK (status IN ('未使用', '已使用')),
    order_no   TEXT,
    claimed_at INTEGER NOT NULL,
    used_at    INTEGER,
    PRIMARY KEY (user_id, code)
);
INSERT INTO user_coupon_v2 SELECT 1, code, status, order_no, claimed_at, used_at FROM user_coupon;
DROP TABLE user_coupon;
ALTER TABLE user_coupon_v2 RENAME TO user_coupon;

CREATE TABLE cart_item_v2 (
    user_id         INTEGER NOT NULL REFERENCES users (id),
    sku_code        TEXT NOT NULL REFERENCES sku (sku_code),
    quantity        INTEGER NOT NULL CHECK (quantity > 0),
    added_price_fen INTEGER NOT NULL,
    added_at        INTEGER NOT NULL,
    PRIMARY KEY (user_id, sku_code)
);
INSERT INTO cart_item_v2 SELECT 1, sku_code, quantity, added_price_fen, added_at FROM cart_item;
DROP TABLE cart_item;
ALTER TABLE cart_item_v2 RENAME TO cart_item;

-- Order numbers stay unique across users: the shop has one numbering.
CREATE TABLE orders_v2 (
    order_no         TEXT PRIMARY KEY,
    user_id          INTEGER NOT NULL REFERENCES users (id),
    status           TEXT NOT NULL
                     CHECK (status IN ('待支付', '已支付待发货', '已发货', '已签收', '已取消')),
    total_fen        INTEGER NOT NULL,
    discount_fen     INTEGER NOT NULL,
    pay_fen          INTEGER NOT NULL,
    coupon_code      TEXT,
    receiver_name    TEXT NOT NULL,
    receiver_phone   TEXT NOT NULL,
    receiver_address TEXT NOT NULL,
    tracking_no      TEXT UNIQUE,
    created_at       INTEGER NOT NULL,
    paid_at          INTEGER,
    shipped_at       INTEGER,
    received_at      INTEGER,
    cancelled_at     INTEGER
);
INSERT INTO orders_v2
    SELECT order_no, 1, status, total_fen, discount_fen, pay_fen, coupon_code, receiver_name,
           receiver_phone, receiver_address, tracking_no, created_at, paid_at, shipped_at,
           received_at, cancelled_at
    FROM orders;
DROP TABLE orders;
ALTER TABLE orders_v2 RENAME TO orders;
CREATE INDEX orders_by_user ON orders (user_id, created_at);

CREATE TABLE parcel_v2 (
    tracking_no TEXT PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users (id),
    order_no    TEXT NOT NULL REFERENCES orders (order_no)
);
INSERT INTO parcel_v2 SELECT tracking_no, 1, order_no FROM parcel;
DROP TABLE parcel;
ALTER TABLE parcel_v2 RENAME TO parcel;

CREATE TABLE after_sale_v2 (
    after_sale_no TEXT PRIMARY KEY,
    user_id       INTEGER NOT NULL REFERENCES users (id),
    order_no      TEXT NOT NULL REFERENCES orders (order_no),
    sku_code      TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('退货退款', '换货')),
    reason        TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('处理中', '已完成')),
    created_at    INTEGER NOT NULL,
    finished_at   INTEGER
);
INSERT INTO after_sale_v2
    SELECT after_sale_no, 1, order_no, sku_code, kind, reason, status, created_at, finished_at
    FROM after_sale;
DROP TABLE after_sale;
ALTER TABLE after_sale_v2 RENAME TO after_sale;
CREATE UNIQUE INDEX after_sale_one_open ON after_sale (order_no, sku_code)
    WHERE status = '处理中';
CREATE INDEX after_sale_by_user ON after_sale (user_id, created_at);

CREATE TABLE ticket_v2 (
    ticket_no   TEXT PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users (id),
    order_no    TEXT REFERENCES orders (order_no),
    topic       TEXT NOT NULL,
    description TEXT NOT NULL,
    status      TEXT NOT NULL,
    created_at  INTEGER NOT NULL
);
INSERT INTO ticket_v2
    SELECT ticket_no, 1, order_no, topic, description, status, created_at FROM ticket;
DROP TABLE ticket;
ALTER TABLE ticket_v2 RENAME TO ticket;

-- A key is its user's own: two users may send the same one.
CREATE TABLE idempotency_v2 (
    user_id    INTEGER NOT NULL REFERENCES users (id),
    key        TEXT NOT NULL,
    tool       TEXT NOT NULL,
    args_hash  TEXT NOT NULL,
    result     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, key)
);
INSERT INTO idempotency_v2 SELECT 1, key, tool, args_hash, result, created_at FROM idempotency;
DROP TABLE idempotency;
ALTER TABLE idempotency_v2 RENAME TO idempotency;
"#;

/// Version 3: a trigram keyword index of the catalogue, which version 5
/// drops (search moved to the shop's text engine, `crate::search`).
const SEARCH_MIGRATION: &str = r#"
CREATE VIRTUAL TABLE sku_search USING fts5 (
    sku_code UNINDEXED,
    body,
    tokenize = 'trigram case_sensitive 1'
);
"#;

/// Version 4: the online shop's payment pages (`payment_pages`): an
/// opaque id, whose user and order, the amount, when it expires, when the
/// shopper paid on it and when a `pay_order` round took that payment.
const PAYMENT_PAGE_MIGRATION: &str = r#"
CREATE TABLE payment_page (
    id         TEXT PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id),
    order_no   TEXT NOT NULL REFERENCES orders (order_no),
    amount_fen INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    paid_at    INTEGER,
    taken_at   INTEGER
);
CREATE INDEX payment_page_by_order ON payment_page (user_id, order_no);
"#;

/// Version 5: the catalogue version the shop's search index follows
/// (`crate::search`): raised by triggers whenever a model's or a SKU's
/// text changes, not when stock or a price does; the trigram index of
/// version 3 goes.
const CATALOGUE_VERSION_MIGRATION: &str = r#"
DROP TABLE IF EXISTS sku_search;

INSERT INTO shop_meta (key, value) VALUES ('catalogue_version', '1')
    ON CONFLICT (key) DO NOTHING;

CREATE TRIGGER product_inserted_raises_catalogue_version AFTER INSERT ON product
BEGIN
    UPDATE shop_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalogue_version';
END;
CREATE TRIGGER product_updated_raises_catalogue_version AFTER UPDATE ON product
BEGIN
    UPDATE shop_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalogue_version';
END;
CREATE TRIGGER product_deleted_raises_catalogue_version AFTER DELETE ON product
BEGIN
    UPDATE shop_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalogue_version';
END;
CREATE TRIGGER sku_inserted_raises_catalogue_version AFTER INSERT ON sku
BEGIN
    UPDATE shop_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalogue_version';
END;
CREATE TRIGGER sku_text_updated_raises_catalogue_version
    AFTER UPDATE OF sku_code, spu_code, name, specs ON sku
BEGIN
    UPDATE shop_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalogue_version';
END;
CREATE TRIGGER sku_deleted_raises_catalogue_version AFTER DELETE ON sku
BEGIN
    UPDATE shop_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'catalogue_version';
END;
"#;

/// Version 6: the commerce standard's tables (`crate::ucp`). The
/// merchant's signing keys, shared by every instance: the private key as
/// base64url PKCS#8, when it was made, and when it stopped being
/// published. Checkout sessions: whose, open or how it ended, the
/// platform's inputs (JSON), the order it placed, and when it expires.
/// Device keys: a user's public key (JWK) whose signature proves the
/// shopper's consent, bound once by a fresh sign-in's token (its id kept,
/// so no token binds twice), until revoked. Checkout mandates: each one
/// accepted (by its digest, so none is accepted twice), with the
/// merchant's signature it carried, the order it placed and the receipt
/// answered: the evidence of what the shopper signed. A completed session
/// keeps its receipt, which every later read answers.
const UCP_MIGRATION: &str = r#"
CREATE TABLE merchant_signing_key (
    kid        TEXT PRIMARY KEY,
    pkcs8      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    retired_at INTEGER
);

CREATE TABLE checkout_session (
    id         TEXT PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id),
    state      TEXT NOT NULL CHECK (state IN ('open', 'completed', 'canceled')),
    inputs     TEXT NOT NULL,
    cart_id    TEXT,
    order_no   TEXT REFERENCES orders (order_no),
    receipt    TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX checkout_session_by_user ON checkout_session (user_id);

CREATE TABLE device_key (
    kid        TEXT PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id),
    jwk        TEXT NOT NULL,
    token_id   TEXT UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE INDEX device_key_by_user ON device_key (user_id);

CREATE TABLE checkout_mandate (
    digest                 TEXT PRIMARY KEY,
    checkout_id            TEXT NOT NULL REFERENCES checkout_session (id),
    user_id                INTEGER NOT NULL REFERENCES users (id),
    device_kid             TEXT NOT NULL REFERENCES device_key (kid),
    mandate                TEXT NOT NULL,
    merchant_authorization TEXT NOT NULL,
    order_no               TEXT NOT NULL REFERENCES orders (order_no),
    receipt                TEXT NOT NULL,
    received_at            INTEGER NOT NULL
);
"#;

/// Version 7: the platforms told of an order's changes (the webhook the
/// platform that completed its checkout named, and the shop's origin it
/// was placed at), and the events owed to them: an outbox every instance
/// sends from, each event leased by one sender at a time, retried with
/// backoff until delivered or given up.
const ORDER_EVENTS_MIGRATION: &str = r#"
CREATE TABLE order_webhook (
    order_no   TEXT PRIMARY KEY REFERENCES orders (order_no),
    user_id    INTEGER NOT NULL REFERENCES users (id),
    url        TEXT NOT NULL,
    origin     TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE TABLE order_event (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    order_no     TEXT NOT NULL REFERENCES order_webhook (order_no),
    kind         TEXT NOT NULL CHECK (kind IN ('placed', 'updated')),
    created_at   INTEGER NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      INTEGER NOT NULL,
    leased_until INTEGER,
    delivered_at INTEGER,
    abandoned_at INTEGER,
    last_error   TEXT
);
CREATE INDEX order_event_owed ON order_event (next_at)
    WHERE delivered_at IS NULL AND abandoned_at IS NULL;
CREATE INDEX order_event_by_order ON order_event (order_no, id);
"#;

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;
