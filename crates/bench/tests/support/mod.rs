//! Running the bench binary as `scripts/bench` does, on a target
//! directory of the test's own, and reading back the part it wrote.

use std::path::Path;
use std::process::Command;

use bitselect_bench::results::Part;

/// Runs `bitselect-bench <args>` (it starts the shop binary beside it,
/// which scripts/test's workspace build makes) and reads the part it wrote
/// as `<part>.json`; panics with its output if it failed.
pub fn run_part(part: &str, args: &[&str]) -> Part {
    let bench = Path::new(env!("CARGO_BIN_EXE_bitselect-bench"));
    let shop = bench.with_file_name(format!("bitselect-mcp{}", std::env::consts::EXE_SUFFIX));
    assert!(
        shop.is_file(),
        "{} is missing: build it with `cargo build -p bitselect --bin bitselect-mcp`",
        shop.display()
    );
    let target = tempfile::tempdir().expect("temp dir");
    let output = Command::new(bench)
        .args(args)
        .env("CARGO_TARGET_DIR", target.path())
        .output()
        .expect("run bitselect-bench");
    assert!(
        output.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Part::read(&target.path().join(format!("bench-results/{part}.json")))
        .expect("the part's results")
}
