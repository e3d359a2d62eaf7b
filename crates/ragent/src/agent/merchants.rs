//! Adding a UCP merchant by its address: the app reads the merchant's
//! business profile at its origin and adds its commerce service as a
//! server of the settings, named after its host, untrusted until the user
//! says otherwise, with the merchant's origin recorded (where its keys are,
//! and the audience of every mandate). Signing in, if the merchant asks
//! for it, binds this device's key there.

use std::collections::BTreeSet;

use crate::agent::Agent;
use crate::error::AgentError;
use crate::mcp::config::{ServerConfig, ServerTransport, UcpMerchant};
use crate::mcp::import::{unique_name, valid_name};
use crate::settings_view::SettingsView;
use crate::ucp::profile;

impl Agent {
    /// Adds the merchant at `address` (any page of its site) and saves the
    /// settings; answers what the core now holds.
    pub async fn add_ucp_merchant(&self, address: &str) -> Result<SettingsView, AgentError> {
        let merchant = profile::fetch(address).await?;
        let mut settings = self.inner.settings();
        if let Some((server, _)) = settings.mcp_servers.iter().find(|(_, config)| {
            config
                .ucp
                .as_ref()
                .is_some_and(|ucp| ucp.origin == merchant.origin)
        }) {
            return Err(AgentError::MerchantAlreadyAdded {
                server: server.clone(),
            });
        }
        let host = url::Url::parse(&merchant.origin)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_else(|| "merchant".into());
        let taken: BTreeSet<String> = settings
            .mcp_servers
            .keys()
            .cloned()
            .chain(self.inner.builtin_names())
            .collect();
        let name = unique_name(&valid_name(&host), &taken);
        settings.mcp_servers.insert(
            name.clone(),
            ServerConfig {
                ucp: Some(UcpMerchant {
                    origin: merchant.origin.clone(),
                }),
                ..ServerConfig::untrusted(ServerTransport::Http {
                    url: merchant.mcp_endpoint.clone(),
                    headers: Default::default(),
                })
            },
        );
        self.save_settings(settings).await?;
        tracing::info!(server = %name, origin = %merchant.origin, "UCP merchant added");
        Ok(self.settings_view())
    }
}
