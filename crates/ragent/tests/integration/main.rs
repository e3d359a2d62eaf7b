//! The agent's stories, end to end: the real model client against a
//! scripted model server, the real shop over stdio, a real database.

#[allow(dead_code)] // not every helper is used by the stories written so far
mod support;

mod decisions;
mod restart;
mod shop_story;
