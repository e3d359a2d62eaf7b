import { tauriApi } from "./api";
import { App } from "./views/app";

const root = document.getElementById("app");
if (root) {
  const app = new App({ api: tauriApi(), root });
  app.start().catch((error: unknown) => console.error("the app could not start", error));
}
