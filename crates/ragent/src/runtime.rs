//! A runtime for the agent core: one thread of its own.
//!
//! A tool round is a chain of short steps handed from task to task: the
//! run, the HTTP connection streaming the model's answer, the MCP client's
//! request and the task reading the server's reply. On a multi-thread
//! runtime each hand-off may wake another worker thread, tens of
//! microseconds each on a small machine; on one thread the chain stays on
//! one core (figures in docs/benchmarks.md). The work is short, and the one user's sessions do not need more. The app's
//! windows run on their own thread either way.

use std::thread::JoinHandle;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// A current-thread tokio runtime on a thread named `agent-core`, running
/// until dropped. Open the [`Agent`](crate::Agent) on it: its runs and the
/// connections they open stay there.
#[derive(Debug)]
pub struct CoreRuntime {
    handle: Handle,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl CoreRuntime {
    pub fn start() -> std::io::Result<CoreRuntime> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("agent-core".into())
            .spawn(move || {
                // Drives every task spawned through the handle, until told
                // to stop (or the sender is gone); what is left is dropped
                // with the runtime.
                runtime.block_on(async {
                    let _ = stopped.await;
                });
            })?;
        Ok(CoreRuntime {
            handle,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Spawns here, or runs futures here with `Handle::block_on` from a
    /// thread outside any runtime.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }
}

impl Drop for CoreRuntime {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("the agent-core thread panicked");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_spawned_from_elsewhere_run_on_the_core_thread() {
        let core = CoreRuntime::start().unwrap();
        let name = core
            .handle()
            .block_on(core.handle().spawn(async {
                tokio::task::yield_now().await;
                std::thread::current().name().map(str::to_owned)
            }))
            .unwrap();
        assert_eq!(name.as_deref(), Some("agent-core"));
    }

    #[test]
    fn timers_run_while_the_core_lives_and_it_stops_when_dropped() {
        let core = CoreRuntime::start().unwrap();
        let slept = core.handle().block_on(async {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            true
        });
        assert!(slept);
        drop(core);
    }
}
