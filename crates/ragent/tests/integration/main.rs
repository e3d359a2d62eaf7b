//! The agent's stories, end to end: the real model client against a
//! scripted model server, the real shop over stdio, a real database.

mod support;

mod agent_floors;
mod api;
mod damaged_database;
mod decisions;
mod definitions;
mod disk_full;
mod dying_server;
mod elicitation;
mod legacy_elicitation;
mod llm_client;
mod model_errors;
mod model_faults;
mod model_list;
mod previews;
mod progress;
mod reads;
mod regenerate;
mod restart;
mod secrets;
mod server_logs;
mod shop_story;
mod sign_in;
mod sign_in_discovery;
mod trust;
mod ucp_platform;
