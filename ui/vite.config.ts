import { defineConfig } from "vite";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root,
  // Tauri serves the built page from its own origin; relative paths keep it portable.
  base: "./",
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "safari15",
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "happy-dom",
    // Times are shown in local time: tests pin the zone so they can pin the text.
    env: { TZ: "Asia/Shanghai" },
  },
});
