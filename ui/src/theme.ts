// Light / dark: the OS theme by default (prefers-color-scheme); a choice in
// the settings, or a test, sets `data-theme` on <html> to force one.

export type Theme = "system" | "light" | "dark";
export const THEMES: readonly Theme[] = ["system", "light", "dark"];
const STORAGE_KEY = "bitselect.theme";

export function loadTheme(storage: Pick<Storage, "getItem"> | undefined): Theme {
  const saved = storage?.getItem(STORAGE_KEY);
  return THEMES.find((theme) => theme === saved) ?? "system";
}

export function applyTheme(theme: Theme, storage?: Pick<Storage, "setItem">): void {
  const root = document.documentElement;
  if (theme === "system") root.removeAttribute("data-theme");
  else root.setAttribute("data-theme", theme);
  storage?.setItem(STORAGE_KEY, theme);
}
