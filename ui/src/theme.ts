// Light / dark: the OS theme by default (prefers-color-scheme); a choice in
// the settings (kept by the core with the other settings), or a test, sets
// `data-theme` on <html> to force one.

import type { Theme } from "./protocol";

export type { Theme };
export const THEMES: readonly Theme[] = ["system", "light", "dark"];

export function applyTheme(theme: Theme): void {
  const root = document.documentElement;
  if (theme === "system") root.removeAttribute("data-theme");
  else root.setAttribute("data-theme", theme);
}
