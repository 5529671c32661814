// Dark by default; the light theme is a choice remembered in this browser.

const STORAGE_KEY = "ducklm.theme";

function current() {
  return document.documentElement.dataset.theme === "light" ? "light" : "dark";
}

function apply(theme, button) {
  document.documentElement.dataset.theme = theme;
  // The button is a toggle: "pressed" means the light theme is on.
  button.setAttribute("aria-pressed", String(theme === "light"));
  button.title = theme === "light" ? "Switch to the dark theme" : "Switch to the light theme";
}

/** Wire the theme switch button. */
export function initTheme(button) {
  apply(current(), button);
  button.addEventListener("click", () => {
    const next = current() === "light" ? "dark" : "light";
    apply(next, button);
    try {
      localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // Without storage the choice lasts until the page reloads.
    }
  });
}
