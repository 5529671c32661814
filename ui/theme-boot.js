// Runs before the page paints (a classic script in <head>), so a person who chose the
// light theme never sees a flash of the dark one. theme.js handles the switch itself.
try {
  if (localStorage.getItem("ducklm.theme") === "light") {
    document.documentElement.dataset.theme = "light";
  }
} catch {
  // Storage may be disabled; the dark default stands.
}
