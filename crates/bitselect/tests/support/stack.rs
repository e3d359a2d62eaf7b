//! The stack a merchant runs, on loopback: a seeded database of the test
//! binary's PostgreSQL cluster with the iPhone 17's stock set, the
//! authorization server, shop instances and HAProxy in front of them.

use std::net::SocketAddr;

use tempfile::TempDir;
use test_support::balancer::Balancer;
use test_support::ports::HeldPort;

use super::IPHONE_17;
use super::oauth::AuthServer;
use super::postgres::{Database, cluster, seeded_database};
use super::shop_process::{Instance, start_instance};

pub struct Stack {
    /// The database in [`cluster`], dropped with the stack.
    pub database: Database,
    /// HAProxy's address, where shoppers connect.
    pub lb: SocketAddr,
    /// The MCP endpoint's URL through the balancer: the tokens' audience.
    pub resource: String,
    pub auth: AuthServer,
    pub instances: Vec<Instance>,
    pub balancer: Balancer,
    _dir: TempDir,
}

impl Stack {
    pub async fn start(instances: usize, iphone_stock: i64) -> Stack {
        Stack::start_each(iphone_stock, |database| {
            vec![cluster().url(database); instances]
        })
        .await
    }

    /// One instance for each URL `urls` gives for the database's name: a
    /// way to it of the test's own, for one.
    pub async fn start_each(iphone_stock: i64, urls: impl FnOnce(&str) -> Vec<String>) -> Stack {
        // The cluster and the shop's seeding block: off the async threads.
        let database = tokio::task::spawn_blocking(move || {
            let database = seeded_database();
            cluster().psql(
                &database,
                &format!("UPDATE sku SET stock = {iphone_stock} WHERE sku_code = '{IPHONE_17}'"),
            );
            database
        })
        .await
        .expect("a seeded database");
        let database_urls = urls(&database);
        let lb_port = HeldPort::bind();
        let lb = lb_port.addr();
        let resource = format!("http://{lb}{}", bitselect::MCP_PATH);
        let auth = AuthServer::start(&[&resource], 600).await;
        let mut started = Vec::new();
        for url in &database_urls {
            started.push(start_instance(url, &auth.issuer, &resource).await);
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let backends: Vec<SocketAddr> = started.iter().map(|i| i.addr).collect();
        let balancer = Balancer::start(dir.path(), &lb_port, &backends).await;
        Stack {
            database,
            lb,
            resource,
            auth,
            instances: started,
            balancer,
            _dir: dir,
        }
    }

    /// Runs SQL on the stack's database; panics if it fails.
    pub fn psql(&self, sql: &str) -> String {
        cluster().psql(&self.database, sql)
    }
}
