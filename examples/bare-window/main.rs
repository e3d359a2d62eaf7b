//! A bare Tauri window: one static page, no commands, no core, no shop. The
//! start-up benchmark launches it beside the app, built with the same
//! toolchain and profile, so that the app's start time and memory are read
//! as ratios to what any Tauri window costs on the machine.

fn main() {
    if let Err(error) = tauri::Builder::default().run(tauri::generate_context!(
        "examples/bare-window/tauri.conf.json"
    )) {
        eprintln!("bare window: {error}");
        std::process::exit(1);
    }
}
